package linearize

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Config is what one history does.
type Config struct {
	// Name names the configuration in reports and file names.
	Name string
	// Clients run concurrently (default 8), each Ops operations (default
	// 25) one after the other.
	Clients, Ops int
	// Partitions (default 1) and Rows (default 6, at most 8) are the key
	// set: PartitionKeys p0.., RowKeys r0...
	Partitions, Rows int
	// Timeout bounds each operation (default 10 s); one that runs out is
	// indeterminate.
	Timeout time.Duration
	// SnapshotQueries checks partition queries against the stronger
	// promise (History.SnapshotQueries).
	SnapshotQueries bool
	// Midway, when set, runs once when half of the operations are done,
	// while the clients go on: a fault in the middle of a history, such
	// as a kill -9 and restart of the server. It calls barrier once no
	// write sent before can still land (the server that got it is dead),
	// if it knows such an instant (History.Barriers).
	Midway func(barrier func())
	// Pause is how long a client waits after an operation that was not
	// performed, so that a server that is down is not flooded.
	Pause time.Duration
	// Large is the share of writes (0 to 1) that carry a large payload,
	// so that entities outgrow one DynamoDB item (Props.Large).
	Large float64
	// Histories is how many histories Test records (default 2; EnvHistories
	// overrides it).
	Histories int
	// CreateTable, when set, creates each history's table (of the
	// account devstoreaccount1) instead of Create Table through the
	// first client: a table as the store keeps it from an earlier
	// release, for instance.
	CreateTable func(ctx context.Context, name string) error
}

func (c Config) withDefaults() Config {
	if c.Clients <= 0 {
		c.Clients = 8
	}
	if c.Ops <= 0 {
		c.Ops = defaultOps
	}
	if c.Partitions <= 0 {
		c.Partitions = 1
	}
	if c.Rows <= 0 {
		c.Rows = 6
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Pause <= 0 {
		c.Pause = 20 * time.Millisecond
	}
	return c
}

// defaultOps is how many operations a client sends per history by default.
const defaultOps = 25

var tableSeq atomic.Uint64

// Run records one history: it creates a fresh table through svcs[0]
// (whose SDK retries must be off, as every svcs'), runs the clients of cfg
// on it with the workload seed chooses, client c through svcs[c %
// len(svcs)] (servers over one store, each with its own clock or cache, as
// Lambda execution environments are), and returns what they did.
func Run(ctx context.Context, cfg Config, seed uint64, svcs ...*aztables.ServiceClient) (*History, error) {
	if len(svcs) == 0 {
		return nil, errors.New("linearize: Run needs a service client")
	}
	cfg = cfg.withDefaults()
	if cfg.Rows > maxRows || cfg.Clients > maxClients {
		return nil, fmt.Errorf("linearize: %d rows and %d clients, at most %d and %d", cfg.Rows, cfg.Clients, maxRows, maxClients)
	}
	h := &History{Name: cfg.Name, Seed: seed, Clients: cfg.Clients, SnapshotQueries: cfg.SnapshotQueries}
	for i := range cfg.Partitions {
		h.PartitionKeys = append(h.PartitionKeys, fmt.Sprintf("p%d", i))
	}
	for i := range cfg.Rows {
		h.RowKeys = append(h.RowKeys, fmt.Sprintf("r%d", i))
	}
	name := fmt.Sprintf("hist%016x%d", seed, tableSeq.Add(1))
	create := cfg.CreateTable
	if create == nil {
		create = func(ctx context.Context, name string) error { return createTable(ctx, svcs[0], name) }
	}
	if err := create(ctx, name); err != nil {
		return nil, err
	}
	start := time.Now()
	var (
		done    atomic.Int64
		midway  sync.WaitGroup
		clients sync.WaitGroup
		barrier atomic.Int64
	)
	total := int64(cfg.Clients * cfg.Ops)
	recorded := make([][]Op, cfg.Clients)
	for c := range cfg.Clients {
		clients.Add(1)
		go func() {
			defer clients.Done()
			w := newWorkload(seed, c, h.PartitionKeys, h.RowKeys, cfg.Large)
			r := &recorder{table: svcs[c%len(svcs)].NewClient(name), start: start, timeout: cfg.Timeout}
			for range cfg.Ops {
				op := w.next()
				r.do(ctx, op)
				w.observe(op)
				recorded[c] = append(recorded[c], *op)
				if done.Add(1) == total/2 && cfg.Midway != nil {
					midway.Go(func() { cfg.Midway(func() { barrier.Store(time.Since(start).Nanoseconds()) }) })
				}
				if op.Outcome == NotPerformed {
					time.Sleep(cfg.Pause)
				}
			}
		}()
	}
	clients.Wait()
	midway.Wait()
	if b := barrier.Load(); b != 0 {
		h.Barriers = append(h.Barriers, b)
	}
	for _, ops := range recorded {
		h.Ops = append(h.Ops, ops...)
	}
	slices.SortStableFunc(h.Ops, func(a, b Op) int { return cmp.Compare(a.Call, b.Call) })
	return h, ctx.Err()
}

// createTable creates the history's table before any fault is injected;
// a busy or lost answer is retried, and a retry finding the table made by
// the attempt before succeeds.
func createTable(ctx context.Context, svc *aztables.ServiceClient, name string) error {
	for attempt := 1; ; attempt++ {
		_, err := svc.CreateTable(ctx, name, nil)
		var re *azcore.ResponseError
		switch {
		case err == nil:
			return nil
		case attempt > 1 && errors.As(err, &re) && re.ErrorCode == "TableAlreadyExists":
			return nil
		case attempt < 10 && ctx.Err() == nil && (!errors.As(err, &re) || re.StatusCode >= 500):
			time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
			continue
		}
		return fmt.Errorf("linearize: create table %s: %w", name, err)
	}
}
