package auth

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultSASVersion is the sv the Table SDKs put in the tokens they build
// (Go aztables, JS, Python and .NET all use 2019-02-02).
const DefaultSASVersion = "2019-02-02"

// sasTimeFormat is how the SDKs write st and se.
const sasTimeFormat = "2006-01-02T15:04:05Z"

// SignSharedKeyLite signs req the way the Go, JS and .NET Table SDKs do:
// it sets x-ms-date when absent and adds
// "Authorization: SharedKeyLite account:signature" over
// "x-ms-date\n/account<path as sent>[?comp=value]". Set x-ms-date yourself
// for a reproducible signature.
func SignSharedKeyLite(req *http.Request, account string, key []byte) error {
	return signRequest(req, SchemeSharedKeyLite, account, key)
}

// SignSharedKey signs req the way the Python Table SDK does, with the full
// Table service Shared Key string-to-sign
// "VERB\nContent-MD5\nContent-Type\nx-ms-date\n/account<path>[?comp=value]".
func SignSharedKey(req *http.Request, account string, key []byte) error {
	return signRequest(req, SchemeSharedKey, account, key)
}

func signRequest(req *http.Request, scheme Scheme, account string, key []byte) error {
	if account == "" || len(key) == 0 {
		return errors.New("auth: signing needs an account name and a key")
	}
	if req.URL == nil {
		return errors.New("auth: request has no URL")
	}
	date := req.Header.Get("x-ms-date")
	if date == "" {
		date = time.Now().UTC().Format(http.TimeFormat)
		req.Header.Set("x-ms-date", date)
	}
	r := Request{Method: req.Method, Header: req.Header}
	// The client sends EscapedPath on the wire (via RequestURI), so that is
	// what it signs, exactly as aztables does.
	b := appendSharedKeyStringToSign(nil, scheme, &r, date, account, req.URL.EscapedPath(), compParam(req.URL.Query()))
	name := schemeNameSharedKeyLite
	if scheme == SchemeSharedKey {
		name = schemeNameSharedKey
	}
	req.Header.Set("Authorization", name+" "+account+":"+newMACKey(key).sign(string(b)))
	return nil
}

// AccountSASValues describes an account SAS to build.
type AccountSASValues struct {
	Version         string // sv; DefaultSASVersion when empty
	Services        string // ss; "t" when empty
	ResourceTypes   string // srt: any of "sco"
	Permissions     string // sp, used as given (the SDKs order it "rwdlacup")
	Start           time.Time
	Expiry          time.Time
	IPRange         string // sip: "addr" or "lo-hi"
	Protocol        string // spr: "", "https" or "https,http"
	EncryptionScope string // ses; signed from version 2020-12-06
}

// NewAccountSAS builds an account SAS token as the SDKs do. Encode the
// result to get the query string (url.Values.Encode sorts by key, as the Go
// SDK's Encode does).
func NewAccountSAS(account string, key []byte, v AccountSASValues) (url.Values, error) {
	if account == "" || len(key) == 0 {
		return nil, errors.New("auth: an account SAS needs an account name and a key")
	}
	if v.Expiry.IsZero() || v.Permissions == "" || v.ResourceTypes == "" {
		return nil, errors.New("auth: an account SAS needs an expiry, permissions and resource types")
	}
	if v.Version == "" {
		v.Version = DefaultSASVersion
	}
	if v.Services == "" {
		v.Services = "t"
	}
	start, expiry := formatSASTime(v.Start), formatSASTime(v.Expiry)
	fields := []string{account, v.Permissions, v.Services, v.ResourceTypes, start, expiry, v.IPRange, v.Protocol, v.Version}
	withScope := v.Version >= sasEncryptionScopeVersion
	if withScope {
		fields = append(fields, v.EncryptionScope)
	}
	sts := strings.Join(fields, "\n") + "\n"

	q := url.Values{}
	setIf(q, "sv", v.Version)
	setIf(q, "ss", v.Services)
	setIf(q, "srt", v.ResourceTypes)
	setIf(q, "sp", v.Permissions)
	setIf(q, "st", start)
	setIf(q, "se", expiry)
	setIf(q, "sip", v.IPRange)
	setIf(q, "spr", v.Protocol)
	if withScope {
		setIf(q, "ses", v.EncryptionScope)
	}
	q.Set("sig", newMACKey(key).sign(sts))
	return q, nil
}

// TableSASValues describes a table (service) SAS to build. Empty strings
// are left out of the token, as the SDKs leave them out.
type TableSASValues struct {
	Version           string // sv; DefaultSASVersion when empty
	Table             string // tn
	Permissions       string // sp: any of "raud"; may come from the policy instead
	Start             time.Time
	Expiry            time.Time // may come from the policy instead
	Identifier        string    // si: a stored access policy of the table
	IPRange           string
	Protocol          string
	StartPartitionKey string
	StartRowKey       string
	EndPartitionKey   string
	EndRowKey         string
}

// NewTableSAS builds a table SAS token as the SDKs do: the canonicalized
// resource is "/table/<account>/<lower-case table>".
func NewTableSAS(account string, key []byte, v TableSASValues) (url.Values, error) {
	if account == "" || len(key) == 0 {
		return nil, errors.New("auth: a table SAS needs an account name and a key")
	}
	if v.Table == "" {
		return nil, errors.New("auth: a table SAS needs a table name")
	}
	if v.Identifier == "" && (v.Expiry.IsZero() || v.Permissions == "") {
		return nil, errors.New("auth: a table SAS without a stored access policy needs an expiry and permissions")
	}
	if v.Version == "" {
		v.Version = DefaultSASVersion
	}
	start, expiry := formatSASTime(v.Start), formatSASTime(v.Expiry)
	sts := strings.Join([]string{
		v.Permissions, start, expiry,
		"/table/" + account + "/" + strings.ToLower(v.Table),
		v.Identifier, v.IPRange, v.Protocol, v.Version,
		v.StartPartitionKey, v.StartRowKey, v.EndPartitionKey, v.EndRowKey,
	}, "\n")

	q := url.Values{}
	setIf(q, "sv", v.Version)
	setIf(q, "tn", v.Table)
	setIf(q, "sp", v.Permissions)
	setIf(q, "st", start)
	setIf(q, "se", expiry)
	setIf(q, "si", v.Identifier)
	setIf(q, "sip", v.IPRange)
	setIf(q, "spr", v.Protocol)
	setIf(q, "spk", v.StartPartitionKey)
	setIf(q, "srk", v.StartRowKey)
	setIf(q, "epk", v.EndPartitionKey)
	setIf(q, "erk", v.EndRowKey)
	q.Set("sig", newMACKey(key).sign(sts))
	return q, nil
}

func formatSASTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(sasTimeFormat)
}

func setIf(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}
