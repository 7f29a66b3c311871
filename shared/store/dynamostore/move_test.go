package dynamostore

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/dynamoproxy"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/store"
)

// TestMoveToShared moves placements, tables an earlier release created in
// DynamoDB tables of their own, into the shared table: every entity (a chunked one, empty keys, every Edm type)
// reads back the same, queries keep their order, writes are refused while
// the table is frozen and work after, the old DynamoDB table goes to the
// purge, and a move stopped after its freeze resumes with the same id.
func TestMoveToShared(t *testing.T) {
	t.Parallel()
	old := newTestStore(t)
	ctx := dynamolocal.Context(t, testTimeout)
	var written []*store.Op
	for _, name := range []string{"Moved", "Resumed"} {
		createPlacement(t, old, "acct", name, true)
	}
	for i := range 30 {
		e := newEntity(fmt.Sprintf("p%d", i%4), fmt.Sprintf("r%02d", i), props{"I": edm.NewInt64(int64(i) << 40), "D": edm.NewDouble(0.1 * float64(i)),
			"S": edm.NewString("s"), "B": edm.NewBoolean(i%2 == 0), "T": edm.NewDateTime(testTime), "G": edm.NewGuid("00000000-0000-0000-0000-000000000001")})
		written = append(written, &store.Op{Kind: store.OpInsert, Entity: e})
	}
	large := newEntity("", "", props{})
	for i := range 3 {
		large.Properties[fmt.Sprintf("Bin%d", i)] = edm.NewBinary(make([]byte, 300_000))
	}
	written = append(written, &store.Op{Kind: store.OpInsert, Entity: large})
	for _, op := range written {
		if err := old.Write(ctx, "acct", "Moved", []store.Op{*op}); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Write(ctx, "acct", "Resumed", []store.Op{{Kind: store.OpInsert, Entity: newEntity("p", "r", nil)}}); err != nil {
		t.Fatal(err)
	}

	opts := old.opts
	opts.MoveSettle = 500 * time.Millisecond
	opts.PurgeGrace = time.Millisecond
	opts.CatalogCacheTTL = 50 * time.Millisecond
	s, err := New(ctx, dynamolocal.Client(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	items := len(scanAll(t, old, dynamolocal.PerTableName(opts.TablePrefix, "acct", "Moved")))
	done := make(chan error, 1)
	var rep MoveReport
	go func() {
		var err error
		rep, err = s.MoveToShared(ctx, "acct", "Moved", CopyOptions{})
		done <- err
	}()
	// Frozen: writes refused before they are sent, reads go on.
	for deadline := time.Now().Add(30 * time.Second); ; {
		it, err := s.readEntry(ctx, "test", "acct", "Moved")
		if err != nil {
			t.Fatal(err)
		}
		if stringAttr(it, catMoving) != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the move never froze the table")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Write(ctx, "acct", "Moved", []store.Op{{Kind: store.OpReplace, Entity: newEntity("p0", "r00", nil)}}); !errors.Is(err, store.ErrBusy) {
		t.Errorf("write to a frozen table: %v; want ErrBusy", err)
	}
	if _, err := s.GetEntity(ctx, "acct", "Moved", "p1", "r01"); err != nil {
		t.Errorf("read of a frozen table: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("MoveToShared: %v", err)
	}
	if !rep.Moved || rep.Items != items || items <= len(written) {
		t.Errorf("report %+v; want moved, the old table's %d items (overflow items included)", rep, items)
	}
	for _, op := range written {
		got, err := s.GetEntity(ctx, "acct", "Moved", op.Entity.PartitionKey, op.Entity.RowKey)
		if err != nil {
			t.Fatalf("GetEntity(%q, %q) after the move: %v", op.Entity.PartitionKey, op.Entity.RowKey, err)
		}
		if diff := entityDiff(got, op.Entity); diff != "" {
			t.Errorf("(%q, %q) after the move: %s", op.Entity.PartitionKey, op.Entity.RowKey, diff)
		}
	}
	page, err := s.QueryEntities(ctx, "acct", "Moved", store.Query{Top: 1000})
	if err != nil || len(page.Entities) != len(written) || page.Entities[0].PartitionKey != "" || page.Entities[1].RowKey != "r00" {
		t.Fatalf("query after the move: %d entities, %v", len(page.Entities), err)
	}
	if err := s.Write(ctx, "acct", "Moved", []store.Op{{Kind: store.OpReplace, Entity: newEntity("p0", "r00", nil)}}); err != nil {
		t.Errorf("write after the move: %v", err)
	}
	if again, err := s.MoveToShared(ctx, "acct", "Moved", CopyOptions{}); err != nil || again.Moved {
		t.Errorf("moving a moved table again = %+v, %v; want nothing to do", again, err)
	}
	time.Sleep(5 * time.Millisecond) // PurgeGrace
	if rep, err := s.Purge(ctx); err != nil || rep.Tables != 1 {
		t.Errorf("Purge after the move = %+v, %v; want the old DynamoDB table", rep, err)
	}
	if _, err := s.describe(ctx, rep.Physical); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("the old DynamoDB table after the purge: %v; want it gone", err)
	}

	// A move that stopped after its freeze: the entry holds the id.
	if _, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.opts.CatalogTable),
		Key:                       tableKey("acct", "Resumed"),
		UpdateExpression:          aws.String("SET #m = :id"),
		ExpressionAttributeNames:  map[string]string{"#m": catMoving},
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": str("00000000000000aa")},
	}); err != nil {
		t.Fatal(err)
	}
	if rep, err := s.MoveToShared(ctx, "acct", "Resumed", CopyOptions{}); err != nil || !rep.Moved || rep.Items != 1 {
		t.Fatalf("resumed move = %+v, %v", rep, err)
	}
	it, err := s.readEntry(ctx, "test", "acct", "Resumed")
	if err != nil || stringAttr(it, catID) != "00000000000000aa" || stringAttr(it, catMoving) != "" {
		t.Errorf("entry after the resumed move: %v, %v", it, err)
	}
	if _, err := s.GetEntity(ctx, "acct", "Resumed", "p", "r"); err != nil {
		t.Errorf("entity after the resumed move: %v", err)
	}
}

// TestMoveToSharedUnderCapacity moves a table spread over 60
// PartitionKeys through dynamoproxy's model of DynamoDB's per-key capacity,
// scaled down to 5 write and 15 read units a second on every key. With the
// move's own per-key bounds at the same figures, nothing is throttled, and
// the busiest key (an order index shard of the new id) carries a small
// share of the move's write units: the move passes many times one key's
// capacity. With bounds four times the model's, and a fifth of the batch
// requests throttled whole besides, DynamoDB throttles (whole requests, or
// items left unprocessed) and the move still completes, verified.
func TestMoveToSharedUnderCapacity(t *testing.T) {
	t.Parallel()
	const keyWrite, keyRead = 5, 15
	throttleBatches := dynamoproxy.RandomFaults(31, dynamoproxy.FaultRates{Throttle: 0.2})
	for _, c := range []struct {
		name   string
		bound  int // the move's per-key bounds, in multiples of the model's
		faults dynamoproxy.Policy
	}{{"bounded", 1, nil}, {"over", 4, func(r dynamoproxy.Request) dynamoproxy.Fault {
		if r.Op == "BatchWriteItem" || r.Op == "BatchGetItem" {
			return throttleBatches(r)
		}
		return dynamoproxy.Fault{}
	}}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			old := newTestStore(t)
			ctx := dynamolocal.Context(t, testTimeout)
			createPlacement(t, old, "acct", "Spread", true)
			const keys, perKey = 60, 2
			for i := range keys {
				var ops []store.Op
				for j := range perKey {
					ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity(fmt.Sprintf("p%03d", i), fmt.Sprintf("r%d", j), benchProps(i))})
				}
				if err := old.Write(ctx, "acct", "Spread", ops); err != nil {
					t.Fatal(err)
				}
			}
			proxy, err := dynamoproxy.Start(dynamoproxy.Config{Upstream: dynamolocal.Endpoint(t),
				Capacity: dynamoproxy.Capacity{WriteUnits: keyWrite, ReadUnits: keyRead}, Faults: c.faults})
			if err != nil {
				t.Fatal(err)
			}
			defer proxy.Close()
			opts := old.opts
			opts.MoveSettle = 10 * time.Millisecond
			s, err := New(ctx, dynamolocal.NewClient(proxy.URL(), Configure), opts)
			if err != nil {
				t.Fatal(err)
			}
			before := proxy.Stats()
			progress := &phases{}
			rep, err := s.MoveToShared(ctx, "acct", "Spread", CopyOptions{Rate: 100_000, Progress: progress, keyWriteUnits: c.bound * keyWrite, keyReadUnits: c.bound * keyRead})
			if err != nil || rep.Items != keys*perKey {
				t.Fatalf("MoveToShared = %+v, %v; want %d items", rep, err, keys*perKey)
			}
			copying := progress.want(t, "Spread", "copying", rep.Items)
			progress.want(t, "Spread", "verifying", rep.Items)
			var throttles int64
			var units, hottest float64
			var hot dynamoproxy.Key
			for k, u := range proxy.Stats().Since(before).Keys {
				throttles += u.Throttles
				if k.Table != opts.SharedTable {
					continue
				}
				units += u.WriteUnits
				if u.WriteUnits > hottest {
					hot, hottest = k, u.WriteUnits
				}
			}
			t.Logf("%d items copied in %v (%.0f items/s, one key takes %d write units/s), frozen %v; %d throttled; hottest key %v: %.0f of %.0f write units",
				rep.Items, copying, float64(rep.Items)/copying.Seconds(), keyWrite, rep.Frozen, throttles, hot, hottest, units)
			if want := c.faults != nil; (throttles > 0) != want {
				t.Errorf("%d requests or items throttled; want throttling: %v", throttles, want)
			}
			if hottest > units/10 {
				t.Errorf("the hottest key %v took %.0f of the move's %.0f write units; want at most a tenth", hot, hottest, units)
			}
			for _, i := range []int{0, keys - 1} {
				if _, err := s.GetEntity(ctx, "acct", "Spread", fmt.Sprintf("p%03d", i), "r1"); err != nil {
					t.Errorf("entity after the move: %v", err)
				}
			}
		})
	}
}

// scanAll returns every item of a DynamoDB table, as stored.
func scanAll(t testing.TB, s *Store, table string) []item {
	t.Helper()
	var items []item
	in := &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)}
	for {
		out, err := s.db.Scan(dynamolocal.Context(t, testTimeout), in)
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		items = append(items, out.Items...)
		if out.LastEvaluatedKey == nil {
			return items
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// phases is a Progress that records each phase: its total, the items
// added and how long it took.
type phases struct {
	mu   sync.Mutex
	seen []phase
}

type phase struct {
	name, phase  string
	total, added int64
	start        time.Time
	took         time.Duration
	ended        bool
	err          error
}

func (p *phases) Begin(name, ph string, total, done int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, phase{name: name, phase: ph, total: total, added: done, start: time.Now()})
}

func (p *phases) Add(name string, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen[len(p.seen)-1].added += n
}

func (p *phases) End(name string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	last := &p.seen[len(p.seen)-1]
	last.ended, last.err, last.took = true, err, time.Since(last.start)
}

// want asserts that the last phase ph of name ended well having counted
// items, and returns how long it took.
func (p *phases) want(t testing.TB, name, ph string, items int) time.Duration {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.seen) - 1; i >= 0; i-- {
		if f := p.seen[i]; f.name == name && f.phase == ph {
			if !f.ended || f.err != nil || f.added != int64(items) {
				t.Errorf("progress of %s %s: %+v; want %d items, ended well", ph, name, f, items)
			}
			return f.took
		}
	}
	t.Errorf("progress: no %s %s in %+v", ph, name, p.seen)
	return 0
}
