package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/store"
)

// API is the part of *dynamodb.Client the store uses.
type API interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	TransactGetItems(context.Context, *dynamodb.TransactGetItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error)
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DeleteTable(context.Context, *dynamodb.DeleteTableInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTable(context.Context, *dynamodb.UpdateTableInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// Options are everything a Store needs: where DynamoDB is, the
// deployment's tables, and how the store paces and bounds its work. The
// functions (lambdafn.Config.Store) and the CLI (its store flags) fill
// them in one step; the zero value of each field picks its default, and
// withDefaults sets the defaults and what derives from the fields, once.
type Options struct {
	// Endpoint is DynamoDB's endpoint: "" for AWS's, or a URL such as
	// http://127.0.0.1:8000 for DynamoDB Local. Open and NewClient build
	// the client for it; New takes the client it is given, and reads
	// Endpoint only for this: on a local endpoint (a loopback address or
	// localhost: DynamoDB Local) the store creates the catalog and the
	// shared table when they are missing, at New and whenever a request
	// finds them gone (a DynamoDB Local restarted in memory). Anywhere
	// else they are the stack's resources, with point-in-time recovery:
	// New fails without the catalog and requests answer 503 until it is
	// restored, since a catalog created empty would silently lose the
	// list of tables.
	Endpoint string
	// Region overrides the region of the AWS config chain (which, when it
	// names none, off AWS, is us-east-1).
	Region string
	// TablePrefix starts the names of the deployment's DynamoDB tables,
	// so several deployments can share a region. It may hold letters,
	// digits, '_', '-' and '.'.
	TablePrefix string
	// CatalogTable names the catalog table. Default: TablePrefix + "catalog".
	CatalogTable string
	// SharedTable names the DynamoDB table that holds every Azure table
	// Create Table creates, of every account (see doc.go). Default:
	// TablePrefix + "entities". Tables of earlier releases that have a
	// DynamoDB table of their own stay there, where their catalog entry
	// says (placements, see location.go).
	SharedTable string
	// RequestTimeout bounds each DynamoDB request (retries included) when
	// the caller's context allows longer. Default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// TableWaitTimeout bounds how long the store waits for a DynamoDB
	// table to become ACTIVE: the catalog or the shared table it creates
	// on a local endpoint, a placement whose deletion protection the purge
	// lifted. Default 25 s.
	TableWaitTimeout time.Duration
	// QueryTimeBudget ends a query page early, with a continuation, once it
	// has read this long, as Azure stops after about 5 s. Default 5 s.
	QueryTimeBudget time.Duration
	// QueryByteBudget ends a query page early once the entities it holds
	// reach this many DynamoDB bytes, so a page fits a Lambda response
	// (6 MB). Default store.PageByteBudget.
	QueryByteBudget int
	// CatalogCacheTTL is how long a catalog look-up is trusted (see
	// location.go). Default 1 s.
	CatalogCacheTTL time.Duration
	// ConfirmTable makes every entity operation that starts from a cached look-up confirm it with a concurrent catalog
	// read (onTable), so a table deleted by another process is missing at
	// once. The Lambda functions set it: each execution environment has
	// its own cache. A lone process (serve) needs no confirmation: its own
	// Delete Table empties its cache.
	ConfirmTable bool
	// PurgeGrace is how long after Delete Table its entities are left
	// alone before the purge deletes them, so that a write sent just
	// before the delete, from a process whose cache still held the table,
	// cannot land behind the purge. Default 1 minute.
	PurgeGrace time.Duration
	// MoveSettle is how long MoveToShared waits after freezing a table's
	// writes before it copies the table: longer than any process keeps a
	// look-up from before the freeze (CatalogCacheTTL) plus the longest a
	// write already sent may take to land (the functions' 29 s). Default
	// DefaultMoveSettle.
	MoveSettle time.Duration
	// PurgeRate bounds how many items a second one purger deletes, of all
	// the tables it works on. Default 4,000: with the order index's copy,
	// 8,000 write units a second of items up to 1 KB, a fifth of what an
	// on-demand table takes by default (40,000), leaving the rest to the
	// deployment's traffic (docs/dynamodb.md, "The purge").
	PurgeRate int
	// PurgeKeyRate bounds how many items a second a purge deletes under
	// one partition key, an entity PartitionKey's or an order index
	// shard's. Default 500: half the 1,000 write units DynamoDB takes on a
	// key, for items up to 1 KB, which leaves room for the other traffic
	// of a partition the key shares.
	PurgeKeyRate int
	// PurgeEvery, when set, makes the store purge deleted tables in the
	// background at this interval until Close (the local server does;
	// on AWS a scheduled function calls Purge).
	PurgeEvery time.Duration
	// Logger receives the background purge's reports. Default: none.
	Logger *slog.Logger

	// createsTables is derived from Endpoint (withDefaults): the store
	// creates the catalog and the shared table when they are missing.
	createsTables bool
}

// Defaults the CLI shows in its flags' help.
const (
	DefaultRequestTimeout = 10 * time.Second
	DefaultMoveSettle     = 35 * time.Second
)

func (o Options) withDefaults() Options {
	o.createsTables = isLocalEndpoint(o.Endpoint)
	if o.CatalogTable == "" {
		o.CatalogTable = o.TablePrefix + "catalog"
	}
	if o.SharedTable == "" {
		o.SharedTable = o.TablePrefix + "entities"
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.TableWaitTimeout <= 0 {
		o.TableWaitTimeout = 25 * time.Second
	}
	if o.QueryTimeBudget <= 0 {
		o.QueryTimeBudget = 5 * time.Second
	}
	if o.QueryByteBudget <= 0 {
		o.QueryByteBudget = store.PageByteBudget
	}
	if o.CatalogCacheTTL <= 0 {
		o.CatalogCacheTTL = time.Second
	}
	if o.PurgeGrace <= 0 {
		o.PurgeGrace = time.Minute
	}
	if o.MoveSettle <= 0 {
		o.MoveSettle = DefaultMoveSettle
	}
	if o.PurgeRate <= 0 {
		o.PurgeRate = 4000
	}
	if o.PurgeKeyRate <= 0 {
		o.PurgeKeyRate = 500
	}
	return o
}

// Store is the DynamoDB implementation of store.Store.
type Store struct {
	db   API
	opts Options
	// noIndex maps a physical table found without a usable order index to
	// the time.Time until which its queries Scan (see merge.go).
	noIndex sync.Map
	// indexSeen holds the physical tables whose order index has answered a
	// Query: their queries read every shard at once (see merger.fill).
	indexSeen sync.Map
	// recreating serializes re-creations of a lost catalog table.
	recreating sync.Mutex
	// cache holds catalog look-ups (location.go).
	cache locations
	// copyTurn picks the copy of a catalog entry the next look-up reads
	// (copies.go).
	copyTurn atomic.Uint32
	// stopPurger ends the background purge (Options.PurgeEvery) and waits
	// for it.
	stopPurger func()
	// leaseFor is how long a purger holds a table: purgeLease, shorter
	// only in tests.
	leaseFor time.Duration
}

var _ store.Store = (*Store)(nil)

// New returns a store on client, which must reach opts.Endpoint. On a local
// endpoint it creates the catalog and the shared table when they are
// missing, waiting until they are ACTIVE; elsewhere it checks that the
// catalog exists.
func New(ctx context.Context, client API, opts Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("dynamostore: nil client")
	}
	opts = opts.withDefaults()
	if !validTableChars(opts.TablePrefix) {
		return nil, fmt.Errorf("dynamostore: table prefix %q: use letters, digits, '_', '-' or '.'", opts.TablePrefix)
	}
	for _, t := range []struct{ what, name string }{{"catalog", opts.CatalogTable}, {"shared", opts.SharedTable}} {
		if n := len(t.name); n < 3 || n > 255 || !validTableChars(t.name) {
			return nil, fmt.Errorf("dynamostore: %s table name %q is not a valid DynamoDB table name", t.what, t.name)
		}
	}
	s := &Store{db: tuneClient(client), opts: opts, leaseFor: purgeLease}
	s.copyTurn.Store(rand.Uint32())
	if !opts.createsTables {
		if err := s.requireCatalog(ctx); err != nil {
			return nil, err
		}
	} else if err := s.ensureDeploymentTables(ctx); err != nil {
		return nil, err
	}
	if opts.PurgeEvery > 0 {
		s.stopPurger = s.startPurger(opts.PurgeEvery)
	}
	return s, nil
}

// Close stops the background purge, if any; the client belongs to the
// caller.
func (s *Store) Close() error {
	if s.stopPurger != nil {
		s.stopPurger()
	}
	return nil
}

func validTableChars(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// call bounds one DynamoDB request by RequestTimeout.
func (s *Store) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.RequestTimeout)
}

// ensureCatalog creates the catalog table unless it exists, and waits until
// it is ACTIVE. Its hash key is the account, its range key names the item:
// "table:" + lower-cased table name, or "service". An UPDATING table (a
// billing mode, throughput or stream change, which may take an hour) "remains
// available for data operations" (DynamoDB's TableStatus reference), so it
// is used as it is rather than waited for.
func (s *Store) ensureCatalog(ctx context.Context) error {
	return s.ensureTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(s.opts.CatalogTable),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: keyAttributeDefinitions(catAccount, catKey),
		KeySchema:            keySchema(catAccount, catKey),
	})
}

// ensureDeploymentTables creates the catalog and the shared table unless
// they exist, on a local endpoint (Options.Endpoint); on AWS template.yaml
// declares both, and the store makes neither.
func (s *Store) ensureDeploymentTables(ctx context.Context) error {
	if err := s.ensureCatalog(ctx); err != nil {
		return err
	}
	return s.ensureTable(ctx, s.sharedTableInput())
}

// requireCatalog checks that the catalog table exists, and fails as a
// request that finds it missing does (catalogErr) when it does not. It
// reads one item that does not exist: a data-plane read, where a
// DescribeTable at every cold start would count against the AWS account's
// control-plane rate, which everything else in the account shares.
func (s *Store) requireCatalog(ctx context.Context) error {
	cctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.db.GetItem(cctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.opts.CatalogTable),
		Key:       catalogKey(probeAccount, probeAccount),
	})
	if isTableMissing(err) {
		return fmt.Errorf("dynamostore: the catalog table %s does not exist: deploy the stack (or restore the table) first; "+
			"only a local endpoint (DynamoDB Local) creates it on its own: %w", s.opts.CatalogTable, store.ErrUnavailable)
	}
	if err != nil {
		return mapErr("read catalog "+s.opts.CatalogTable, err)
	}
	return nil
}

// probeAccount is the catalog partition requireCatalog reads; no account
// name starts with '$'.
const probeAccount = "$probe"

// ensureTable creates a table of the deployment (the catalog, the shared
// table) unless it exists, and waits until it is ACTIVE.
func (s *Store) ensureTable(ctx context.Context, in *dynamodb.CreateTableInput) error {
	name := aws.ToString(in.TableName)
	cctx, cancel := s.call(ctx)
	out, err := s.db.DescribeTable(cctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	cancel()
	if err == nil && out.Table != nil {
		switch out.Table.TableStatus {
		case types.TableStatusActive, types.TableStatusUpdating:
			return nil
		}
	}
	if err != nil && !isTableMissing(err) {
		return mapErr("describe table "+name, err)
	}
	if err != nil {
		cctx, cancel := s.call(ctx)
		_, err = s.db.CreateTable(cctx, in)
		cancel()
		if err != nil && !isTableInUse(err) { // created concurrently
			return mapErr("create table "+name, err)
		}
	}
	return s.waitActive(ctx, name)
}

func keyAttributeDefinitions(hash, rng string) []types.AttributeDefinition {
	return []types.AttributeDefinition{
		{AttributeName: aws.String(hash), AttributeType: types.ScalarAttributeTypeS},
		{AttributeName: aws.String(rng), AttributeType: types.ScalarAttributeTypeS},
	}
}

func keySchema(hash, rng string) []types.KeySchemaElement {
	return []types.KeySchemaElement{
		{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String(rng), KeyType: types.KeyTypeRange},
	}
}

// waitActive waits, at most TableWaitTimeout, until a table is ACTIVE.
func (s *Store) waitActive(ctx context.Context, name string) error {
	w := dynamodb.NewTableExistsWaiter(s.db, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 200 * time.Millisecond
		o.MaxDelay = 2 * time.Second
	})
	err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, s.opts.TableWaitTimeout)
	if err != nil {
		if ctx.Err() == nil && apiCode(err) == "" && !isNetworkError(err) {
			// The waiter's own deadline: the table is still CREATING.
			return fmt.Errorf("dynamostore: table %s not ACTIVE after %v: %w: %w", name, s.opts.TableWaitTimeout, store.ErrUnavailable, err)
		}
		return mapErr("wait for table "+name, err)
	}
	return nil
}

// isLocalEndpoint reports whether endpoint is explicit and on this machine
// (a loopback address or localhost): DynamoDB Local, not AWS.
func isLocalEndpoint(endpoint string) bool {
	if endpoint == "" {
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
