package timedstore_test

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
	"github.com/tablebridge/tablebridge/shared/store/storetest"
	"github.com/tablebridge/tablebridge/shared/store/timedstore"
)

func openBolt(t *testing.T) store.Store {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "tablebridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestConformance: the wrapper changes nothing a store does.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return timedstore.New(openBolt(t), func(operation.StoreMethod, time.Duration, timedstore.Outcome) {})
	})
}

type observed struct {
	method  operation.StoreMethod
	outcome timedstore.Outcome
}

// TestObserves: each call is reported once, by its method, with its outcome.
func TestObserves(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []observed
	st := timedstore.New(openBolt(t), func(m operation.StoreMethod, took time.Duration, o timedstore.Outcome) {
		if took < 0 {
			t.Errorf("%s took %v", m, took)
		}
		mu.Lock()
		got = append(got, observed{m, o})
		mu.Unlock()
	})
	ctx := t.Context()
	if _, err := st.CreateTable(ctx, "acct", "timed"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetTable(ctx, "acct", "missing"); !errors.Is(err, store.ErrTableNotFound) {
		t.Fatalf("GetTable of a missing table: %v", err)
	}
	if _, err := st.GetServiceProperties(ctx, "acct"); err != nil {
		t.Fatal(err)
	}
	want := []observed{
		{operation.StoreCreateTable, timedstore.OK},
		{operation.StoreGetTable, timedstore.Failed},
		{operation.StoreGetServiceProperties, timedstore.OK},
	}
	if len(got) != len(want) {
		t.Fatalf("observed %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d: observed %v, want %v", i, got[i], want[i])
		}
	}
}
