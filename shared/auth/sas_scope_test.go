package auth_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/operation"
)

func TestTableSASKeyRanges(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, nil)
	type ent struct {
		pk, rk string
		in     bool
	}
	tests := []struct {
		name     string
		vals     auth.TableSASValues
		entities []ent
		bounds   string // canonical print of KeyRange, "" when unrestricted
	}{
		{"none", auth.TableSASValues{}, []ent{{"", "", true}, {"zzz", "zzz", true}}, ""},
		{"start partition only", auth.TableSASValues{StartPartitionKey: "m"}, []ent{
			{"l", "zzz", false}, {"m", "", true}, {"n", "a", true},
		}, "pk>=m"},
		{"end partition only", auth.TableSASValues{EndPartitionKey: "m"}, []ent{
			{"m", "zzz", true}, {"m\x00", "", false}, {"a", "b", true},
		}, "pk<=m"},
		{"start partition and row", auth.TableSASValues{StartPartitionKey: "m", StartRowKey: "5"}, []ent{
			{"m", "4", false}, {"m", "5", true}, {"m", "6", true}, {"n", "0", true}, {"l", "9", false},
		}, "pk>=m"},
		{"end partition and row", auth.TableSASValues{EndPartitionKey: "m", EndRowKey: "5"}, []ent{
			{"m", "6", false}, {"m", "5", true}, {"l", "9", true}, {"n", "0", false},
		}, "pk<=m"},
		{"one partition", auth.TableSASValues{StartPartitionKey: "p", EndPartitionKey: "p"}, []ent{
			{"p", "", true}, {"p", "anything", true}, {"q", "", false}, {"o", "z", false},
		}, "pk>=p pk<=p"},
		{"one entity", auth.TableSASValues{StartPartitionKey: "p", StartRowKey: "r", EndPartitionKey: "p", EndRowKey: "r"}, []ent{
			{"p", "r", true}, {"p", "r\x00", false}, {"p", "q", false},
		}, "pk>=p pk<=p rk>=r rk<=r"},
		{"composite span", auth.TableSASValues{StartPartitionKey: "b", StartRowKey: "5", EndPartitionKey: "d", EndRowKey: "2"}, []ent{
			{"b", "4", false}, {"b", "5", true}, {"c", "", true}, {"c", "9", true}, {"d", "2", true}, {"d", "3", false}, {"a", "9", false},
		}, "pk>=b pk<=d"},
		{"ordinal order, not Unicode-aware", auth.TableSASValues{StartPartitionKey: "Z", EndPartitionKey: "a"}, []ent{
			{"Z", "", true}, {"_", "", true}, {"a", "", true}, {"b", "", false}, {"é", "", false},
		}, "pk>=Z pk<=a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vals := tc.vals
			vals.Permissions, vals.Expiry = "raud", inAnHour
			p, err := v.Authenticate(context.Background(), sasRequest("mytable", tableSAS(t, devKey(t), vals)))
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			for _, e := range tc.entities {
				if got := p.AllowsEntity(e.pk, e.rk); got != e.in {
					t.Errorf("AllowsEntity(%q, %q) = %v, want %v", e.pk, e.rk, got, e.in)
				}
			}
			kr, ok := p.KeyRange()
			if got := printRange(kr, ok); got != tc.bounds {
				t.Errorf("KeyRange = %q, want %q", got, tc.bounds)
			}
			// The pushdown bounds must never exclude an allowed entity.
			for _, e := range tc.entities {
				if e.in && ok && !kr.Contains(e.pk, e.rk) {
					t.Errorf("KeyRange excludes allowed entity (%q, %q)", e.pk, e.rk)
				}
			}
		})
	}
}

func printRange(kr model.KeyRange, ok bool) string {
	if !ok {
		return ""
	}
	var parts []string
	add := func(name string, b model.Bounds) {
		if b.Lower != nil {
			parts = append(parts, name+">="+b.Lower.Value)
		}
		if b.Upper != nil {
			parts = append(parts, name+"<="+b.Upper.Value)
		}
	}
	add("pk", kr.PartitionKey)
	add("rk", kr.RowKey)
	return strings.Join(parts, " ")
}

func TestStoredAccessPolicies(t *testing.T) {
	t.Parallel()
	store := &policyStore{byTable: map[string][]model.SignedIdentifier{
		"MyTable": {
			{ID: "full", Start: hourAgo, Expiry: inAnHour, Permission: "raud"},
			{ID: "readonly", Expiry: inAnHour, Permission: "r"},
			{ID: "expired", Expiry: minuteAgo, Permission: "r"},
			{ID: "future", Start: inAMinute, Expiry: inAnHour, Permission: "r"},
			{ID: "bare"},
		},
	}}
	v := newVerifier(t, store.lookup)
	tests := []struct {
		name  string
		vals  auth.TableSASValues
		store func(s *policyStore)
		code  apierr.Code // "" when accepted
		read  bool        // when accepted: read allowed
		add   bool        // when accepted: add allowed
	}{
		{"policy supplies everything", auth.TableSASValues{Identifier: "full"}, nil, "", true, true},
		{"policy read-only", auth.TableSASValues{Identifier: "readonly"}, nil, "", true, false},
		{"token supplies start", auth.TableSASValues{Identifier: "readonly", Start: hourAgo}, nil, "", true, false},
		{"bare policy, token supplies the rest", auth.TableSASValues{Identifier: "bare", Permissions: "a", Expiry: inAnHour}, nil, "", false, true},
		{"policy expired", auth.TableSASValues{Identifier: "expired"}, nil, apierr.AuthenticationFailed, false, false},
		{"policy not yet valid", auth.TableSASValues{Identifier: "future"}, nil, apierr.AuthenticationFailed, false, false},
		{"expiry on both", auth.TableSASValues{Identifier: "readonly", Expiry: inAnHour}, nil, apierr.AuthenticationFailed, false, false},
		{"permissions on both", auth.TableSASValues{Identifier: "readonly", Permissions: "r"}, nil, apierr.AuthenticationFailed, false, false},
		{"start on both", auth.TableSASValues{Identifier: "full", Start: hourAgo}, nil, apierr.AuthenticationFailed, false, false},
		{"bare policy, token without expiry", auth.TableSASValues{Identifier: "bare", Permissions: "r"}, nil, apierr.AuthenticationFailed, false, false},
		{"unknown policy", auth.TableSASValues{Identifier: "nosuch"}, nil, apierr.AuthenticationFailed, false, false},
		{"policy IDs are case-sensitive", auth.TableSASValues{Identifier: "FULL"}, nil, apierr.AuthenticationFailed, false, false},
		{"deleting the policy revokes the token", auth.TableSASValues{Identifier: "full"}, func(s *policyStore) {
			s.byTable = map[string][]model.SignedIdentifier{"MyTable": {{ID: "readonly", Expiry: inAnHour, Permission: "r"}}}
		}, apierr.AuthenticationFailed, false, false},
		{"table gone", auth.TableSASValues{Identifier: "full"}, func(s *policyStore) { s.byTable = nil }, apierr.AuthenticationFailed, false, false},
		{"store returns an API error", auth.TableSASValues{Identifier: "full"}, func(s *policyStore) { s.err = apierr.New(apierr.ServerBusy) }, apierr.ServerBusy, false, false},
		{"store fails", auth.TableSASValues{Identifier: "full"}, func(s *policyStore) { s.err = errStoreDown }, apierr.InternalError, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			saved := *store
			defer func() { *store = saved }()
			if tc.store != nil {
				tc.store(store)
			}
			vals := tc.vals
			vals.Table = "mytable"
			q, err := auth.NewTableSAS(devAccount, devKey(t), vals)
			if err != nil {
				t.Fatal(err)
			}
			p, err := v.Authenticate(context.Background(), sasRequest("mytable", q))
			if tc.code != "" {
				aerr, ok := apierr.As(err)
				if !ok || aerr.Code != tc.code {
					t.Fatalf("got %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if got := p.Authorize(operation.QueryEntities, "mytable") == nil; got != tc.read {
				t.Errorf("read allowed = %v, want %v", got, tc.read)
			}
			if got := p.Authorize(operation.InsertEntity, "mytable") == nil; got != tc.add {
				t.Errorf("add allowed = %v, want %v", got, tc.add)
			}
		})
	}
}

func TestStoredPolicyLookupErrorKeepsCause(t *testing.T) {
	t.Parallel()
	store := &policyStore{err: errStoreDown}
	v := newVerifier(t, store.lookup)
	q := tableSAS(t, devKey(t), auth.TableSASValues{Identifier: "p"})
	_, err := v.Authenticate(context.Background(), sasRequest("mytable", q))
	if !errors.Is(err, errStoreDown) {
		t.Fatalf("cause lost: %v", err)
	}
	wantCode(t, err, apierr.InternalError, http.StatusInternalServerError)
}

func TestStoredPolicyNotLookedUpForForgedTokens(t *testing.T) {
	t.Parallel()
	store := &policyStore{}
	v := newVerifier(t, store.lookup)
	q := tableSAS(t, mustKey(t, otherKeyB64), auth.TableSASValues{Identifier: "p"})
	_, err := v.Authenticate(context.Background(), sasRequest("mytable", q))
	wantCode(t, err, apierr.AuthenticationFailed, 403)
	q = tableSAS(t, devKey(t), auth.TableSASValues{Identifier: "p"})
	_, err = v.Authenticate(context.Background(), sasRequest("othertable", q))
	wantCode(t, err, apierr.AuthorizationFailure, 403)
	if store.calls != 0 {
		t.Fatalf("policy store consulted %d times for tokens that could not pass", store.calls)
	}
}
