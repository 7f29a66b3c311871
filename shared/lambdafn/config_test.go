package lambdafn_test

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/lambdafn"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConfig(t *testing.T) {
	deployed := map[string]string{
		lambdafn.EnvAccountName: "myaccount",
		lambdafn.EnvTablePrefix: "tb-",
		lambdafn.EnvKeysSecret:  "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tablebridge/x/account-keys-AbCdEf",
	}
	// store is the store's configuration of the functions on the table
	// prefix tb-, changed by edit.
	store := func(edit func(*dynamostore.Options)) dynamostore.Options {
		o := dynamostore.Options{TablePrefix: "tb-", ConfirmTable: true}
		if edit != nil {
			edit(&o)
		}
		return o
	}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range deployed {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    lambdafn.Config
		wantErr []string
	}{
		{"deployed", deployed, lambdafn.Config{AccountName: "myaccount", Store: store(nil),
			KeysSecret: deployed[lambdafn.EnvKeysSecret], LogLevel: slog.LevelInfo}, nil},
		{"explicit tables, endpoint and level", with(map[string]string{lambdafn.EnvCatalogTable: "cat", lambdafn.EnvSharedTable: "all",
			lambdafn.EnvDynamoDBEndpoint: "http://127.0.0.1:8000", lambdafn.EnvLogLevel: "debug"}),
			lambdafn.Config{AccountName: "myaccount", KeysSecret: deployed[lambdafn.EnvKeysSecret], LogLevel: slog.LevelDebug,
				Store: store(func(o *dynamostore.Options) {
					o.CatalogTable, o.SharedTable, o.Endpoint = "cat", "all", "http://127.0.0.1:8000"
				})}, nil},
		{"Lambda's own log level", with(map[string]string{"AWS_LAMBDA_LOG_LEVEL": "WARN"}),
			lambdafn.Config{AccountName: "myaccount", Store: store(nil),
				KeysSecret: deployed[lambdafn.EnvKeysSecret], LogLevel: slog.LevelWarn}, nil},
		{"sam local with the emulator key", map[string]string{lambdafn.EnvTablePrefix: "tb-", lambdafn.EnvUseEmulatorKey: "true"},
			lambdafn.Config{AccountName: auth.DevStoreAccountName, Store: store(nil),
				UseEmulatorKey: true, LogLevel: slog.LevelInfo}, nil},
		{"nothing set", map[string]string{}, lambdafn.Config{},
			[]string{lambdafn.EnvTablePrefix, lambdafn.EnvKeysSecret, lambdafn.EnvAccountName}},
		{"bad account name", with(map[string]string{lambdafn.EnvAccountName: "My-Account"}), lambdafn.Config{},
			[]string{"3 to 24 lower-case letters and digits"}},
		{"emulator key for another account", with(map[string]string{lambdafn.EnvKeysSecret: "", lambdafn.EnvUseEmulatorKey: "1"}),
			lambdafn.Config{}, []string{"serves devstoreaccount1 only"}},
		{"emulator key and a secret", with(map[string]string{lambdafn.EnvAccountName: auth.DevStoreAccountName, lambdafn.EnvUseEmulatorKey: "true"}),
			lambdafn.Config{}, []string{"exclude each other"}},
		{"bad boolean", with(map[string]string{lambdafn.EnvUseEmulatorKey: "yes please"}), lambdafn.Config{},
			[]string{"want true or false"}},
		{"bad log level", with(map[string]string{lambdafn.EnvLogLevel: "chatty"}), lambdafn.Config{},
			[]string{"want debug, info, warn or error"}},
		{"purge grace", with(map[string]string{lambdafn.EnvPurgeGrace: "24h"}),
			lambdafn.Config{AccountName: "myaccount", Store: store(func(o *dynamostore.Options) { o.PurgeGrace = 24 * time.Hour }),
				KeysSecret: deployed[lambdafn.EnvKeysSecret], LogLevel: slog.LevelInfo}, nil},
		{"bad purge grace", with(map[string]string{lambdafn.EnvPurgeGrace: "-1m"}), lambdafn.Config{},
			[]string{lambdafn.EnvPurgeGrace, "want a positive duration"}},
		{"purge grace without a unit", with(map[string]string{lambdafn.EnvPurgeGrace: "60"}), lambdafn.Config{},
			[]string{"want a positive duration"}},
		{"purge rate", with(map[string]string{lambdafn.EnvPurgeRate: "12000"}),
			lambdafn.Config{AccountName: "myaccount", Store: store(func(o *dynamostore.Options) { o.PurgeRate = 12000 }),
				KeysSecret: deployed[lambdafn.EnvKeysSecret], LogLevel: slog.LevelInfo}, nil},
		{"bad purge rate", with(map[string]string{lambdafn.EnvPurgeRate: "0"}), lambdafn.Config{},
			[]string{lambdafn.EnvPurgeRate, "want a positive number"}},
		{"stack name", with(map[string]string{lambdafn.EnvStackName: "tb-prod"}),
			lambdafn.Config{AccountName: "myaccount", Store: store(nil), KeysSecret: deployed[lambdafn.EnvKeysSecret],
				StackName: "tb-prod", LogLevel: slog.LevelInfo}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := lambdafn.LoadConfig(env(tc.env))
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error; config %+v", got)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseKeySecret(t *testing.T) {
	generated := strings.Repeat("Ab3dEf7h", 22) // 176 letters and digits, as CloudFormation generates
	azureKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xa5}, 64))
	otherKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x5a}, 64))
	tests := []struct {
		name     string
		secret   string
		wantKeys [][]byte
		wantErr  string
	}{
		{"generated: two keys of 88 characters", `{"accountName":"acct","keys":"` + generated + `"}`,
			[][]byte{mustB64(t, generated[:88]), mustB64(t, generated[88:])}, ""},
		{"explicit Azure-style keys", `{"accountName":"acct","key1":"` + azureKey + `","key2":"` + otherKey + `"}`,
			[][]byte{mustB64(t, azureKey), mustB64(t, otherKey)}, ""},
		{"explicit keys win over generated ones", `{"keys":"` + generated + `","key2":"` + otherKey + `"}`,
			[][]byte{mustB64(t, otherKey)}, ""},
		{"not JSON", `keys=abc`, nil, "not JSON"},
		{"another account's secret", `{"accountName":"other","keys":"` + generated + `"}`, nil, `for account "other"`},
		{"no keys", `{"accountName":"acct"}`, nil, `no "keys"`},
		{"generated string of the wrong length", `{"keys":"` + generated[:100] + `"}`, nil, "has 100 characters, want 176"},
		{"key that is not base64", `{"key1":"***"}`, nil, "not base64"},
		{"key too short", `{"key1":"` + base64.StdEncoding.EncodeToString([]byte("short")) + `"}`, nil, "want at least 32"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acc, err := lambdafn.ParseKeySecret(tc.secret, "acct")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if acc.Name != "acct" || len(acc.Keys) != len(tc.wantKeys) {
				t.Fatalf("account %q with %d keys, want acct with %d", acc.Name, len(acc.Keys), len(tc.wantKeys))
			}
			for i := range acc.Keys {
				if !bytes.Equal(acc.Keys[i], tc.wantKeys[i]) {
					t.Errorf("key %d differs", i+1)
				}
			}
		})
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
