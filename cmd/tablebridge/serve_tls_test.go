package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/serveproc"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// trustingClient is an HTTP client that trusts only the PEM certificate at
// path, as a developer's client does after adding it to its trust store.
func trustingClient(t *testing.T, path string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", path)
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// serveHTTPS starts serve with tlsFlags and checks the SDK works over HTTPS
// with the printed connection string, trusting certPath.
func serveHTTPS(t *testing.T, dataDir string, flags tlsFlags, certPath string) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	connStr, done := startServeConfig(t, ctx, serveConfig{listen: "127.0.0.1:0", dataDir: dataDir, storeKind: "bolt",
		accounts: auth.AccountList{auth.DevStoreAccount()}, tls: flags})
	if !strings.HasPrefix(connStr, "DefaultEndpointsProtocol=https;") || !strings.Contains(connStr, "TableEndpoint=https://127.0.0.1:") {
		t.Fatalf("connection string %q", connStr)
	}
	svc, err := aztables.NewServiceClientFromConnectionString(connStr, &aztables.ClientOptions{ClientOptions: policy.ClientOptions{
		Transport: trustingClient(t, certPath), Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	table := fmt.Sprintf("overtls%d", time.Now().UnixNano())
	if _, err := svc.CreateTable(ctx, table, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.NewClient(table).AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatal(err)
	}
	// A client that does not trust the certificate is refused by TLS.
	plain, _ := aztables.NewServiceClientFromConnectionString(connStr, &aztables.ClientOptions{ClientOptions: policy.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}}})
	if _, err := plain.GetProperties(ctx, nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusting client: %v, want a certificate error", err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// TestServeTLSSelfSigned: -tls-self-signed makes a certificate for
// 127.0.0.1 once and keeps it across restarts, so trusting it once is
// enough.
func TestServeTLSSelfSigned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certPath := filepath.Join(dir, "tls", "cert.pem")
	serveHTTPS(t, dir, tlsFlags{selfSigned: true}, certPath)
	first, err := os.ReadFile(certPath)
	if err != nil {
		t.Fatal(err)
	}
	serveHTTPS(t, dir, tlsFlags{selfSigned: true}, certPath)
	second, _ := os.ReadFile(certPath)
	if string(first) != string(second) {
		t.Error("a restart made a new certificate")
	}
	if fi, err := os.Stat(filepath.Join(dir, "tls", "key.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, mode %v, want 0600", err, fi.Mode())
	}
	// Near its expiry the certificate is remade.
	if _, _, err := ensureSelfSigned(filepath.Join(dir, "tls"), time.Now().Add(selfSignedValidity)); err != nil {
		t.Fatal(err)
	}
	if third, _ := os.ReadFile(certPath); string(third) == string(first) {
		t.Error("an expiring certificate was kept")
	}
}

// TestServeTLSOpenSSLOneLiner: docs/serve.md's openssl command makes a
// certificate -tls-cert and -tls-key accept and a client can trust.
func TestServeTLSOpenSSLOneLiner(t *testing.T) {
	t.Parallel()
	openssl := serveproc.Require(t, "openssl", "install Debian's openssl (as root: apt-get install openssl)", nil, "openssl")
	dir := t.TempDir()
	// Keep in step with docs/serve.md ("HTTPS").
	cmd := exec.Command(openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
		"-days", "365", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost",
		"-keyout", "key.pem", "-out", "cert.pem")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("openssl: %v\n%s", err, out)
	}
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	serveHTTPS(t, dir, tlsFlags{cert: cert, key: key}, cert)
}

func TestServeTLSRejectsBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-tls-cert", "cert.pem"},
		{"-tls-key", "key.pem"},
		{"-tls-self-signed", "-tls-cert", "a", "-tls-key", "b"},
		{"-tls-cert", "/nonexistent/cert.pem", "-tls-key", "/nonexistent/key.pem"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if err := runServe(append([]string{"-listen", "127.0.0.1:0", "-data", t.TempDir()}, args...)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
