package memstore

import (
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/storetest"
)

func newStore(t *testing.T, opts ...Option) *Store {
	t.Helper()
	s, err := New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return newStore(t) })
}

// TestConformanceTinyScanBudget runs the suite with a budget of one row per
// page, so every query pages through short and empty pages.
func TestConformanceTinyScanBudget(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return newStore(t, WithScanBudget(1, time.Hour)) })
}

func TestNewRefusesBadBudget(t *testing.T) {
	t.Parallel()
	for _, opt := range []Option{WithScanBudget(0, time.Second), WithScanBudget(1, 0)} {
		if _, err := New(opt); err == nil {
			t.Error("New accepted an invalid scan budget")
		}
	}
}
