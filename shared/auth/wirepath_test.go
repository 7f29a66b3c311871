package auth_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// keyPieces are what the random keys are made of: characters clients encode
// differently, and text that looks like an escape so that one key's
// encoding can equal another key's literal spelling ('x y' goes on the wire
// as x%20y, which is also the key 'x%20y' sent unencoded).
var keyPieces = []string{
	"a", "Z", "0", " ", "%", "%20", "%25", "%2520", "'", "''", "(", ")", "+", "&", "=",
	"é", "✓", "😀", "~", "*", "!", ",", ":", ";", "@", "$", "-", "_", ".", "%C3%A9", "%c3%a9",
}

func randomKey(rng *rand.Rand) string {
	var b strings.Builder
	for n := rng.IntN(6); n >= 0; n-- {
		b.WriteString(keyPieces[rng.IntN(len(keyPieces))])
	}
	return b.String()
}

// keyEncoders put a key literal (quotes already doubled) on the wire the
// ways clients do.
var keyEncoders = []struct {
	name   string
	encode func(string) string
}{
	// Go aztables: url.PathEscape of each key.
	{"go-sdk", url.PathEscape},
	// JS @azure/data-tables: encodeURIComponent, which keeps A-Z a-z 0-9
	// and -_.!~*'().
	{"js-sdk", func(s string) string { return percentEncode(s, "-_.!~*'()", false) }},
	// .NET Uri.EscapeDataString and Python quote(safe=''): RFC 3986
	// unreserved characters only.
	{"dotnet-python", func(s string) string { return percentEncode(s, "-_.~", false) }},
	// Every byte escaped, upper- and lower-case hex.
	{"full-upper", func(s string) string { return percentEncode(s, "", true) }},
	{"full-lower", func(s string) string { return strings.ToLower(percentEncode(s, "", true)) }},
	// Only what cannot appear raw in a request line.
	{"minimal", func(s string) string { return percentEncode(s, "!$&'()*+,-.:;=@_~", false) }},
}

// percentEncode escapes every byte of s except ASCII letters and digits
// (unless all) and the bytes in keep.
func percentEncode(s, keep string, all bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !all && (alnum || strings.IndexByte(keep, c) >= 0) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func entityWirePath(table, pk, rk string, enc func(string) string) string {
	lit := func(k string) string { return enc(strings.ReplaceAll(k, "'", "''")) }
	return "/" + devAccount + "/" + table + "(PartitionKey='" + lit(pk) + "',RowKey='" + lit(rk) + "')"
}

// TestSharedKeyWirePathsNeverShareASignature is the property behind Shared
// Key: random keys, put on the wire by every client's encoding, give a pool
// of wire paths; a request signed for one of them is accepted on that path
// and refused on every other, including other spellings of the same key
// and paths whose decoded form is another path's wire form.
func TestSharedKeyWirePathsNeverShareASignature(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, nil)
	key := devKey(t)
	date := testNow.Format(http.TimeFormat)
	rounds := 40
	if testing.Short() {
		rounds = 5
	}
	var sameKeyPairs, crossDecodedPairs, decodedReplays int
	for round := range rounds {
		rng := rand.New(rand.NewPCG(uint64(round), 12))
		scheme := auth.SchemeSharedKeyLite
		if round%2 == 1 {
			scheme = auth.SchemeSharedKey
		}
		type wire struct{ path, pk string }
		var pool []wire
		seen := map[string]bool{}
		add := func(path, pk string) {
			if !seen[path] {
				seen[path] = true
				pool = append(pool, wire{path, pk})
			}
		}
		for range 6 {
			pk, rk := randomKey(rng), randomKey(rng)
			for _, e := range keyEncoders {
				add(entityWirePath("mytable", pk, rk, e.encode), pk)
			}
			// The replay SECURITY.md's "What a signature covers" rules
			// out: the key whose literal is this key's Go encoding.
			lit := url.PathEscape(strings.ReplaceAll(pk, "'", "''"))
			add(entityWirePath("mytable", strings.ReplaceAll(lit, "''", "'"), rk, url.PathEscape), lit)
		}
		for i, signedFor := range pool {
			sig := hmacB64(t, key, stringToSign(scheme, http.MethodDelete, date, signedFor.path))
			for j, sentOn := range pool {
				r := auth.Request{
					Account: devAccount, SignedPath: sentOn.path, Query: url.Values{}, Method: http.MethodDelete,
					Header: http.Header{"X-Ms-Date": {date}, "Authorization": {schemeName(scheme) + " " + devAccount + ":" + sig}},
					Now:    testNow,
				}
				// Behind a proxy that decodes the path (an API Gateway
				// HTTP API), the verifier sees Go's escaping of the
				// decoded path and may accept another spelling, but only
				// one of the same decoded path.
				sentDecoded, err := url.PathUnescape(sentOn.path)
				if err != nil {
					t.Fatalf("round %d: pool path %q: %v", round, sentOn.path, err)
				}
				rd := r
				rd.SignedPath = (&url.URL{Path: sentDecoded}).EscapedPath()
				rd.PathDecoded = true
				if _, err := v.Authenticate(context.Background(), rd); err == nil {
					if signedDecoded, _ := url.PathUnescape(signedFor.path); signedDecoded != sentDecoded {
						t.Fatalf("round %d: signed for %q, sent on %q and decoded by a proxy: accepted, though the paths decode to %q and %q",
							round, signedFor.path, sentOn.path, signedDecoded, sentDecoded)
					}
					if i != j {
						decodedReplays++
					}
				} else if aerr, ok := apierr.As(err); !ok || aerr.Code != apierr.AuthenticationFailed {
					t.Fatalf("round %d: signed for %q, sent on %q and decoded by a proxy: got %v, want acceptance or AuthenticationFailed", round, signedFor.path, sentOn.path, err)
				}
				_, err = v.Authenticate(context.Background(), r)
				if i == j {
					if err != nil {
						t.Fatalf("round %d: signed for %q and sent on it: refused: %v", round, signedFor.path, err)
					}
					continue
				}
				if aerr, ok := apierr.As(err); !ok || aerr.Code != apierr.AuthenticationFailed {
					t.Fatalf("round %d: signed for %q, replayed on %q: got %v, want AuthenticationFailed", round, signedFor.path, sentOn.path, err)
				}
				decoded, derr := url.PathUnescape(sentOn.path)
				switch {
				case signedFor.pk == sentOn.pk:
					sameKeyPairs++
				case derr == nil && decoded == signedFor.path:
					crossDecodedPairs++
				}
			}
		}
	}
	// The pool must hold the hard cases, or the property says little.
	if sameKeyPairs == 0 || crossDecodedPairs == 0 || decodedReplays == 0 {
		t.Fatalf("pool too easy: %d same-key pairs, %d pairs where one path decodes to the other, %d replays accepted behind a decoding proxy",
			sameKeyPairs, crossDecodedPairs, decodedReplays)
	}
}

func schemeName(s auth.Scheme) string {
	if s == auth.SchemeSharedKey {
		return "SharedKey"
	}
	return "SharedKeyLite"
}

// stringToSign is the Table service string-to-sign, written out here
// independently of the package.
func stringToSign(s auth.Scheme, method, date, path string) string {
	resource := "/" + devAccount + path
	if s == auth.SchemeSharedKey {
		return method + "\n\n\n" + date + "\n" + resource
	}
	return date + "\n" + resource
}
