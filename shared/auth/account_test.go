package auth_test

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/operation"
)

func TestDevStoreAccount(t *testing.T) {
	t.Parallel()
	a := auth.DevStoreAccount()
	if a.Name != "devstoreaccount1" || len(a.Keys) != 1 || len(a.Keys[0]) != 64 {
		t.Fatalf("DevStoreAccount = %q with %d keys", a.Name, len(a.Keys))
	}
	if _, err := auth.NewVerifier([]auth.Account{a}, nil); err != nil {
		t.Fatalf("NewVerifier(DevStoreAccount): %v", err)
	}
}

func TestParseAccountFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		wantErr string
		keyLen  int
	}{
		{"valid", "myaccount:" + auth.DevStoreAccountKey, "", 64},
		{"key with surrounding spaces", "myaccount: " + auth.DevStoreAccountKey + " ", "", 64},
		{"no colon", "myaccount", "name:base64key", 0},
		{"empty key", "myaccount:", "empty", 0},
		{"key not base64", "myaccount:not base64!", "not base64", 0},
		{"URL-safe base64 is not what SDKs decode", "myaccount:ab-_", "not base64", 0},
		{"name too short", "ab:" + auth.DevStoreAccountKey, "3 to 24", 0},
		{"name too long", strings.Repeat("a", 25) + ":" + auth.DevStoreAccountKey, "3 to 24", 0},
		{"upper case name", "MyAccount:" + auth.DevStoreAccountKey, "lowercase", 0},
		{"punctuation in name", "my-account:" + auth.DevStoreAccountKey, "lowercase", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := auth.ParseAccountFlag(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAccountFlag: %v", err)
			}
			if a.Name != "myaccount" || len(a.Keys) != 1 || len(a.Keys[0]) != tc.keyLen {
				t.Fatalf("got %q with keys %v", a.Name, a.Keys)
			}
		})
	}
}

func TestAccountListFlag(t *testing.T) {
	t.Parallel()
	var l auth.AccountList
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(&bytes.Buffer{})
	fs.Var(&l, "account", "name:base64key, repeatable")
	args := []string{
		"-account", "alpha:" + auth.DevStoreAccountKey,
		"-account", "beta:" + otherKeyB64,
		"-account", "alpha:" + secondKeyB64,
	}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(l) != 2 || l[0].Name != "alpha" || len(l[0].Keys) != 2 || l[1].Name != "beta" || len(l[1].Keys) != 1 {
		t.Fatalf("merged list = %+v", l)
	}
	if got := l.String(); got != "alpha,beta" || strings.Contains(got, "=") {
		t.Fatalf("String() = %q; it must list names and never keys", got)
	}
	if err := l.Set("alpha:" + otherKeyB64); err == nil {
		t.Fatal("a third key for one account was accepted")
	}
	if err := l.Set("bad"); err == nil {
		t.Fatal("a malformed value was accepted")
	}
	if _, err := auth.NewVerifier(l, nil); err != nil {
		t.Fatalf("NewVerifier(flag list): %v", err)
	}
	var empty *auth.AccountList
	if empty.String() != "" {
		t.Fatal("nil list String")
	}
}

func TestNewVerifierRefusesBadAccounts(t *testing.T) {
	t.Parallel()
	key := []byte("k")
	tests := []struct {
		name     string
		accounts []auth.Account
	}{
		{"no accounts", nil},
		{"bad name", []auth.Account{{Name: "A!", Keys: [][]byte{key}}}},
		{"no keys", []auth.Account{{Name: "abc"}}},
		{"three keys", []auth.Account{{Name: "abc", Keys: [][]byte{key, key, key}}}},
		{"empty key", []auth.Account{{Name: "abc", Keys: [][]byte{key, {}}}}},
		{"duplicate name", []auth.Account{{Name: "abc", Keys: [][]byte{key}}, {Name: "abc", Keys: [][]byte{key}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if v, err := auth.NewVerifier(tc.accounts, nil); err == nil || v != nil {
				t.Fatalf("NewVerifier = %v, %v; want an error", v, err)
			}
		})
	}
}

func TestAccountName(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, nil)
	for name, want := range map[string]string{"devstoreaccount1": "devstoreaccount1", "DevStoreAccount1": "devstoreaccount1",
		"DEVSTOREACCOUNT1": "devstoreaccount1", "otheraccount": "otheraccount", "Tables": "", "": ""} {
		if got, ok := v.AccountName(name); got != want || ok != (want != "") {
			t.Errorf("AccountName(%q) = %q, %v, want %q", name, got, ok, want)
		}
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	if auth.SchemeSharedKeyLite.String() != "SharedKeyLite" || auth.SchemeTableSAS.String() != "TableSAS" ||
		auth.SchemeSharedKey.String() != "SharedKey" || auth.SchemeAccountSAS.String() != "AccountSAS" || auth.Scheme(0).String() != "Unknown" {
		t.Error("Scheme names")
	}
	if operation.InsertOrMergeEntity.String() != "InsertOrMergeEntity" || operation.Operation(0).String() != "Unknown" {
		t.Error("Operation names")
	}
}
