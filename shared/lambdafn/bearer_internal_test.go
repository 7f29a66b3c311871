package lambdafn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/internal/testissuer"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
)

// TestBearerTokenEvents: the functions, configured from the environment
// and the keys secret as at init, serve API Gateway events that carry a
// bearer token: verified against a loopback issuer, with the roles the
// environment and the secret assign, and Azure's refusals.
func TestBearerTokenEvents(t *testing.T) {
	key := testissuer.NewKey(t, jose.RS256)
	iss := testissuer.New(t, key)
	env := map[string]string{
		EnvTablePrefix:    "tb-",
		EnvUseEmulatorKey: "true",
		EnvOAuthIssuers:   iss.URL + ", ",
		EnvOAuthAudiences: "api://tablebridge",
		EnvOAuthRoles:     `[{"claim": "oid", "value": "env-writer", "role": "contributor", "account": "devstoreaccount1"}]`,
	}
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	_, secretRoles, err := parseSecret(`{"keys": "`+strings.Repeat("a", 176)+`",
		"oauthRoles": [{"claim": "groups", "value": "readers", "role": "reader", "account": "devstoreaccount1"}]}`, "devstoreaccount1")
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := tokenVerifier(cfg.OAuth, secretRoles)
	if err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "tablebridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var logs bytes.Buffer
	log := slog.New(NewLogHandler(slog.NewJSONHandler(&logs, nil)))
	handlers := map[string]*Handler{}
	for _, fn := range deploy.Functions() {
		h, err := NewHandler(fn, st, []auth.Account{auth.DevStoreAccount()}, Options{HTTP: httpapi.Options{Logger: log, LogRequests: true, Tokens: tokens}})
		if err != nil {
			t.Fatal(err)
		}
		handlers[fn.Name] = h
	}
	invoke := func(t *testing.T, method, path, body, token string) *http.Response {
		t.Helper()
		var rd io.Reader = http.NoBody
		if body != "" {
			rd = strings.NewReader(body)
		}
		r, err := http.NewRequest(method, "https://abcdef1234.execute-api.eu-west-1.amazonaws.com/Prod/devstoreaccount1"+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("x-ms-version", "2019-02-02")
		r.Header.Set("Accept", "application/json;odata=nometadata")
		r.Header.Set("Content-Type", "application/json")
		ev, fn, err := gatewayevent.NewEvent(r, gatewayevent.EventOptions{Stage: "Prod"})
		if err != nil {
			t.Fatal(err)
		}
		// As JSON, as Lambda delivers it.
		payload, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		out, err := handlers[fn.Name].Invoke(context.Background(), payload)
		if err != nil {
			t.Fatal(err)
		}
		var resp events.APIGatewayProxyResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("not a format 1.0 response: %v: %s", err, out)
		}
		h := http.Header{}
		for k, vs := range resp.MultiValueHeaders {
			for _, v := range vs {
				h.Add(k, v)
			}
		}
		for k, v := range resp.Headers {
			h.Set(k, v)
		}
		return &http.Response{StatusCode: resp.StatusCode, Header: h, Body: io.NopCloser(strings.NewReader(resp.Body))}
	}
	token := func(c testissuer.Claims) string {
		c["aud"] = "api://tablebridge"
		return iss.Token(t, key, c)
	}
	writer := token(testissuer.Claims{"oid": "env-writer"})
	reader := token(testissuer.Claims{"groups": []string{"readers"}})
	challenge := "Bearer authorization_uri=" + iss.URL + " resource_id=api://tablebridge"

	tests := []struct {
		name                 string
		method, path, body   string
		token                string
		wantStatus           int
		wantCode, wantChalng string
	}{
		{"contributor creates a table", http.MethodPost, "/Tables", `{"TableName":"lambdatokens"}`, writer, http.StatusCreated, "", ""},
		{"contributor inserts", http.MethodPost, "/lambdatokens", `{"PartitionKey":"p","RowKey":"r"}`, writer, http.StatusCreated, "", ""},
		{"reader (role from the secret) reads", http.MethodGet, "/lambdatokens(PartitionKey='p',RowKey='r')", "", reader, http.StatusOK, "", ""},
		{"reader cannot insert", http.MethodPost, "/lambdatokens", `{"PartitionKey":"p","RowKey":"x"}`, reader, http.StatusForbidden, "AuthorizationPermissionMismatch", ""},
		{"no role", http.MethodGet, "/Tables", "", token(testissuer.Claims{"oid": "nobody"}), http.StatusForbidden, "AuthorizationPermissionMismatch", ""},
		{"owner-only ACL", http.MethodGet, "/lambdatokens?comp=acl", "", writer, http.StatusForbidden, "AuthorizationPermissionMismatch", ""},
		{"wrong audience", http.MethodGet, "/Tables", "", iss.Token(t, key, testissuer.Claims{"oid": "env-writer"}), http.StatusUnauthorized, "InvalidAuthenticationInfo", challenge},
		{"foreign key", http.MethodGet, "/Tables", "", testissuer.Token(t, testissuer.NewKey(t, jose.RS256), iss.URL, testissuer.Claims{"oid": "env-writer", "aud": "api://tablebridge"}),
			http.StatusUnauthorized, "InvalidAuthenticationInfo", challenge},
		{"malformed", http.MethodGet, "/Tables", "", "not-a-jwt", http.StatusUnauthorized, "InvalidAuthenticationInfo", challenge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := invoke(t, tc.method, tc.path, tc.body, tc.token)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus || resp.Header.Get("x-ms-error-code") != tc.wantCode {
				t.Fatalf("got %d %q, want %d %q: %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), tc.wantStatus, tc.wantCode, body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tc.wantChalng {
				t.Errorf("WWW-Authenticate %q, want %q", got, tc.wantChalng)
			}
		})
	}
	if strings.Contains(logs.String(), writer) {
		t.Error("the log holds a token")
	}
	if !strings.Contains(logs.String(), `"auth":"Bearer","principal":"oid:env-writer"`) {
		t.Errorf("no log line names the principal:\n%s", logs.String())
	}
}

func TestOAuthConfiguration(t *testing.T) {
	base := map[string]string{EnvTablePrefix: "tb-", EnvUseEmulatorKey: "true"}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"off", nil, ""},
		{"roles without issuers", map[string]string{EnvOAuthRoles: `[]`}, EnvOAuthIssuers},
		{"bad roles JSON", map[string]string{EnvOAuthIssuers: "https://sts.windows.net/x/", EnvOAuthRoles: `{`}, EnvOAuthRoles},
		{"bad role", map[string]string{EnvOAuthIssuers: "https://sts.windows.net/x/", EnvOAuthRoles: `[{"claim":"oid","value":"v","role":"owner","account":"a"}]`}, "owner"},
		{"http issuer", map[string]string{EnvOAuthIssuers: "http://issuer.example.com"}, "https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range tc.env {
				env[k] = v
			}
			cfg, err := LoadConfig(func(k string) string { return env[k] })
			if tc.wantErr == "" {
				if err != nil || cfg.OAuth != nil {
					t.Fatalf("config %+v, err %v", cfg.OAuth, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want one mentioning %q", err, tc.wantErr)
			}
		})
	}
	// Issuers without any role assignment, or roles in the secret without
	// issuers, fail init.
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{EnvTablePrefix: "tb-", EnvUseEmulatorKey: "true", EnvOAuthIssuers: "https://sts.windows.net/x/"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokenVerifier(cfg.OAuth, nil); err == nil {
		t.Error("issuers without roles accepted")
	}
	_, roles, _ := parseSecret(fmt.Sprintf(`{"keys":%q,"oauthRoles":[{"claim":"oid","value":"v","role":"reader","account":"a"}]}`, strings.Repeat("a", 176)), "a")
	if _, err := tokenVerifier(nil, roles); err == nil {
		t.Error("secret roles without issuers accepted")
	}
}
