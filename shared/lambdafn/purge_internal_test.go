package lambdafn

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// TestPurgeHandlerKeepsItsMargin: an invocation whose deadline is less than
// purgeMargin away returns at once without deleting anything, since a
// purge Lambda kills mid-way keeps its lease until the lease runs out; the
// same store with time to spare purges the table, so the first call had
// work it left alone.
func TestPurgeHandlerKeepsItsMargin(t *testing.T) {
	ctx := dynamolocal.Context(t, 2*time.Minute)
	prefix := dynamolocal.UniqueName("tbpurgemargin") + "-"
	// sent counts the requests that reach the HTTP client.
	var sent atomic.Int32
	client := dynamolocal.Client(t, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("countSent",
				func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
					sent.Add(1)
					return next.HandleDeserialize(ctx, in)
				}), middleware.After)
		})
	})
	st, err := dynamostore.New(ctx, client, dynamostore.Options{
		Endpoint: dynamolocal.Endpoint(t), TablePrefix: prefix, PurgeGrace: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	const account = auth.DevStoreAccountName
	if _, err := st.CreateTable(ctx, account, "doomed"); err != nil {
		t.Fatal(err)
	}
	e := &model.Entity{PartitionKey: "p", RowKey: "r", Timestamp: time.Now().UTC().Truncate(time.Microsecond),
		Properties: map[string]edm.Value{"Payload": edm.NewString("purge me")}}
	if err := st.Write(ctx, account, "doomed", []store.Op{{Kind: store.OpInsert, Entity: e}}); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteTable(ctx, account, "doomed"); err != nil {
		t.Fatal(err)
	}
	items := func() int32 {
		t.Helper()
		out, err := dynamolocal.Client(t).Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(prefix + "entities"), Select: "COUNT"})
		if err != nil {
			t.Fatal(err)
		}
		return out.Count
	}

	purge := purgeHandler(st)
	short, cancel := context.WithDeadline(ctx, time.Now().Add(purgeMargin/2))
	defer cancel()
	before := sent.Load()
	rep, err := purge(short)
	if n := sent.Load() - before; n != 0 {
		t.Errorf("with less than purgeMargin left the purge sent %d requests; want none", n)
	}
	// Purge finds no time to read the catalog's purge items, and says so
	// with the deadline's error; the next scheduled invocation resumes.
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with less than purgeMargin left the purge returned %v; want its deadline's error", err)
	}
	if rep.Tables != 0 || rep.Items != 0 {
		t.Errorf("with less than purgeMargin left the purge reported %+v; want nothing done", rep)
	}
	if n := items(); n != 1 {
		t.Fatalf("with less than purgeMargin left the shared table holds %d items; want the deleted table's 1 untouched", n)
	}

	long, cancel := context.WithDeadline(ctx, time.Now().Add(purgeMargin+time.Minute))
	defer cancel()
	before = sent.Load()
	if rep, err := purge(long); err != nil || rep.Tables != 1 || rep.Items != 1 {
		t.Errorf("with time to spare: %+v, %v; want the table and its 1 item purged", rep, err)
	}
	if sent.Load() == before {
		t.Error("the purge with time to spare sent no request the counter saw")
	}
	if n := items(); n != 0 {
		t.Errorf("after the purge the shared table holds %d items; want none", n)
	}
}
