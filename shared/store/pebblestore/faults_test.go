package pebblestore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/store/pebblestore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// logFault fails the engine's log (its *.log files) while on: every call
// of the given kinds returns errorfs.ErrInjected, as a disk that fails a
// write or an fsync does.
type logFault struct {
	on    atomic.Bool
	kinds []errorfs.OpKind
}

func (f *logFault) MaybeError(op errorfs.Op) error {
	if f.on.Load() && strings.HasSuffix(op.Path, ".log") && slices.Contains(f.kinds, op.Kind) {
		return errorfs.ErrInjected
	}
	return nil
}

func (f *logFault) String() string { return "log fault" }

// syncedLog is a log that records what the store reported.
type syncedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestLogFailures fails the log's syncs, then its writes, under 8 clients
// inserting through the real handler with the Go SDK, on Pebble's
// fault-injecting file system over its crashable in-memory one. The write
// that meets the failure is answered 500 OperationTimedOut (it may or may
// not be on disk), never 2xx; every request after it is refused with 503
// ServerBusy, reads included, and the store says why in its log. After a
// crash at that moment (only what was synced survives) the store opens
// again with every acknowledged insert, and takes writes.
func TestLogFailures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		kinds []errorfs.OpKind
	}{
		{"Sync", []errorfs.OpKind{errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo}},
		{"Write", []errorfs.OpKind{errorfs.OpFileWrite, errorfs.OpFileWriteAt}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			mem := vfs.NewCrashableMem()
			fault := &logFault{kinds: c.kinds}
			var log syncedLog
			st, err := pebblestore.Open("data", pebblestore.WithFS(errorfs.Wrap(mem, fault)), pebblestore.WithLog(&log),
				pebblestore.WithMemory(1<<20, 1<<20))
			if err != nil {
				t.Fatal(err)
			}
			srv := protocoltest.New(t, tablebridgetest.WithStore(st))
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			svc := srv.Client()
			if _, err := svc.CreateTable(ctx, "faults", nil); err != nil {
				t.Fatal(err)
			}
			client := svc.NewClient("faults")

			var (
				mu       sync.Mutex
				acked    []string
				statuses = map[int]int{}
				wg       sync.WaitGroup
			)
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						rk := fmt.Sprintf("w%d-%06d", w, i)
						_, err := client.AddEntity(ctx, fmt.Appendf(nil, `{"PartitionKey":"p","RowKey":%q}`, rk), nil)
						var re *azcore.ResponseError
						switch {
						case err == nil:
							mu.Lock()
							acked = append(acked, rk)
							mu.Unlock()
							continue
						case errors.As(err, &re):
							mu.Lock()
							statuses[re.StatusCode]++
							mu.Unlock()
							if re.StatusCode == http.StatusServiceUnavailable {
								return // refused: the store has stopped
							}
						default:
							t.Errorf("insert %s: %v", rk, err)
							return
						}
					}
				}()
			}
			waitUntil(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 50 })
			fault.on.Store(true)
			wg.Wait()

			if statuses[http.StatusInternalServerError] == 0 {
				t.Errorf("no insert was answered 500 when the log failed: %v", statuses)
			}
			for status := range statuses {
				if status != http.StatusInternalServerError && status != http.StatusServiceUnavailable {
					t.Errorf("an insert was answered %d (%v); want 500 or 503 only", status, statuses)
				}
			}
			_, err = client.GetEntity(ctx, "p", acked[0], nil)
			if re := (*azcore.ResponseError)(nil); !errors.As(err, &re) || re.StatusCode != http.StatusServiceUnavailable || re.ErrorCode != "ServerBusy" {
				t.Errorf("a read after the failure: %v; want 503 ServerBusy", err)
			}
			if !strings.Contains(log.String(), "stopped") {
				t.Errorf("the store's log does not say it stopped: %q", log.String())
			}

			// The crash: what was synced is all that is left.
			crashed := mem.CrashClone(vfs.CrashCloneCfg{})
			st.Close() // after the failure it may report the broken log
			st, err = pebblestore.Open("data", pebblestore.WithFS(crashed), pebblestore.WithMemory(1<<20, 1<<20))
			if err != nil {
				t.Fatalf("reopen after the failure: %v", err)
			}
			defer st.Close()
			srv = protocoltest.New(t, tablebridgetest.WithStore(st))
			client = srv.Client().NewClient("faults")
			for _, rk := range acked {
				if _, err := client.GetEntity(ctx, "p", rk, nil); err != nil {
					t.Fatalf("acknowledged insert %s lost: %v", rk, err)
				}
			}
			if _, err := client.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"after"}`), nil); err != nil {
				t.Errorf("insert after reopening: %v", err)
			}
			t.Logf("%d inserts acknowledged, then %v", len(acked), statuses)
		})
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
