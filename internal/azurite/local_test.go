package azurite

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestFind(t *testing.T) {
	t.Run("env dir without the package", func(t *testing.T) {
		t.Setenv(EnvDir, t.TempDir())
		if _, err := Find(); !errors.Is(err, ErrNotInstalled) {
			t.Fatalf("Find() error = %v, want ErrNotInstalled", err)
		}
	})
	t.Run("env dir with the package", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, tableMain))
		t.Setenv(EnvDir, dir)
		if got, err := Find(); err != nil || got != dir {
			t.Fatalf("Find() = %q, %v; want %q", got, err, dir)
		}
	})
	t.Run("no module root", func(t *testing.T) {
		t.Setenv(EnvDir, "")
		t.Chdir(t.TempDir())
		if _, err := Find(); !errors.Is(err, ErrNotInstalled) {
			t.Fatalf("Find() error = %v, want ErrNotInstalled", err)
		}
	})
	t.Run("module root without tools", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "go.mod"))
		t.Setenv(EnvDir, "")
		t.Chdir(dir)
		_, err := Find()
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), ".tools") {
			t.Fatalf("Find() error = %v, want ErrNotInstalled naming .tools", err)
		}
	})
	t.Run("module root with tools, from a subfolder", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "go.mod"))
		writeFile(t, filepath.Join(dir, packageDir, tableMain))
		sub := filepath.Join(dir, "a", "b")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv(EnvDir, "")
		t.Chdir(sub)
		got, err := Find()
		if err != nil || got != filepath.Join(dir, packageDir) {
			t.Fatalf("Find() = %q, %v; want %q", got, err, filepath.Join(dir, packageDir))
		}
	})
}

func TestStartWithoutPackage(t *testing.T) {
	t.Setenv(EnvDir, t.TempDir())
	if _, err := Start(context.Background()); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Start() error = %v, want ErrNotInstalled", err)
	}
}

func TestArgs(t *testing.T) {
	t.Parallel()
	got := strings.Join(args("/pkg", 1234), " ")
	for _, want := range []string{"/pkg/" + tableMain, "--tableHost 127.0.0.1", "--tablePort 1234", "--inMemoryPersistence", "--skipApiVersionCheck", "--loose"} {
		if !strings.Contains(got, want) {
			t.Errorf("args = %q, missing %q", got, want)
		}
	}
	// Azurite refuses --location together with in-memory persistence.
	if strings.Contains(got, "--location") {
		t.Errorf("args = %q: --location conflicts with --inMemoryPersistence", got)
	}
}

func TestConnectionString(t *testing.T) {
	t.Parallel()
	cs := connectionString("http://127.0.0.1:9/devstoreaccount1")
	want := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + AccountKey + ";TableEndpoint=http://127.0.0.1:9/devstoreaccount1;"
	if cs != want {
		t.Fatalf("connectionString = %q, want %q", cs, want)
	}
}

// TestStart starts the real emulator (or uses $TABLEBRIDGE_AZURITE_ENDPOINT)
// and checks that it answers on loopback.
func TestStart(t *testing.T) {
	t.Parallel()
	ep := Endpoint(t)
	if !strings.HasPrefix(ep, "http://127.0.0.1:") || !strings.HasSuffix(ep, "/"+AccountName) {
		t.Fatalf("Endpoint = %q, want a loopback account URL", ep)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(ep + "/Tables")
	if err != nil {
		t.Fatalf("GET %s/Tables: %v", ep, err)
	}
	resp.Body.Close()
	// Unsigned, so refused; any answer proves the service runs.
	if resp.StatusCode < 400 {
		t.Fatalf("unsigned GET answered %d, want a refusal", resp.StatusCode)
	}
}

func TestStopIsIdempotent(t *testing.T) {
	t.Parallel()
	if os.Getenv(EnvEndpoint) != "" {
		t.Skip("an external Azurite is configured; not starting another")
	}
	Endpoint(t) // skips or fails like every Azurite test when it cannot start
	inst, err := Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	inst.Stop()
	inst.Stop()
	select {
	case <-inst.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
}

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}
