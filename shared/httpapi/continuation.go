package httpapi

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// Continuation tokens are opaque to clients ("Query timeout and
// pagination"): NextPartitionKey, NextRowKey and NextTableName. tablebridge
// writes them as Azure does, "1!<n>!<base64>", with URL-safe base64 of the
// UTF-8 key, so any Unicode key, and the empty key, survives headers and
// query strings. The "1!" prefix also keeps a token for an empty key from
// being empty, which the SDKs would read as "no more pages".
//
// A token is also checked for what it holds: the service only ever hands
// out the keys of entities it stored and the names of tables it has, so a
// token that decodes to anything else (a 2,000-character RowKey, a control
// character, a table name no table can have) is forged or corrupt and is
// refused with 400 before it reaches a store, whichever store it is.

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
	// Strict: one spelling per key, so a token that decodes is the
	// service's own encoding of that key.
	b, err := base64.RawURLEncoding.Strict().DecodeString(enc)
	if err != nil {
		return "", badToken()
	}
	return string(b), nil
}

func badToken() error {
	return apierr.Newf(apierr.InvalidInput, "The continuation token is not one this service issued.")
}

// entityCursor reads the NextPartitionKey and NextRowKey of a Query
// Entities request: nil without a NextPartitionKey (a NextRowKey alone
// resumes nothing, as the SDKs never send one alone).
func entityCursor(q url.Values) (*tables.Continuation, error) {
	npk := q.Get("NextPartitionKey")
	if npk == "" {
		return nil, nil
	}
	pk, err := decodeToken(npk)
	if err != nil {
		return nil, err
	}
	rk := ""
	if nrk := q.Get("NextRowKey"); nrk != "" {
		if rk, err = decodeToken(nrk); err != nil {
			return nil, err
		}
	}
	if model.ValidateKey(pk, false) != nil || model.ValidateKey(rk, true) != nil {
		return nil, badToken()
	}
	return &tables.Continuation{PartitionKey: pk, RowKey: rk}, nil
}

// tableCursor reads the NextTableName of a Query Tables request, "" for
// none.
func tableCursor(q url.Values) (string, error) {
	tok := q.Get("NextTableName")
	if tok == "" {
		return "", nil
	}
	name, err := decodeToken(tok)
	if err != nil {
		return "", err
	}
	if model.ValidateTableName(name) != nil {
		return "", badToken()
	}
	return name, nil
}
