package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/lambdafn"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// iamPolicy plays IAM for one function: it lets through only the DynamoDB
// actions template.yaml grants the function (lambdafn's DynamoDBActions,
// which TestTemplateFunctions holds the template to), on the catalog table
// and on the account's tables, and records anything else. Transactions are
// authorized item by item with the underlying action, as IAM does.
type iamPolicy struct {
	fn           string
	catalog      string
	shared       string // the shared layout's table
	tablePrefix  string // TablePrefix + account + "."
	catalogAllow []string
	copyAllow    []string // on the catalog's copies of table entries only (deploy.CatalogCopyKeys)
	dataAllow    []string // on the per-table tables and their indexes
	sharedAllow  []string // on the shared table
	indexAllow   []string // on the shared table's indexes

	mu     sync.Mutex
	denied []string
	used   map[string]bool
}

func newIAMPolicy(f deploy.Function, catalog, shared, tablePrefix string) *iamPolicy {
	c, d := f.DynamoDBActions()
	st, si := f.SharedTableActions()
	return &iamPolicy{fn: f.Name, catalog: catalog, shared: shared, tablePrefix: tablePrefix,
		catalogAllow: c, copyAllow: f.CatalogCopyActions(), dataAllow: d, sharedAllow: st, indexAllow: si, used: map[string]bool{}}
}

// newPurgePolicy is the purge function's policy (deploy.PurgeActions).
// The shared table's Query is granted on its index only, as template.yaml
// does (TestTemplatePurgeFunction): the purge reads a deleted table's
// shards from the order index and deletes items on the table.
func newPurgePolicy(catalog, shared, tablePrefix string) *iamPolicy {
	c, sh, perTable := deploy.PurgeActions()
	p := &iamPolicy{fn: deploy.PurgeFunctionName, catalog: catalog, shared: shared, tablePrefix: tablePrefix,
		catalogAllow: c, dataAllow: perTable, used: map[string]bool{}}
	for _, a := range sh {
		if a == "dynamodb:Query" {
			p.indexAllow = append(p.indexAllow, a)
		} else {
			p.sharedAllow = append(p.sharedAllow, a)
		}
	}
	return p
}

// access is one action on a table, or on an index as "table/index/name"
// (the tail of the index's ARN, which IAM authorizes apart from the
// table's), with the item's partition key on the catalog (what IAM's
// dynamodb:LeadingKeys condition key sees), "" elsewhere.
type access struct{ action, table, leadingKey string }

// catalogKeyOf is the catalog partition key of an item or key, "" for an
// item of another table.
func catalogKeyOf(key map[string]types.AttributeValue) string {
	if s, ok := key["Account"].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func accessesOf(params any) []access {
	one := func(action string, table *string) []access { return []access{{action, aws.ToString(table), ""}} }
	item := func(action string, table *string, key map[string]types.AttributeValue) access {
		return access{action, aws.ToString(table), catalogKeyOf(key)}
	}
	switch in := params.(type) {
	case *dynamodb.QueryInput:
		if in.IndexName != nil {
			return []access{{"dynamodb:Query", aws.ToString(in.TableName) + "/index/" + aws.ToString(in.IndexName), ""}}
		}
		return one("dynamodb:Query", in.TableName)
	case *dynamodb.BatchWriteItemInput:
		// BatchWriteItem is authorized per table it writes, whatever
		// its puts and deletes.
		var out []access
		for table := range in.RequestItems {
			out = append(out, access{"dynamodb:BatchWriteItem", table, ""})
		}
		return out
	case *dynamodb.GetItemInput:
		return []access{item("dynamodb:GetItem", in.TableName, in.Key)}
	case *dynamodb.PutItemInput:
		return []access{item("dynamodb:PutItem", in.TableName, in.Item)}
	case *dynamodb.UpdateItemInput:
		return []access{item("dynamodb:UpdateItem", in.TableName, in.Key)}
	case *dynamodb.DeleteItemInput:
		return []access{item("dynamodb:DeleteItem", in.TableName, in.Key)}
	case *dynamodb.ScanInput:
		return one("dynamodb:Scan", in.TableName)
	case *dynamodb.DescribeTableInput:
		return one("dynamodb:DescribeTable", in.TableName)
	case *dynamodb.CreateTableInput:
		out := one("dynamodb:CreateTable", in.TableName)
		if len(in.Tags) > 0 {
			// Creating a table with tags also needs TagResource.
			out = append(out, access{"dynamodb:TagResource", aws.ToString(in.TableName), ""})
		}
		return out
	case *dynamodb.UpdateTableInput:
		return one("dynamodb:UpdateTable", in.TableName)
	case *dynamodb.UpdateContinuousBackupsInput:
		return one("dynamodb:UpdateContinuousBackups", in.TableName)
	case *dynamodb.DeleteTableInput:
		return one("dynamodb:DeleteTable", in.TableName)
	case *dynamodb.TransactGetItemsInput:
		var out []access
		for _, it := range in.TransactItems {
			out = append(out, item("dynamodb:GetItem", it.Get.TableName, it.Get.Key))
		}
		return out
	case *dynamodb.TransactWriteItemsInput:
		var out []access
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				out = append(out, item("dynamodb:PutItem", it.Put.TableName, it.Put.Item))
			case it.Update != nil:
				out = append(out, item("dynamodb:UpdateItem", it.Update.TableName, it.Update.Key))
			case it.Delete != nil:
				out = append(out, item("dynamodb:DeleteItem", it.Delete.TableName, it.Delete.Key))
			case it.ConditionCheck != nil:
				out = append(out, item("dynamodb:ConditionCheckItem", it.ConditionCheck.TableName, it.ConditionCheck.Key))
			}
		}
		return out
	}
	return []access{{fmt.Sprintf("unknown %T", params), "", ""}}
}

func (p *iamPolicy) allows(a access) bool {
	switch {
	case a.table == p.catalog:
		return slices.Contains(p.catalogAllow, a.action) ||
			slices.Contains(p.copyAllow, a.action) && stringLike(deploy.CatalogCopyKeys, a.leadingKey)
	case a.table == p.shared:
		return slices.Contains(p.sharedAllow, a.action)
	case strings.HasPrefix(a.table, p.shared+"/index/"):
		return slices.Contains(p.indexAllow, a.action)
	case strings.HasPrefix(a.table, p.tablePrefix):
		return slices.Contains(p.dataAllow, a.action)
	}
	return false
}

// stringLike is IAM's StringLike for a pattern whose one wildcard is a
// trailing '*', as deploy.CatalogCopyKeys.
func stringLike(pattern, s string) bool {
	prefix, wild := strings.CutSuffix(pattern, "*")
	if !wild {
		return s == pattern
	}
	return strings.HasPrefix(s, prefix)
}

func (p *iamPolicy) kind(table string) string {
	if table == p.catalog {
		return "catalog"
	}
	return "tables"
}

func (p *iamPolicy) options(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("TestIAM",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				for _, a := range accessesOf(in.Parameters) {
					p.mu.Lock()
					ok := p.allows(a)
					p.used[p.kind(a.table)+" "+a.action] = true
					if !ok {
						p.denied = append(p.denied, a.action+" on "+a.table)
					}
					p.mu.Unlock()
					if !ok {
						return middleware.InitializeOutput{}, middleware.Metadata{}, &smithy.GenericAPIError{
							Code: "AccessDeniedException", Message: fmt.Sprintf("%s is not authorized to perform %s on %s", p.fn, a.action, a.table)}
					}
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
}

// inProcess runs every function's handler in this process, each over its
// own DynamoDB client confined by its IAM policy, as Lambda runs each
// function with its own role.
type inProcess struct {
	handlers map[string]*lambdafn.Handler
	policies map[string]*iamPolicy
	log      *tail
}

func newInProcess(t *testing.T, endpoint, prefix string) *inProcess {
	t.Helper()
	ctx := dynamolocal.Context(t, time.Minute)
	ip := &inProcess{handlers: map[string]*lambdafn.Handler{}, policies: map[string]*iamPolicy{}, log: &tail{max: 4 << 20}}
	logger := slog.New(lambdafn.NewLogHandler(slog.NewJSONHandler(ip.log, nil)))
	catalog := prefix + "catalog"
	for _, f := range deploy.Functions() {
		pol := newIAMPolicy(f, catalog, prefix+"entities", prefix+auth.DevStoreAccountName+".")
		client := dynamolocal.NewClient(endpoint, pol.options, dynamostore.Configure, lambdafn.MeterCapacity)
		// No endpoint: the catalog and the shared table are the stack's,
		// as on AWS (the client is DynamoDB Local's all the same).
		st, err := dynamostore.New(ctx, client, dynamostore.Options{TablePrefix: prefix, ConfirmTable: true})
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		h, err := lambdafn.NewHandler(f, st, []auth.Account{auth.DevStoreAccount()},
			lambdafn.Options{HTTP: httpapi.Options{Logger: logger.With("function", f.Name), LogRequests: true}})
		if err != nil {
			t.Fatal(err)
		}
		ip.handlers[f.Name], ip.policies[f.Name] = h, pol
	}
	return ip
}

// invoke hands the event to the function's handler as the runtime does.
func (ip *inProcess) invoke(ctx context.Context, fn string, payload []byte) ([]byte, error) {
	h := ip.handlers[fn]
	if h == nil {
		return nil, fmt.Errorf("no function %q", fn)
	}
	return h.Invoke(ctx, payload)
}

// TestLeastPrivilege runs the stored events and the SDK scenario with each
// function confined to the DynamoDB actions its policy grants: nothing a
// function does may need more, and every function uses its grants.
func TestLeastPrivilege(t *testing.T) {
	endpoint := dynamolocal.Endpoint(t)
	prefix := dynamolocal.UniqueName("tbiam") + "-"
	// The catalog exists before the functions start, as the template
	// creates it; the template's key schema is the store's.
	ctx := dynamolocal.Context(t, time.Minute)
	admin := dynamolocal.Client(t)
	// The catalog and the shared table exist before the functions start, as
	// the template creates them.
	if _, err := dynamostore.New(ctx, admin, dynamostore.Options{TablePrefix: prefix, Endpoint: endpoint}); err != nil {
		t.Fatal(err)
	}
	checkCatalogSchema(t, admin, prefix+"catalog")

	ip := newInProcess(t, endpoint, prefix)
	// An Origin header on every event makes every function read the
	// account's CORS rules, the catalog read all of them are granted.
	withOrigin := func(ctx context.Context, fn string, payload []byte) ([]byte, error) {
		var ev events.APIGatewayProxyRequest
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, err
		}
		ev.MultiValueHeaders["Origin"] = []string{"https://app.example.com"}
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, err
		}
		return ip.invoke(ctx, fn, b)
	}
	t.Run("events", func(t *testing.T) { runStoredEvents(t, withOrigin) })
	g := newGateway(t, gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: gatewayevent.SampleStage}, ip.invoke)
	t.Run("scenario", func(t *testing.T) { runScenario(t, g, "iamscenario") })
	// The catch-all function behind a Function URL, confined the same way.
	gu := newGateway(t, gatewayevent.Options{Profile: deploy.ProfileFunctionURL}, ip.invoke)
	t.Run("scenario Function URL", func(t *testing.T) { runScenario(t, gu, "iamurlscenario") })
	// Tables of earlier releases, in DynamoDB tables of their own.
	for _, orderIndex := range []bool{true, false} {
		t.Run(fmt.Sprintf("placement with order index %v", orderIndex), func(t *testing.T) {
			runPlacementScenario(t, g, admin, prefix, fmt.Sprintf("iamplacement%v", orderIndex), orderIndex)
		})
	}

	for _, f := range deploy.Functions() {
		pol := ip.policies[f.Name]
		pol.mu.Lock()
		if len(pol.denied) > 0 {
			t.Errorf("%s needed more than its policy grants: %v", f.Name, pol.denied)
		}
		// Actions granted but never used are either paths the scenario does
		// not reach (large entities, crash recovery) or excess; list them.
		c, d := f.DynamoDBActions()
		var unused []string
		for kind, actions := range map[string][]string{"catalog": c, "tables": d} {
			for _, a := range actions {
				if !pol.used[kind+" "+a] {
					unused = append(unused, kind+" "+a)
				}
			}
		}
		slices.Sort(unused)
		pol.mu.Unlock()
		if len(unused) > 0 {
			t.Logf("%-22s granted but not exercised here: %v", f.Name, unused)
		}
	}
	if n := g.fails.Load() + gu.fails.Load(); n != 0 {
		t.Errorf("%d invocations failed", n)
	}
	// Consumed capacity reaches the request log lines.
	metered := 0
	for _, line := range ip.log.jsonLines() {
		if line["msg"] == "request" && line["consumedCapacity"] != nil {
			metered++
		}
	}
	if metered == 0 {
		t.Error("no request line carries consumedCapacity")
	}
}

// runPlacementScenario serves a table as an earlier release created it
// (dynamolocal.CreatePerTable), through g: inserts, reads, queries of a
// partition and across partitions (the order index's, or a Scan), a merge,
// a delete, and Delete Table, which hands the DynamoDB table to the purge.
func runPlacementScenario(t *testing.T, g *gateway, admin *dynamodb.Client, prefix, table string, orderIndex bool) {
	ctx := dynamolocal.Context(t, time.Minute)
	if _, err := dynamolocal.CreatePerTable(ctx, admin, dynamolocal.PerTable{Prefix: prefix, Account: auth.DevStoreAccountName,
		Table: table, OrderIndex: orderIndex}); err != nil {
		t.Fatal(err)
	}
	dev := auth.DevStoreAccount()
	svc := protocoltest.NewServiceClient(t, fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;",
		dev.Name, auth.DevStoreAccountKey, g.accountURL(dev.Name)))
	client := svc.NewClient(table)
	for i := range 6 {
		e := map[string]any{"PartitionKey": fmt.Sprintf("p%d", i%3), "RowKey": fmt.Sprintf("r%d", i), "N": i}
		if _, err := client.AddEntity(ctx, mustJSON(t, e), nil); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	if _, err := client.GetEntity(ctx, "p1", "r1", nil); err != nil {
		t.Fatalf("get: %v", err)
	}
	for _, filter := range []string{"PartitionKey eq 'p2'", "N ge 0"} {
		pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr(filter)})
		n := 0
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatalf("query %q: %v", filter, err)
			}
			n += len(page.Entities)
		}
		if want := map[bool]int{true: 2, false: 6}[strings.HasPrefix(filter, "PartitionKey")]; n != want {
			t.Errorf("query %q: %d entities, want %d", filter, n, want)
		}
	}
	merge := mustJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": "r0", "M": true})
	if _, err := client.UpdateEntity(ctx, merge, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatalf("merge: %v", err)
	}
	if _, err := client.DeleteEntity(ctx, "p0", "r3", nil); err != nil {
		t.Fatalf("delete entity: %v", err)
	}
	if _, err := svc.DeleteTable(ctx, table, nil); err != nil {
		t.Fatalf("delete table: %v", err)
	}
	if _, err := client.GetEntity(ctx, "p1", "r1", nil); azCode(err) != "TableNotFound" {
		t.Fatalf("get after Delete Table: %v; want TableNotFound", err)
	}
}

// TestLeastPrivilegePurge runs the purge as the purge function does on
// AWS (no endpoint: the catalog is a stack resource) over a client
// confined to deploy.PurgeActions: it purges a deleted table's entities
// from the shared table, leaves a live table's, and needs nothing more.
func TestLeastPrivilegePurge(t *testing.T) {
	endpoint := dynamolocal.Endpoint(t)
	prefix := dynamolocal.UniqueName("tbiampurge") + "-"
	ctx := dynamolocal.Context(t, 2*time.Minute)
	const account = auth.DevStoreAccountName
	// The stack's tables, and the tables a request function created and
	// deleted, by a store with every right.
	admin, err := dynamostore.New(ctx, dynamolocal.Client(t), dynamostore.Options{TablePrefix: prefix, Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"doomed", "kept"} {
		if _, err := admin.CreateTable(ctx, account, table); err != nil {
			t.Fatal(err)
		}
		var ops []store.Op
		for r := range 30 {
			ops = append(ops, store.Op{Kind: store.OpInsert, Entity: &model.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", r),
				Timestamp: time.Now().UTC().Truncate(time.Microsecond), Properties: map[string]edm.Value{"Payload": edm.NewString("purge me")}}})
		}
		if err := admin.Write(ctx, account, table, ops); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.DeleteTable(ctx, account, "doomed"); err != nil {
		t.Fatal(err)
	}
	// A table an earlier release created in a DynamoDB table of its own,
	// deleted: the purge deletes the DynamoDB table.
	placement, err := dynamolocal.CreatePerTable(ctx, dynamolocal.Client(t), dynamolocal.PerTable{Prefix: prefix, Account: account, Table: "earlier", OrderIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.DeleteTable(ctx, account, "earlier"); err != nil {
		t.Fatal(err)
	}

	pol := newPurgePolicy(prefix+"catalog", prefix+"entities", prefix+account+".")
	st, err := dynamostore.New(ctx, dynamolocal.NewClient(endpoint, pol.options, dynamostore.Configure),
		dynamostore.Options{TablePrefix: prefix, PurgeGrace: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := st.Purge(ctx)
	if err != nil || rep.Tables != 2 || rep.Items != 30 || rep.Pending != 0 {
		t.Errorf("Purge = %+v, %v; want the deleted table and its 30 items, and the deleted placement", rep, err)
	}
	pol.mu.Lock()
	if len(pol.denied) > 0 {
		t.Errorf("the purge needed more than deploy.PurgeActions grants: %v", pol.denied)
	}
	for _, a := range []string{"catalog dynamodb:Query", "tables dynamodb:Query", "tables dynamodb:BatchWriteItem", "tables dynamodb:DeleteTable"} {
		if !pol.used[a] {
			t.Errorf("the purge did not use %s; used %v", a, pol.used)
		}
	}
	pol.mu.Unlock()
	out, err := dynamolocal.Client(t).Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(prefix + "entities"), Select: "COUNT"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 30 {
		t.Errorf("the shared table holds %d items after the purge; want the live table's 30", out.Count)
	}
	if _, err := admin.GetEntity(ctx, account, "kept", "p", "r00"); err != nil {
		t.Errorf("the live table's entity: %v", err)
	}
	if _, err := dynamolocal.Client(t).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(placement)}); err == nil {
		t.Errorf("the deleted placement's DynamoDB table %s is still there", placement)
	}
}

func checkCatalogSchema(t *testing.T, client *dynamodb.Client, name string) {
	t.Helper()
	out, err := client.DescribeTable(dynamolocal.Context(t, 30*time.Second), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	tpl := loadTemplate(t)
	var want []string
	for _, k := range get(tpl, "Resources", "CatalogTable", "Properties", "KeySchema").Content {
		want = append(want, str(get(k, "AttributeName"))+" "+str(get(k, "KeyType")))
	}
	var got []string
	for _, k := range out.Table.KeySchema {
		got = append(got, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	if !slices.Equal(got, want) {
		t.Errorf("template.yaml's catalog key schema %v, the store's %v", want, got)
	}
	for _, d := range out.Table.AttributeDefinitions {
		if d.AttributeType != types.ScalarAttributeTypeS {
			t.Errorf("catalog attribute %s is %s", aws.ToString(d.AttributeName), d.AttributeType)
		}
	}
}
