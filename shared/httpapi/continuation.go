package httpapi

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// Continuation tokens are opaque to clients ("Query timeout and
// pagination"): NextPartitionKey, NextRowKey and NextTableName. tablebridge
// writes them as Azure does, "1!<n>!<base64>", with URL-safe base64 of the
// UTF-8 key, so any Unicode key, and the empty key, survives headers and
// query strings. The "1!" prefix also keeps a token for an empty key from
// being empty, which the SDKs would read as "no more pages".

func encodeToken(key string) string {
	enc := base64.RawURLEncoding.EncodeToString([]byte(key))
	return "1!" + strconv.Itoa(len(enc)) + "!" + enc
}

func decodeToken(tok string) (string, error) {
	rest, ok := strings.CutPrefix(tok, "1!")
	if !ok {
		return "", badToken()
	}
	n, enc, ok := strings.Cut(rest, "!")
	if !ok {
		return "", badToken()
	}
	if l, err := strconv.Atoi(n); err != nil || l != len(enc) {
		return "", badToken()
	}
	b, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return "", badToken()
	}
	return string(b), nil
}

func badToken() error {
	return apierr.Newf(apierr.InvalidInput, "The continuation token is not one this service issued.")
}
