package oauth_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/internal/testissuer"
	"github.com/tablebridge/tablebridge/shared/oauth"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
	"github.com/tablebridge/tablebridge/shared/store/memstore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }

// tenant is a tenant id in Entra's GUID form.
const tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

const devAccount = "devstoreaccount1"

// forEachStore runs fn over the embedded store and DynamoDB Local, with the
// options that select the store.
func forEachStore(t *testing.T, fn func(t *testing.T, storeOpts []tablebridgetest.Option)) {
	t.Run("bolt", func(t *testing.T) { fn(t, nil) })
	t.Run("memory", func(t *testing.T) {
		st, err := memstore.New()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		fn(t, []tablebridgetest.Option{tablebridgetest.WithStore(st)})
	})
	t.Run("dynamodb", func(t *testing.T) {
		client := dynamolocal.Client(t) // skips under -short
		st, err := dynamostore.New(dynamolocal.Context(t, 2*time.Minute), client, dynamostore.Options{
			TablePrefix: dynamolocal.UniqueName("oauth") + "-", Endpoint: dynamolocal.Endpoint(t),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		fn(t, []tablebridgetest.Option{tablebridgetest.WithStore(st)})
	})
}

// basic returns a basic-mode verifier of cfg.
func basic(t *testing.T, cfg *oauth.Config) *oauth.Basic {
	t.Helper()
	b, err := oauth.NewBasic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// credential returns a TokenCredential that always hands out token.
func credential(token string) *testissuer.Credential {
	return &testissuer.Credential{Token: func() string { return token }}
}

// wantRefusal asserts err is the service's answer status/code and, for a
// 401, Azure's challenge and the reason in the message.
func wantRefusal(t *testing.T, err error, status int, code, reason, challenge string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("got %d %s, want %d %s: %v", re.StatusCode, re.ErrorCode, status, code, err)
	}
	if reason != "" && !strings.Contains(err.Error(), reason) {
		t.Errorf("message lacks %q: %v", reason, err)
	}
	if got := re.RawResponse.Header.Get("WWW-Authenticate"); got != challenge {
		t.Errorf("WWW-Authenticate %q, want %q", got, challenge)
	}
}

// logBuffer collects JSON log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// requestLines returns the "request" log lines.
func (l *logBuffer) requestLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == "request" {
			out = append(out, m)
		}
	}
	return out
}

// rawBearer sends a raw request with "Authorization: Bearer token".
func rawBearer(t *testing.T, srv *protocoltest.Server, method, path, token string) *protocoltest.Response {
	t.Helper()
	return srv.Do(t, protocoltest.Request{Method: method, Path: path, Signing: protocoltest.Unsigned,
		Header: http.Header{"Authorization": {"Bearer " + token}}})
}
