package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/lambdafn"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// scheduledNotification is what EventBridge Scheduler sends a Lambda target
// whose schedule gives no Input ("a default notification", Target.Input in
// the EventBridge Scheduler API reference), as template.yaml's ScheduleV2
// gives none. The purge function reads nothing of it.
const scheduledNotification = `{"version":"0","id":"8f3a2c1e-5b6d-4e7f-9a0b-1c2d3e4f5a6b","detail-type":"Scheduled Event",` +
	`"source":"aws.scheduler","account":"123456789012","time":"2026-11-26T10:00:00Z","region":"us-east-1",` +
	`"resources":["arn:aws:scheduler:us-east-1:123456789012:schedule/default/tablebridge-purge"],"detail":"{}"}`

// TestPurgeFunction runs the real purgetables bootstrap under the Lambda
// Runtime Interface Emulator, invoked as the schedule invokes it: it
// deletes every item of a table deleted more than TABLEBRIDGE_PURGE_GRACE
// ago, leaves a live table's alone, and the next invocation finds nothing
// to do.
func TestPurgeFunction(t *testing.T) {
	endpoint, rie, dir := needBootstraps(t)
	prefix, st := newStackTables(t, "tbpurge")
	ctx := dynamolocal.Context(t, 2*time.Minute)
	const account = auth.DevStoreAccountName
	for _, table := range []string{"doomed", "kept"} {
		if _, err := st.CreateTable(ctx, account, table); err != nil {
			t.Fatal(err)
		}
	}
	entity := func(pk, rk string) *model.Entity {
		return &model.Entity{PartitionKey: pk, RowKey: rk, Timestamp: time.Now().UTC().Truncate(time.Microsecond),
			Properties: map[string]edm.Value{"Payload": edm.NewString("purge me")}}
	}
	for p := range 3 {
		var ops []store.Op
		for r := range 100 {
			ops = append(ops, store.Op{Kind: store.OpInsert, Entity: entity(fmt.Sprintf("p%d", p), fmt.Sprintf("r%03d", r))})
		}
		if err := st.Write(ctx, account, "doomed", ops); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Write(ctx, account, "kept", []store.Op{{Kind: store.OpInsert, Entity: entity("p", "r")}}); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteTable(ctx, account, "doomed"); err != nil {
		t.Fatal(err)
	}

	// The purge function needs no account keys: the secrets endpoint is
	// never called.
	env := append(baseEnv(t, endpoint, "http://127.0.0.1:9", prefix), lambdafn.EnvPurgeGrace+"=1ms")
	f := startRIE(t, rie, deploy.PurgeFunctionName, filepath.Join(dir, deploy.PurgeFunctionName, "bootstrap"), env)
	invoke := func() dynamostore.PurgeReport {
		t.Helper()
		ictx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		out, err := f.invoke(ictx, []byte(scheduledNotification))
		if err != nil {
			t.Fatal(err)
		}
		var rep dynamostore.PurgeReport
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("answer %s: %v", out, err)
		}
		return rep
	}
	if rep := invoke(); rep != (dynamostore.PurgeReport{Tables: 1, Items: 300}) {
		t.Errorf("first invocation = %+v; want the deleted table's 300 items", rep)
	}
	if rep := invoke(); rep != (dynamostore.PurgeReport{}) {
		t.Errorf("second invocation = %+v; want nothing left to do", rep)
	}
	out, err := dynamolocal.Client(t).Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(prefix + "entities"), Select: "COUNT"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 1 {
		t.Errorf("the shared table holds %d items after the purge; want the live table's 1", out.Count)
	}
	if _, err := st.GetEntity(ctx, account, "kept", "p", "r"); err != nil {
		t.Errorf("the live table's entity: %v", err)
	}
}
