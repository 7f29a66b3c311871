package loadgen

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// sharedKeyLite signs requests the way aztables' sharedKeyCredPolicy does
// (shared_policy_shared_key_credential.go), following "Shared Key Lite
// authorization (Table service)" in the Azure Storage REST reference:
//
//	StringToSign = x-ms-date + "\n" + CanonicalizedResource
//	CanonicalizedResource = "/" + account + <path as encoded on the wire>
//	                        [+ "?comp=" + <decoded comp value>]
//
// A path-style endpoint therefore names the account twice
// (/devstoreaccount1/devstoreaccount1/t()).
//
// shared/auth exports no signer yet, so this small private one lives here.
// One signer belongs to one worker: it keeps its HMAC state and buffers and is
// not safe for concurrent use, which is what makes signing allocation-light.
type sharedKeyLite struct {
	prefix string // "SharedKeyLite <account>:"
	mac    hash.Hash
	msg    []byte
	sum    []byte
	out    []byte
}

func newSharedKeyLite(account string, key []byte) *sharedKeyLite {
	return &sharedKeyLite{
		prefix: "SharedKeyLite " + account + ":",
		mac:    hmac.New(sha256.New, key),
		// The account is written into every canonicalized resource; keep it
		// in the message buffer's reach.
		msg: make([]byte, 0, 256),
		sum: make([]byte, 0, sha256.Size),
		out: make([]byte, 0, len(account)+64),
	}
}

// stringToSign appends the SharedKeyLite string-to-sign for a request to b.
func stringToSign(b []byte, account, date, escapedPath, rawQuery string) []byte {
	b = append(b, date...)
	b = append(b, '\n', '/')
	b = append(b, account...)
	if escapedPath == "" {
		// A slash is required to indicate the root path.
		b = append(b, '/')
	} else {
		b = append(b, escapedPath...)
	}
	if strings.Contains(rawQuery, "comp=") {
		// Only the comp parameter is part of the Lite canonicalized
		// resource, decoded, and only its first value.
		if q, err := url.ParseQuery(rawQuery); err == nil {
			if comp, ok := q["comp"]; ok {
				b = append(b, "?comp="...)
				b = append(b, comp[0]...)
			}
		}
	}
	return b
}

// authorization returns the Authorization header value for a request.
func (s *sharedKeyLite) authorization(account, date, escapedPath, rawQuery string) string {
	s.msg = stringToSign(s.msg[:0], account, date, escapedPath, rawQuery)
	s.mac.Reset()
	s.mac.Write(s.msg)
	s.sum = s.mac.Sum(s.sum[:0])
	s.out = append(s.out[:0], s.prefix...)
	s.out = base64.StdEncoding.AppendEncode(s.out, s.sum)
	return string(s.out)
}

// sign sets x-ms-date and Authorization on req, signing its URL as it will
// go on the wire (URL.EscapedPath, exactly what aztables signs).
func (s *sharedKeyLite) sign(req *http.Request, account, date string) {
	req.Header["X-Ms-Date"] = []string{date}
	req.Header["Authorization"] = []string{s.authorization(account, date, req.URL.EscapedPath(), req.URL.RawQuery)}
}

// dateCache formats x-ms-date (RFC 1123, GMT) at most once per second.
type dateCache struct {
	unix int64
	text string
	now  func() time.Time
}

func (d *dateCache) get() string {
	t := d.now().UTC()
	if sec := t.Unix(); sec != d.unix || d.text == "" {
		d.unix = sec
		d.text = t.Format(http.TimeFormat)
	}
	return d.text
}
