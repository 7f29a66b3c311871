package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// TestServeInMemory runs serve -store memory twice with the SDK: the data
// lives while the server runs, is gone after a restart, and the data
// directory is never created (docs/serve.md, "In memory (`-store memory`)").
func TestServeInMemory(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "never-created")
	run := func(t *testing.T, check func(ctx context.Context, svc *aztables.ServiceClient)) {
		ctx, stop := context.WithCancel(t.Context())
		defer stop()
		connStr, done := startServeConfig(t, ctx, serveConfig{listen: "127.0.0.1:0", dataDir: dataDir, storeKind: "memory",
			accounts: auth.AccountList{auth.DevStoreAccount()}})
		svc, err := aztables.NewServiceClientFromConnectionString(connStr, nil)
		if err != nil {
			t.Fatal(err)
		}
		check(ctx, svc)
		stop()
		if err := <-done; err != nil {
			t.Fatalf("serve: %v", err)
		}
	}
	t.Run("Serves", func(t *testing.T) {
		run(t, func(ctx context.Context, svc *aztables.ServiceClient) {
			if _, err := svc.CreateTable(ctx, "InMemory", nil); err != nil {
				t.Fatal(err)
			}
			client := svc.NewClient("inmemory")
			if _, err := client.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","N":1}`), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := client.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","N":2}`), nil); !isCode(err, aztables.EntityAlreadyExists) {
				t.Fatalf("second insert: %v; want EntityAlreadyExists", err)
			}
			if _, err := client.GetEntity(ctx, "p", "r", nil); err != nil {
				t.Fatal(err)
			}
		})
	})
	t.Run("GoneAfterRestart", func(t *testing.T) {
		run(t, func(ctx context.Context, svc *aztables.ServiceClient) {
			_, err := svc.NewClient("inmemory").GetEntity(ctx, "p", "r", nil)
			if !isCode(err, aztables.TableNotFound) {
				t.Fatalf("entity after restart: %v; want TableNotFound", err)
			}
		})
	})
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("-store memory touched the data directory: %v", err)
	}
}

func isCode(err error, code aztables.TableErrorCode) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.ErrorCode == string(code)
}
