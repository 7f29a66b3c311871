package loadgen

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
)

func TestParsePhases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    []Phase
		wantErr string
	}{
		{"insert,get,query,batch", AllPhases, ""},
		{" Batch , insert ", []Phase{PhaseBatch, PhaseInsert}, ""},
		{"query,", []Phase{PhaseQuery}, ""},
		{"insert,insert", nil, "listed twice"},
		{"insert,scan", nil, `unknown phase "scan"`},
		{"", nil, "no phases"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParsePhases(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func TestParseConnectionString(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		in      string
		want    ConnectionInfo
		wantErr string
	}{
		{"emulator shortcut", "UseDevelopmentStorage=true", ConnectionInfo{DevStoreEndpoint, auth.DevStoreAccountName, auth.DevStoreAccountKey}, ""},
		{"table endpoint, as tablebridge serve prints it",
			"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + auth.DevStoreAccountKey + ";TableEndpoint=http://127.0.0.1:10012/devstoreaccount1;",
			ConnectionInfo{"http://127.0.0.1:10012/devstoreaccount1", auth.DevStoreAccountName, auth.DevStoreAccountKey}, ""},
		{"endpoint from suffix", "AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.example.net",
			ConnectionInfo{"https://acct.table.core.example.net", "acct", "a2V5"}, ""},
		{"SAS only", "AccountName=acct;SharedAccessSignature=sv=2019", ConnectionInfo{}, "SharedAccessSignature is not supported"},
		{"no key", "AccountName=acct", ConnectionInfo{}, "AccountKey"},
		{"no account", "AccountKey=a2V5", ConnectionInfo{}, "AccountName"},
		{"malformed", "AccountName", ConnectionInfo{}, "key=value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseConnectionString(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		adjust  func(*Config)
		wantErr string
	}{
		{"defaults", func(*Config) {}, ""},
		{"localhost", func(c *Config) { c.Endpoint = "http://localhost:10002/devstoreaccount1" }, ""},
		{"IPv6 loopback", func(c *Config) { c.Endpoint = "http://[::1]:10002/devstoreaccount1" }, ""},
		{"remote refused", func(c *Config) { c.Endpoint = "https://acct.table.core.windows.net" }, "not a loopback address"},
		{"private address refused", func(c *Config) { c.Endpoint = "http://10.0.0.5:10002/a" }, "not a loopback address"},
		{"remote allowed", func(c *Config) { c.Endpoint = "https://acct.table.core.windows.net"; c.AllowRemote = true }, ""},
		{"bad scheme", func(c *Config) { c.Endpoint = "ftp://127.0.0.1/a" }, "scheme must be http or https"},
		{"query in endpoint", func(c *Config) { c.Endpoint = "http://127.0.0.1/a?sv=1" }, "must not carry a query"},
		{"bad key", func(c *Config) { c.Key = "not base64!" }, "not base64"},
		{"no bound", func(c *Config) { c.Duration = 0; c.Ops = 0 }, "duration or an op count"},
		{"ops only", func(c *Config) { c.Duration = 0; c.Ops = 10 }, ""},
		{"zero clients", func(c *Config) { c.Clients = 0 }, "clients 0 out of range"},
		{"batch over 100", func(c *Config) { c.BatchSize = 101 }, "batch size 101"},
		{"table prefix with a dash", func(c *Config) { c.TablePrefix = "my-bench" }, "table prefix"},
		{"table prefix starting with a digit", func(c *Config) { c.TablePrefix = "1bench" }, "table prefix"},
		{"negative duration", func(c *Config) { c.Duration = -time.Second }, "must not be negative"},
		{"several problems at once", func(c *Config) { c.Clients = 0; c.Key = "" }, "account key is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			c.adjust(&cfg)
			_, _, err := cfg.validate()
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v, want %q", err, c.wantErr)
			}
		})
	}
	t.Run("remote refusal is ErrRemoteEndpoint", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Endpoint = "http://192.0.2.1/a"
		if _, _, err := cfg.validate(); !errors.Is(err, ErrRemoteEndpoint) {
			t.Fatalf("error %v is not ErrRemoteEndpoint", err)
		}
	})
}
