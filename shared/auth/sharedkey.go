package auth

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// Authorization header schemes ("Authorize with Shared Key": the header is
// "Authorization: SharedKey|SharedKeyLite <AccountName>:<Signature>").
const (
	schemeNameSharedKey     = "SharedKey"
	schemeNameSharedKeyLite = "SharedKeyLite"
)

// authenticateSharedKey verifies a Shared Key or Shared Key Lite
// Authorization header for the Table service.
func (v *Verifier) authenticateSharedKey(acct *accountEntry, r *Request, header string) (*Principal, error) {
	scheme, account, sigText, aerr := parseAuthorization(header)
	if aerr != nil {
		return nil, aerr
	}
	if account != acct.name {
		return nil, authFailed("The account %q in the Authorization header does not match the account %q the request addresses.", account, acct.name)
	}
	date, aerr := checkDate(r)
	if aerr != nil {
		return nil, aerr
	}
	sig, ok := decodeSignature(sigText)
	if !ok {
		return nil, authFailed("The MAC signature found in the HTTP request '%s' is not a base64 HMAC-SHA256.", sigText)
	}

	// The canonicalized resource holds the path exactly as it came on the
	// wire, never a decoded or re-encoded spelling of it: "any portion of
	// the CanonicalizedResource string that is derived from the resource's
	// URI should be encoded exactly as it is in the URI". Accepting another
	// spelling would let a signature for one wire path authorize another
	// (the one for 'x y', sent as x%20y, would sign the literal path of the
	// entity 'x%20y', sent as x%2520y).
	comp := compParam(r.Query)
	buf := make([]byte, 0, 160+len(r.SignedPath))
	signs := func(path string) bool {
		buf = appendSharedKeyStringToSign(buf[:0], scheme, r, date, acct.name, path, comp)
		return matchAny(acct.keys, buf, &sig)
	}
	matched := false
paths:
	for _, signed := range append([]string{r.SignedPath}, r.AltSignedPaths...) {
		if matched = signs(signed); matched {
			break
		}
		if !r.PathDecoded {
			continue
		}
		for _, path := range decodedPathSpellings(signed) {
			if matched = signs(path); matched {
				break paths
			}
		}
	}
	if matched {
		if scheme == SchemeSharedKey {
			return acct.sharedKey, nil
		}
		return acct.sharedKeyLite, nil
	}
	// Like Azure, name the string-to-sign so a developer can compare it
	// with what the client signed; it holds nothing secret. Other paths
	// may have been tried since, so it is built again for the path sent.
	if r.PathDecoded || len(r.AltSignedPaths) > 0 {
		buf = appendSharedKeyStringToSign(buf[:0], scheme, r, date, acct.name, r.SignedPath, comp)
	}
	return nil, authFailed("The MAC signature found in the HTTP request '%s' is not the same as any computed signature. Server used following string to sign: '%s'.", sigText, buf)
}

// parseAuthorization splits "SharedKey account:signature". A scheme the
// service does not implement is an authentication failure (403); a Shared
// Key header that is not "account:signature" is malformed (400
// InvalidAuthenticationInfo).
func parseAuthorization(h string) (scheme Scheme, account, sig string, err *apierr.Error) {
	h = strings.TrimSpace(h)
	name, cred, _ := strings.Cut(h, " ")
	switch name {
	case schemeNameSharedKey:
		scheme = SchemeSharedKey
	case schemeNameSharedKeyLite:
		scheme = SchemeSharedKeyLite
	case "":
		return 0, "", "", apierr.Newf(apierr.InvalidAuthenticationInfo, "The Authorization header is empty.")
	default:
		return 0, "", "", authFailed("Authentication scheme %s is not supported.", name)
	}
	account, sig, ok := strings.Cut(strings.TrimSpace(cred), ":")
	if !ok || account == "" || sig == "" {
		return 0, "", "", apierr.Newf(apierr.InvalidAuthenticationInfo, "The Authorization header must be %q.", name+" account:signature")
	}
	return scheme, account, sig, nil
}

// checkDate returns the date header value that was signed: x-ms-date when
// present, otherwise Date ("if both headers are specified on the request,
// the value of x-ms-date is used"). The request is refused when the date is
// missing, unparseable, or more than MaxClockSkew from r.Now either way.
func checkDate(r *Request) (string, *apierr.Error) {
	// Header keys are spelled canonically: Get then need not build the
	// canonical key, a string of its own, on every request.
	date := r.Header.Get("X-Ms-Date")
	name := "x-ms-date"
	if date == "" {
		date = r.Header.Get("Date")
		name = "Date"
	}
	if date == "" {
		return "", authFailed("The request has neither an x-ms-date nor a Date header.")
	}
	t, err := http.ParseTime(date)
	if err != nil {
		return "", authFailed("The %s header %q is not a valid HTTP date.", name, date)
	}
	skew := r.Now.Sub(t)
	if skew > MaxClockSkew {
		return "", authFailed("Request date header too old: '%s'.", date)
	}
	if skew < -MaxClockSkew {
		return "", authFailed("Request date header too far in the future: '%s'.", date)
	}
	return date, nil
}

// appendSharedKeyStringToSign builds the Table service string-to-sign:
//
//	SharedKey:     VERB\nContent-MD5\nContent-Type\nDate\nCanonicalizedResource
//	SharedKeyLite: Date\nCanonicalizedResource
//
// CanonicalizedResource is "/" + account + path, plus "?comp=" + value when
// the query has a comp parameter ("Shared Key format for the Table
// service").
func appendSharedKeyStringToSign(b []byte, scheme Scheme, r *Request, date, account, path string, comp *string) []byte {
	if scheme == SchemeSharedKey {
		b = append(b, r.Method...)
		b = append(b, '\n')
		b = append(b, r.Header.Get("Content-Md5")...)
		b = append(b, '\n')
		b = append(b, r.Header.Get("Content-Type")...)
		b = append(b, '\n')
	}
	b = append(b, date...)
	b = append(b, '\n')
	return appendCanonicalizedResource(b, account, path, comp)
}

// compParam returns the comp query parameter for the canonicalized
// resource, or nil without one. The SDKs test for presence, so an empty
// "comp=" still signs "?comp=".
func compParam(q url.Values) *string {
	if v, ok := q["comp"]; ok && len(v) > 0 {
		return &v[0]
	}
	return nil
}

func appendCanonicalizedResource(b []byte, account, path string, comp *string) []byte {
	b = append(b, '/')
	b = append(b, account...)
	if path == "" {
		// A slash names the root when the URL has no path (Go aztables
		// signs "/" in that case).
		path = "/"
	}
	b = append(b, path...)
	if comp != nil {
		b = append(b, "?comp="...)
		b = append(b, *comp...)
	}
	return b
}
