package auth

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
)

// authenticateSAS verifies an account SAS (ss/srt) or a table SAS (tn).
// The signature is checked before anything that costs a lookup, and before
// the time window, address and protocol, so a forged token learns nothing
// about the account.
func (v *Verifier) authenticateSAS(ctx context.Context, acct *accountEntry, r *Request) (*Principal, error) {
	p, err := parseSASParams(r.Query)
	if err != nil {
		return nil, err
	}
	sig, ok := decodeSignature(p.sig)
	if !ok {
		return nil, authFailed("Signature fields not well formed: sig is not a base64 HMAC-SHA256.")
	}
	if err := checkVersion(p.version); err != nil {
		return nil, err
	}
	_, isTable := r.Query["tn"]
	isAccount := p.services != "" || p.resourceTypes != ""
	switch {
	case isTable && isAccount:
		return nil, authFailed("Signature fields not well formed: a SAS is either an account SAS (ss, srt) or a table SAS (tn), not both.")
	case isTable:
		return v.verifyTableSAS(ctx, acct, r, p, &sig)
	case isAccount:
		return verifyAccountSAS(acct, r, p, &sig)
	}
	return nil, authFailed("Signature fields not well formed: the SAS has neither tn nor ss and srt.")
}

// verifyAccountSAS checks an account SAS ("Create an account SAS"):
//
//	accountname\nsp\nss\nsrt\nst\nse\nsip\nspr\nsv\n             before 2020-12-06
//	accountname\nsp\nss\nsrt\nst\nse\nsip\nspr\nsv\nses\n        2020-12-06 and later
//
// The trailing newline is part of the format.
func verifyAccountSAS(acct *accountEntry, r *Request, p *sasParams, sig *[sha256.Size]byte) (*Principal, error) {
	switch {
	case p.services == "":
		return nil, authFailed("Signature fields not well formed: the account SAS has no signed services (ss).")
	case p.resourceTypes == "":
		return nil, authFailed("Signature fields not well formed: the account SAS has no signed resource types (srt).")
	case !p.hasPermissions:
		return nil, authFailed("Signature fields not well formed: the account SAS has no signed permissions (sp).")
	case !p.hasExpiry:
		return nil, authFailed("Signature fields not well formed: the account SAS has no signed expiry (se).")
	}
	if err := checkServices(p.services); err != nil {
		return nil, err
	}
	resources, err := parseResourceTypes(p.resourceTypes)
	if err != nil {
		return nil, err
	}
	perms, err := parsePerms(p.permissions, accountPermAlphabet, "signed permissions")
	if err != nil {
		return nil, err
	}
	w, err := parseWindow(p)
	if err != nil {
		return nil, err
	}
	ips, err := parseSignedIP(p.ip)
	if err != nil {
		return nil, err
	}

	b := make([]byte, 0, 160)
	for _, f := range []string{acct.name, p.permissions, p.services, p.resourceTypes, p.start, p.expiry, p.ip, p.protocol, p.version} {
		b = append(b, f...)
		b = append(b, '\n')
	}
	base := len(b)
	withScope := p.version >= sasEncryptionScopeVersion
	if withScope {
		b = append(b, p.encryptionScope...)
		b = append(b, '\n')
	}
	matched := matchAny(acct.keys, b, sig)
	if !matched && withScope && p.encryptionScope == "" {
		// Some hand-written signers keep the older nine-field form with a
		// newer sv; without an encryption scope the two differ only in a
		// trailing newline, and both still need the key.
		matched = matchAny(acct.keys, b[:base], sig)
	}
	if !matched {
		return nil, authFailed("Signature did not match. String to sign used was %s", b)
	}

	// The token is genuine; now check what it allows. Azure: a token for
	// other services than the Table service is a service mismatch.
	if !strings.Contains(p.services, "t") {
		return nil, apierr.Newf(apierr.AuthorizationServiceMismatch, "The account SAS signed services %q do not include the Table service (t).", p.services)
	}
	if err := w.check(r.Now); err != nil {
		return nil, err
	}
	if err := checkSource(ips, p.ip, r); err != nil {
		return nil, err
	}
	if err := checkProtocol(p.protocol, r.HTTPS); err != nil {
		return nil, err
	}
	return &Principal{account: acct.name, scheme: SchemeAccountSAS, sas: &grant{perms: perms, resources: resources}}, nil
}

// verifyTableSAS checks a table (service) SAS ("Create a service SAS",
// Table service, version 2015-04-05 and later):
//
//	sp\nst\nse\n/table/account/tablename\nsi\nsip\nspr\nsv\nspk\nsrk\nepk\nerk
//
// "Table names must be lower-case" in the canonicalized resource; an
// older .NET SDK signed the name in its given case, which is tried second.
func (v *Verifier) verifyTableSAS(ctx context.Context, acct *accountEntry, r *Request, p *sasParams, sig *[sha256.Size]byte) (*Principal, error) {
	if p.table == "" {
		return nil, authFailed("Signature fields not well formed: the table SAS names no table (tn).")
	}
	if p.keys.hasStartRK && !p.keys.hasStartPK {
		return nil, authFailed("Signature fields not well formed: srk needs spk.")
	}
	if p.keys.hasEndRK && !p.keys.hasEndPK {
		return nil, authFailed("Signature fields not well formed: erk needs epk.")
	}
	var perms perm
	if p.hasPermissions {
		var err error
		if perms, err = parsePerms(p.permissions, tablePermAlphabet, "signed permissions"); err != nil {
			return nil, err
		}
	}
	w, err := parseWindow(p)
	if err != nil {
		return nil, err
	}
	ips, err := parseSignedIP(p.ip)
	if err != nil {
		return nil, err
	}

	lower := strings.ToLower(p.table)
	b := appendTableStringToSign(make([]byte, 0, 192), acct.name, lower, p)
	matched := matchAny(acct.keys, b, sig)
	if !matched && lower != p.table {
		matched = matchAny(acct.keys, appendTableStringToSign(nil, acct.name, p.table, p), sig)
	}
	if !matched {
		return nil, authFailed("Signature did not match. String to sign used was %s", b)
	}

	if r.Table != "" && !strings.EqualFold(r.Table, p.table) {
		return nil, apierr.Newf(apierr.AuthorizationFailure, "The SAS is for table %q, not %q.", p.table, r.Table)
	}
	if p.identifier != "" {
		if err := v.applyPolicy(ctx, acct.name, p, &w, &perms); err != nil {
			return nil, err
		}
	}
	if !w.hasExpiry {
		return nil, authFailed("Signature fields not well formed: neither the SAS nor its stored access policy sets an expiry.")
	}
	if perms == 0 {
		return nil, authFailed("Signature fields not well formed: neither the SAS nor its stored access policy sets permissions.")
	}
	if err := w.check(r.Now); err != nil {
		return nil, err
	}
	if err := checkSource(ips, p.ip, r); err != nil {
		return nil, err
	}
	if err := checkProtocol(p.protocol, r.HTTPS); err != nil {
		return nil, err
	}
	g := &grant{perms: perms, table: p.table, keys: p.keys}
	return &Principal{account: acct.name, scheme: SchemeTableSAS, sas: g}, nil
}

func appendTableStringToSign(b []byte, account, table string, p *sasParams) []byte {
	b = append(b, p.permissions...)
	b = append(b, '\n')
	b = append(b, p.start...)
	b = append(b, '\n')
	b = append(b, p.expiry...)
	b = append(b, '\n')
	b = append(b, "/table/"...)
	b = append(b, account...)
	b = append(b, '/')
	b = append(b, table...)
	for _, f := range []string{p.identifier, p.ip, p.protocol, p.version, p.keys.startPK, p.keys.startRK, p.keys.endPK} {
		b = append(b, '\n')
		b = append(b, f...)
	}
	b = append(b, '\n')
	return append(b, p.keys.endRK...)
}

// applyPolicy merges the stored access policy named by si into the token.
// Azure: the start, expiry and permissions may come from the URI or from
// the policy, "however, you cannot specify a given parameter on both". A
// policy that cannot be found (deleted, or its table gone) revokes the
// token.
func (v *Verifier) applyPolicy(ctx context.Context, account string, p *sasParams, w *window, perms *perm) error {
	if v.policies == nil {
		return authFailed("The signed identifier %q names a stored access policy, and none are configured.", p.identifier)
	}
	list, err := v.policies(ctx, account, p.table)
	if err != nil {
		if aerr, ok := apierr.As(err); ok {
			return aerr
		}
		return apierr.Wrap(apierr.InternalError, err)
	}
	var pol *model.SignedIdentifier
	for i := range list {
		if list[i].ID == p.identifier {
			pol = &list[i]
			break
		}
	}
	if pol == nil {
		return authFailed("The signed identifier %q is not a stored access policy of table %q.", p.identifier, p.table)
	}
	if !pol.Start.IsZero() {
		if w.hasStart {
			return authFailed("The signed start is given both in the SAS and in stored access policy %q.", p.identifier)
		}
		w.start, w.hasStart = pol.Start, true
	}
	if !pol.Expiry.IsZero() {
		if w.hasExpiry {
			return authFailed("The signed expiry is given both in the SAS and in stored access policy %q.", p.identifier)
		}
		w.expiry, w.hasExpiry = pol.Expiry, true
	}
	if pol.Permission != "" {
		if p.hasPermissions {
			return authFailed("The signed permissions are given both in the SAS and in stored access policy %q.", p.identifier)
		}
		pp, err := parsePerms(pol.Permission, tablePermAlphabet, "stored access policy permissions")
		if err != nil {
			return err
		}
		*perms = pp
	}
	return nil
}

// window is a SAS validity interval.
type window struct {
	start, expiry       time.Time
	hasStart, hasExpiry bool
}

func parseWindow(p *sasParams) (window, error) {
	var w window
	var err error
	if p.hasStart {
		if w.start, err = parseSASTime("signed start", p.start); err != nil {
			return w, err
		}
		w.hasStart = true
	}
	if p.hasExpiry {
		if w.expiry, err = parseSASTime("signed expiry", p.expiry); err != nil {
			return w, err
		}
		w.hasExpiry = true
	}
	return w, nil
}

// check refuses a token before its start ("the time at which the SAS
// becomes valid"; without st, the time the request arrives) or from its
// expiry on ("the time at which the SAS becomes invalid").
func (w window) check(now time.Time) error {
	if (w.hasStart && now.Before(w.start)) || !now.Before(w.expiry) {
		start := ""
		if w.hasStart {
			start = w.start.UTC().Format(http.TimeFormat)
		}
		return authFailed("Signature not valid in the specified time frame: Start [%s] - Expiry [%s] - Current [%s]",
			start, w.expiry.UTC().Format(http.TimeFormat), now.UTC().Format(http.TimeFormat))
	}
	return nil
}

func parseSignedIP(sip string) (ipRange, error) {
	if sip == "" {
		return ipRange{}, nil
	}
	return parseIPRange(sip)
}

func checkSource(ips ipRange, sip string, r *Request) error {
	if sip == "" || ips.contains(r.ClientIP) {
		return nil
	}
	return apierr.Newf(apierr.AuthorizationSourceIPMismatch, "The request comes from %s, outside the SAS signed IP %s.", r.ClientIP, sip)
}
