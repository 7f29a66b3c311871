package auth

import (
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// SAS versions where the string-to-sign changed.
const (
	// sasMinVersion: account SAS exists from 2015-04-05, and the table SAS
	// string-to-sign gained signedIP and signedProtocol then. Older tokens
	// are refused rather than verified with a format that would ignore sip
	// and spr.
	sasMinVersion = "2015-04-05"
	// sasEncryptionScopeVersion: the account SAS string-to-sign gains
	// signedEncryptionScope (ses) from 2020-12-06.
	sasEncryptionScopeVersion = "2020-12-06"
)

// sasParams are the SAS query parameters, as received (URL-decoded). The
// strings-to-sign are built from these exact values, because "fields
// included in the string-to-sign must be URL-decoded" and nothing else:
// re-formatting a time would break a valid signature.
type sasParams struct {
	version         string // sv
	services        string // ss (account SAS)
	resourceTypes   string // srt (account SAS)
	table           string // tn (table SAS)
	permissions     string // sp
	start, expiry   string // st, se
	ip              string // sip
	protocol        string // spr
	identifier      string // si (table SAS)
	encryptionScope string // ses (account SAS, 2020-12-06+)
	sig             string
	keys            keyRange

	hasPermissions, hasStart, hasExpiry bool
}

// sasParamNames are the parameters read from the query; each may appear at
// most once, since a repeated parameter would leave it open which value was
// signed.
var sasParamNames = []string{"sv", "ss", "srt", "tn", "sp", "st", "se", "sip", "spr", "si", "ses", "sig", "spk", "srk", "epk", "erk"}

// parseSASParams reads the SAS parameters from q.
func parseSASParams(q url.Values) (*sasParams, error) {
	for _, name := range sasParamNames {
		if len(q[name]) > 1 {
			return nil, authFailed("The SAS parameter %s appears more than once.", name)
		}
		// The strings-to-sign join fields with line breaks, so a field that
		// held one could pass for two: refusing them keeps every token's
		// string-to-sign its own.
		if len(q[name]) == 1 && strings.IndexByte(q[name][0], '\n') >= 0 {
			return nil, authFailed("Signature fields not well formed: the SAS parameter %s holds a line break.", name)
		}
	}
	get := func(name string) (string, bool) {
		v, ok := q[name]
		if !ok {
			return "", false
		}
		return v[0], true
	}
	p := &sasParams{}
	p.version, _ = get("sv")
	p.services, _ = get("ss")
	p.resourceTypes, _ = get("srt")
	p.table, _ = get("tn")
	p.permissions, p.hasPermissions = get("sp")
	p.start, p.hasStart = get("st")
	p.expiry, p.hasExpiry = get("se")
	p.ip, _ = get("sip")
	p.protocol, _ = get("spr")
	p.identifier, _ = get("si")
	p.encryptionScope, _ = get("ses")
	p.sig, _ = get("sig")
	p.keys.startPK, p.keys.hasStartPK = get("spk")
	p.keys.startRK, p.keys.hasStartRK = get("srk")
	p.keys.endPK, p.keys.hasEndPK = get("epk")
	p.keys.endRK, p.keys.hasEndRK = get("erk")
	// An empty st or se is "not specified": SDKs never send one, and it
	// signs the same as an absent one.
	p.hasStart = p.hasStart && p.start != ""
	p.hasExpiry = p.hasExpiry && p.expiry != ""
	p.hasPermissions = p.hasPermissions && p.permissions != ""
	return p, nil
}

// checkVersion validates sv: a date, no older than sasMinVersion. Versions
// compare as strings because they are all YYYY-MM-DD.
func checkVersion(sv string) error {
	if sv == "" {
		return authFailed("The SAS has no signed version (sv).")
	}
	if !isVersion(sv) {
		return authFailed("The SAS signed version %q is not a version.", sv)
	}
	if sv < sasMinVersion {
		return apierr.Newf(apierr.InvalidVersionForSAS, "SAS version %s is older than %s, the oldest this service verifies.", sv, sasMinVersion)
	}
	return nil
}

func isVersion(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 4 || i == 7 {
			continue
		}
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// sasTimeLayouts are the ISO 8601 UTC forms Azure accepts for st and se
// ("YYYY-MM-DD", "YYYY-MM-DDThh:mmTZD", "YYYY-MM-DDThh:mm:ssTZD"); RFC 3339
// also covers fractional seconds, which the JS SDK can emit.
var sasTimeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02"}

func parseSASTime(name, s string) (time.Time, error) {
	for _, layout := range sasTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, authFailed("The SAS %s %q is not an ISO 8601 UTC time.", name, s)
}

// ipRange is an inclusive sip range; a single address has lo == hi.
type ipRange struct {
	lo, hi netip.Addr
}

// parseIPRange parses sip: "addr" or "lo-hi", IPv4 or IPv6 (both ends of
// one family).
func parseIPRange(s string) (ipRange, error) {
	loText, hiText, isRange := strings.Cut(s, "-")
	lo, err := netip.ParseAddr(strings.TrimSpace(loText))
	if err != nil {
		return ipRange{}, authFailed("The SAS signed IP %q is not an address or range.", s)
	}
	hi := lo
	if isRange {
		if hi, err = netip.ParseAddr(strings.TrimSpace(hiText)); err != nil {
			return ipRange{}, authFailed("The SAS signed IP %q is not an address or range.", s)
		}
	}
	lo, hi = lo.Unmap().WithZone(""), hi.Unmap().WithZone("")
	if lo.Is4() != hi.Is4() || lo.Compare(hi) > 0 {
		return ipRange{}, authFailed("The SAS signed IP range %q is empty.", s)
	}
	return ipRange{lo: lo, hi: hi}, nil
}

func (r ipRange) contains(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.Unmap().WithZone("")
	return a.Is4() == r.lo.Is4() && r.lo.Compare(a) <= 0 && a.Compare(r.hi) <= 0
}

// checkProtocol applies spr: "https" (HTTPS only) or "https,http" (both,
// the default). "HTTP only is not a permitted value."
func checkProtocol(spr string, https bool) error {
	switch spr {
	case "", "https,http":
		return nil
	case "https":
		if !https {
			return apierr.Newf(apierr.AuthorizationProtocolMismatch, "The SAS allows HTTPS only.")
		}
		return nil
	}
	return authFailed("The SAS signed protocol %q is not https or https,http.", spr)
}

// parsePerms reads permission letters against an alphabet. Letters of the
// alphabet that mean nothing to the Table service (the account SAS letters
// for blobs and queues) are accepted and ignored, as Azure documents:
// "Permissions are only valid if they match the specified signed resource
// type; otherwise they are ignored."
func parsePerms(s, alphabet, what string) (perm, error) {
	var p perm
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte(alphabet, c) < 0 {
			return 0, authFailed("The SAS %s %q holds the unknown letter %q.", what, s, string(c))
		}
		p |= permOf(c)
	}
	return p, nil
}

func permOf(c byte) perm {
	switch c {
	case 'r':
		return permRead
	case 'w':
		return permWrite
	case 'd':
		return permDelete
	case 'l':
		return permList
	case 'a':
		return permAdd
	case 'c':
		return permCreate
	case 'u':
		return permUpdate
	case 'p':
		return permProcess
	}
	return 0
}

// Permission alphabets: the table SAS "raud", and every account SAS letter
// Azure defines for any service (r w d x y l a c u p t f i).
const (
	tablePermAlphabet   = "raud"
	accountPermAlphabet = "rwdxylacuptfi"
)

func parseResourceTypes(s string) (resource, error) {
	var r resource
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 's':
			r |= resService
		case 'c':
			r |= resContainer
		case 'o':
			r |= resObject
		default:
			return 0, authFailed("The SAS signed resource types %q hold the unknown letter %q.", s, string(s[i]))
		}
	}
	return r, nil
}

func checkServices(s string) error {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("bqtf", s[i]) < 0 {
			return authFailed("The SAS signed services %q hold the unknown letter %q.", s, string(s[i]))
		}
	}
	return nil
}
