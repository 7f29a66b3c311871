package auth_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/model"
)

const (
	devAccount = auth.DevStoreAccountName
	// secondKeyB64 is a made-up second key for devstoreaccount1.
	secondKeyB64 = "c2Vjb25kLWtleS1mb3ItZGV2c3RvcmVhY2NvdW50MS1pbi10ZXN0cy0wMTIzNDU2Nzg5"
	// otherKeyB64 belongs to no configured account.
	otherKeyB64 = "d3Jvbmcta2V5LXRoYXQtbm8tYWNjb3VudC1oYXMtMDEyMzQ1Njc4OQ=="
)

// testNow is the server clock in the hand-built vectors.
var testNow = time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC)

func mustKey(t testing.TB, b64 string) []byte {
	t.Helper()
	k, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("decode key: %v", err)
	}
	return k
}

func devKey(t testing.TB) []byte { return mustKey(t, auth.DevStoreAccountKey) }

// newVerifier serves devstoreaccount1 with two keys, plus a second account
// so cross-account mistakes are visible.
func newVerifier(t testing.TB, policies auth.PolicyLookup) *auth.Verifier {
	t.Helper()
	dev := auth.DevStoreAccount()
	dev.Keys = append(dev.Keys, mustKey(t, secondKeyB64))
	other := auth.Account{Name: "otheraccount", Keys: [][]byte{mustKey(t, otherKeyB64)}}
	v, err := auth.NewVerifier([]auth.Account{dev, other}, policies)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v
}

// policyStore is an in-memory PolicyLookup keyed by table name
// (case-insensitively, as tables are).
type policyStore struct {
	byTable map[string][]model.SignedIdentifier
	err     error
	calls   int
}

var errStoreDown = errors.New("store down")

func (s *policyStore) lookup(_ context.Context, account, table string) ([]model.SignedIdentifier, error) {
	s.calls++
	if s.err != nil {
		return nil, s.err
	}
	if account != devAccount {
		return nil, nil
	}
	for name, ids := range s.byTable {
		if equalFold(name, table) {
			return ids, nil
		}
	}
	return nil, nil
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// sasRequest is a request on path-style URL /devstoreaccount1/<table>()
// carrying q.
func sasRequest(table string, q url.Values) auth.Request {
	return auth.Request{
		Account:    devAccount,
		SignedPath: "/" + devAccount + "/" + table + "()",
		Query:      q,
		Header:     http.Header{},
		Method:     http.MethodGet,
		Table:      table,
		ClientIP:   netip.MustParseAddr("10.1.2.3"),
		HTTPS:      true,
		Now:        testNow,
	}
}

// wantCode asserts err is an *apierr.Error with code and HTTP status.
func wantCode(t testing.TB, err error, code apierr.Code, status int) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	aerr, ok := apierr.As(err)
	if !ok {
		t.Fatalf("error %v (%T) is not an *apierr.Error", err, err)
	}
	if aerr.Code != code || aerr.HTTPStatus() != status {
		t.Fatalf("got %s/%d (%v), want %s/%d", aerr.Code, aerr.HTTPStatus(), err, code, status)
	}
}

// wantDetail asserts that err's message names detail, when detail is set.
func wantDetail(t testing.TB, err error, detail string) {
	t.Helper()
	if detail != "" && (err == nil || !strings.Contains(err.Error(), detail)) {
		t.Fatalf("error %v does not say %q", err, detail)
	}
}

// hmacB64 signs sts independently of the package under test.
func hmacB64(t testing.TB, key []byte, sts string) string {
	t.Helper()
	m := hmac.New(sha256.New, key)
	m.Write([]byte(sts))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}
