package dynamostore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/store"
)

// TestMoveToShared moves tables that the per-table layout wrote into the
// shared table: every entity (a chunked one, empty keys, every Edm type)
// reads back the same, queries keep their order, writes are refused while
// the table is frozen and work after, the old DynamoDB table goes to the
// purge, and a move stopped after its freeze resumes with the same id.
func TestMoveToShared(t *testing.T) {
	t.Parallel()
	old := newTestStore(t)
	ctx := dynamolocal.Context(t, testTimeout)
	var written []*store.Op
	for _, name := range []string{"Moved", "Resumed"} {
		if _, err := old.CreateTable(ctx, "acct", name); err != nil {
			t.Fatal(err)
		}
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
	opts.SharedTable = opts.TablePrefix + "entities"
	opts.MoveSettle = 500 * time.Millisecond
	opts.PurgeGrace = time.Millisecond
	opts.CatalogCacheTTL = 50 * time.Millisecond
	s, err := New(ctx, dynamolocal.Client(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ensureTable(ctx, s.sharedTableInput()); err != nil {
		t.Fatal(err)
	}
	phys, _ := old.physicalName("acct", "Moved")
	items := 0
	if err := old.scanTable(ctx, phys, func(page []item) error { items += len(page); return nil }); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var rep MoveReport
	go func() {
		var err error
		rep, err = s.MoveToShared(ctx, "acct", "Moved")
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
	if again, err := s.MoveToShared(ctx, "acct", "Moved"); err != nil || again.Moved {
		t.Errorf("moving a moved table again = %+v, %v; want nothing to do", again, err)
	}
	time.Sleep(5 * time.Millisecond) // PurgeGrace
	if rep, err := s.Purge(ctx); err != nil || rep.Tables != 1 {
		t.Errorf("Purge after the move = %+v, %v; want the old DynamoDB table", rep, err)
	}
	if status, err := s.tableStatus(ctx, rep.Physical); err != nil || status != "" {
		t.Errorf("the old DynamoDB table after the purge: %q, %v", status, err)
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
	if rep, err := s.MoveToShared(ctx, "acct", "Resumed"); err != nil || !rep.Moved || rep.Items != 1 {
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
