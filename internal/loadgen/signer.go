package loadgen

import (
	"net/http"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// signRequest sets x-ms-date and signs req with SharedKeyLite through
// shared/auth, which signs exactly as aztables does
// (shared_policy_shared_key_credential.go; "Shared Key Lite authorization
// (Table service)" in the Azure Storage REST reference):
//
//	StringToSign = x-ms-date + "\n" + CanonicalizedResource
//	CanonicalizedResource = "/" + account + <path as encoded on the wire>
//	                        [+ "?comp=" + <decoded comp value>]
//
// A path-style endpoint therefore names the account twice
// (/devstoreaccount1/devstoreaccount1/t()). The date is passed in so a
// worker formats it once per second rather than once per request.
func signRequest(req *http.Request, account string, key []byte, date string) error {
	req.Header["X-Ms-Date"] = []string{date}
	return auth.SignSharedKeyLite(req, account, key)
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
