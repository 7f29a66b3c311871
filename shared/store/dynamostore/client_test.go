package dynamostore

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/store"
)

func TestConfigure(t *testing.T) {
	t.Parallel()
	var o dynamodb.Options
	Configure(&o)
	if o.Retryer == nil || o.Retryer.MaxAttempts() != retryMaxAttempts {
		t.Fatalf("Retryer = %v; want %d attempts", o.Retryer, retryMaxAttempts)
	}
	// The backoff never exceeds retryMaxBackoff, so retries fit well inside
	// API Gateway's 29 s.
	for attempt := 1; attempt <= 10; attempt++ {
		d, err := o.Retryer.RetryDelay(attempt, nil)
		if err != nil || d > retryMaxBackoff {
			t.Errorf("RetryDelay(%d) = %v, %v; want at most %v", attempt, d, err, retryMaxBackoff)
		}
	}
}

func TestNewClientAgainstLocal(t *testing.T) {
	endpoint := dynamolocal.Endpoint(t)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true") // no IMDS off AWS
	// A custom CA bundle, as corporate networks set, must not break the
	// client: the config loader adds it to the HTTP client's transport.
	t.Setenv("AWS_CA_BUNDLE", writeTestCA(t))
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_PROFILE", "")
	ctx := dynamolocal.Context(t, time.Minute)
	s, err := Open(ctx, Options{Endpoint: endpoint, TablePrefix: dynamolocal.UniqueName("nc") + "."})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if _, err := s.CreateTable(ctx, "acct", "Tbl"); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	if _, err := s.GetEntity(ctx, "acct", "Tbl", "p", "r"); !isNotFound(err) {
		t.Errorf("GetEntity = %v; want ErrEntityNotFound", err)
	}
}

// TestNewClientWithEndpointSkipsIMDS: with an endpoint and no credentials
// in the environment, the client must fall back to dummy credentials without
// ever asking the instance metadata service.
func TestNewClientWithEndpointSkipsIMDS(t *testing.T) {
	var hits atomic.Int64
	imdsServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer imdsServer.Close()
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imdsServer.URL)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "")
	ctx := dynamolocal.Context(t, 30*time.Second)
	client, err := NewClient(ctx, Options{Endpoint: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	creds, err := client.Options().Credentials.Retrieve(ctx)
	if err != nil || creds.AccessKeyID != "local" {
		t.Fatalf("credentials = %+v, %v; want the dummy local ones", creds, err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the instance metadata service was asked %d times", n)
	}
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrEntityNotFound) }

// writeTestCA writes a self-signed CA certificate as PEM and returns its path.
func writeTestCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "tablebridge test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
