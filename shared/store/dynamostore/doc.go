// Package dynamostore is the production store.Store on Amazon DynamoDB
// (aws-sdk-go-v2). It keeps Azure Table entities as plain DynamoDB items, so
// the data stays readable with any AWS tool, and it spends the fewest
// requests the Azure semantics allow.
//
// # Tables
//
// Each Azure table is one DynamoDB table named TablePrefix + account + "." +
// lower-cased table name (bytes outside [A-Za-z0-9-] escaped as _xx), with
// hash key PartitionKey (S), range key RowKey (S) and on-demand
// (PAY_PER_REQUEST) capacity. A catalog table (Options.CatalogTable, created
// by New when missing) holds, per account, each table's name in the case it
// was created with (names are case-insensitive but keep their case), its
// state and its stored access policies, and the account's service
// properties document.
//
// CreateTable returns once the new DynamoDB table is ACTIVE (bounded by
// Options.TableWaitTimeout). While DynamoDB still drops a deleted table, its
// name answers store.ErrTableBeingDeleted, as Azure answers 409
// TableBeingDeleted. See tables.go for the catalog states and how a crashed
// create or delete is finished by the next CreateTable.
//
// Quota: an AWS account may have 2,500 DynamoDB tables per region by default,
// adjustable to 10,000 through Service Quotas, and one table per Azure table
// counts against it (plus the catalog). Beyond it, or with more than 500
// tables being created or deleted at once, CreateTable fails with
// store.ErrBusy (DynamoDB's LimitExceededException), which the service
// answers 503 ServerBusy, as Azure does for account limits.
//
// # Entities
//
// An entity is one item: PartitionKey, RowKey, Timestamp (ISO 8601, 7
// fractional digits) and one attribute per property, in its most natural
// DynamoDB type; Int64, DateTime, Guid and the doubles DynamoDB's numbers
// cannot hold (NaN, ±Infinity, -0, 5E-324, 1.7976931348623157E308, ...) or
// would read back as Int32 are stored under the property name followed by
// "@", so every value round-trips bit for bit with no attribute beyond one
// per property (see codec.go). Empty keys, which DynamoDB rejects and Azure allows, are stored
// as "\x01", a control character Azure forbids in keys, which keeps the key
// order. DynamoDB limits keys to 2048 (PartitionKey) and 1024 (RowKey) bytes
// of UTF-8; Azure's 1 KiB-character keys can be longer, and those get
// store.ErrKeyTooLong. System attributes ($n, $chunks, $gen) start with
// '$', which no C# identifier (Azure's rule for property names) can contain.
//
// An item holds 400 KB, an Azure entity 1 MiB. A larger entity is split, by
// whole properties, into a main item and overflow items whose RowKey is the
// entity's followed by "\x01" and a digit, so they sort right after it and
// queries skip them. They are written, replaced and deleted together in one
// TransactWriteItems and read together with TransactGetItems, so the entity
// stays atomic. An entity that fits one item pays nothing for this.
//
// # Requests per operation
//
//	GetEntity               1 GetItem (consistent); +1 TransactGetItems if chunked
//	insert                  1 PutItem
//	replace, upsert         1 PutItem
//	merge, merge-upsert     1 UpdateItem (SET each property)
//	delete                  1 DeleteItem
//	Write of several ops    1 TransactWriteItems (DynamoDB's 100 actions and
//	                        4 MB, like Azure's 100 operations and 4 MiB)
//	QueryEntities           Query (PartitionKey equality) or Scan pages
//
// Overflow items are extra actions in a batch's transaction: a batch of
// large entities that would pass DynamoDB's 100 actions or 4 MiB fails with
// store.ErrEntityTooLarge on the op that crosses the limit, although Azure
// might accept it.
//
// None reads before it writes: conditions carry If-Match, and
// ReturnValuesOnConditionCheckFailure=ALL_OLD tells a missing entity from a
// changed one. Chunked entities, and merges whose result might pass 252
// properties or 400 KB, take 2-3 requests: the fast write fails its
// condition without effect and is redone exactly from the stored version
// (see write.go). The merge limits are therefore enforced exactly: 252
// properties through a condition on $n, an upper bound of the property
// count that each merge raises by the properties it sends (a merge it turns
// away is redone exactly, which resets it), 1 MiB by measuring the merged
// entity on the slow path (a single item can never exceed it).
//
// # Queries
//
// A query with a PartitionKey equality is a DynamoDB Query with the RowKey
// bounds in its key condition, in RowKey order. Any other query is a Scan:
// DynamoDB orders partitions by the hash of the PartitionKey, not by its
// value, so such results come partition by partition in no particular order
// (each partition whole and in RowKey order). Cosmos DB's Table API behaves
// the same way. The filter is evaluated exactly in Go; a page stops at Top
// matches, at the end of the data, or when Options.QueryTimeBudget (5 s, as
// Azure) or Options.QueryByteBudget runs out, and may then hold fewer
// entities with a continuation. The continuation is the key of the last
// entity examined.
//
// # Errors
//
// Throttling (ProvisionedThroughputExceededException, ThrottlingException,
// RequestLimitExceeded) becomes store.ErrBusy (503 ServerBusy, which the
// Azure SDKs retry); an unreachable endpoint, a network failure or a
// deadline becomes store.ErrUnavailable. Every request runs under
// Options.RequestTimeout, so nothing hangs. The client's own retries apply
// below that; Configure sets sensible ones.
package dynamostore
