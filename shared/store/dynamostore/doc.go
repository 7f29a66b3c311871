// Package dynamostore is the production store.Store on Amazon DynamoDB
// (aws-sdk-go-v2). It keeps Azure Table entities as plain DynamoDB items, so
// the data stays readable with any AWS tool, and it spends the fewest
// requests the Azure semantics allow.
//
// # One item format, two places
//
// Create Table puts every Azure table of the deployment, of every account,
// in one DynamoDB table (Options.SharedTable; see "Shared layout" below).
// Tables the releases before it created keep their DynamoDB table of their
// own and are served where they are: a placement, whose catalog entry
// names that table and no id (location.go; docs/design.md, "One item
// format"). Both hold entities as the same items; only the key prefix
// differs. Nothing creates a per-table DynamoDB table any more; `dynamodb
// move-to-shared` (move.go) brings a placement into the shared table.
//
// # Shared layout
//
// Why: the Table service lets an account hold any number of tables, while
// an AWS account holds 2,500 DynamoDB tables per region by default (10,000
// at most), shared with everything else it runs; and DynamoDB's CreateTable
// leaves a table CREATING for seconds, which Create Table would have to
// wait out on the request path.
//
// Keys: the hash key PartitionKey holds "<account>/<id>/" and the encoded
// Azure PartitionKey, the range key RowKey the encoded RowKey; every
// property stays its own attribute, as in a placement, so items
// stay readable with AWS tools. The id is a random 64-bit number (16 hex
// digits) the catalog assigns at Create Table: a table deleted and created
// again under the same name never sees the old one's entities. Azure
// forbids '/' in keys and account names, so the prefix ends unambiguously;
// it leaves 2,048 bytes minus its length (about 40) for the PartitionKey.
// The order index (see "Ordered layout") has the same name and sort key,
// and its hash key $s is a string, "<account>/<id>/<shard>", so each shard
// of each Azure table is one index partition.
//
// Catalog: Create Table is one conditional Put of an active entry with a
// fresh id, so two racing creates cannot both win, and nothing waits.
// Delete Table reads the entry and marks it deleted in one
// TransactWriteItems that also adds a purge item; from then on Get Table,
// Query Tables and every entity operation answer as for a missing table.
// Both write the entry's copies (copies.go) in the same transaction. The
// purge (purge.go) deletes the items later, resumably, tables and shards in
// parallel under Options.PurgeRate and Options.PurgeKeyRate, from a
// scheduled Lambda function on AWS and from the server itself on `serve`,
// then removes the tombstone. It costs a write unit per item (twice: the
// index's copy too), where a placement's DeleteTable is free.
//
// Look-ups: an entity operation must know its table's id. It reads one of
// the 16 copies of the table's catalog entry, each under a partition key
// of its own (copies.go: no key carries more than a sixteenth of a table's
// look-ups, and no two tables share one), with one consistent GetItem, and
// keeps it for CatalogCacheTTL (1 s). This process's own Delete Table
// drops the entry at once. Another process (another Lambda execution
// environment) would serve a deleted table for up to the TTL, so with
// Options.ConfirmTable (the functions set it) an operation started from
// the cache reads a copy too, concurrently, and counts only if it still
// names the same table (location.go, onTable). Two rules keep the
// remaining window harmless: a deleted name is given out again only after
// the TTL plus a second for clock differences (until then Create Table
// answers 409 TableBeingDeleted, as Azure does for about 40 s after a
// delete; the id would allow re-creating at once, but a process still
// holding the old id could then write to it after the client saw the new
// table), and the purge starts only PurgeGrace (1 minute) after the
// delete, so no write sent just before it lands behind the purge.
//
// Throughput: every Azure table shares the one DynamoDB table's limits:
// on demand, 40,000 read and 40,000 write units per second by default
// (raised through Service Quotas), against Azure's scalability target of
// 20,000 entities per second for a whole storage account. One busy Azure
// table spreads over DynamoDB partitions by its PartitionKeys, as in a
// placement (each partition takes 1,000 WCU and 3,000 RCU per second), and
// its index writes over 20 shards.
//
// # The catalog
//
// A catalog table (Options.CatalogTable, created by New when missing on a
// local endpoint only, see Options.Endpoint) holds, per account, each table's name in the case it was
// created with (names are case-insensitive but keep their case), where it
// lives, its state and its stored access policies, and the account's
// service properties document. Placements are named TablePrefix + account
// + "." + lower-cased table name (bytes outside [A-Za-z0-9-] escaped as
// _xx); their entries name that table. An entry an earlier release's
// per-table Create or Delete Table left half way (creating, deleting) is no
// table, and the next Create Table of the name hands its DynamoDB table to
// the purge (placement.go).
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
// store.ErrKeyTooLong. System attributes ($n, $chunks, $gen, $s, $o) start with
// '$', which no C# identifier (Azure's rule for property names) can contain.
//
// An item holds 400 KB, an Azure entity 1 MiB. A larger entity is split, by
// whole properties, into a main item and overflow items whose RowKey is the
// entity's followed by "\x01" and a digit, so they sort right after it and
// queries skip them. They are written, replaced and deleted together in one
// TransactWriteItems and read together with TransactGetItems, so the entity
// stays atomic. An entity that fits one item pays nothing for this.
//
// # Reading items
//
// One codec: every item is read as the SDK's attribute values and decoded
// by decodeItems (codec.go), GetItem and TransactGetItems included, with
// one exception, kept because a whole-request benchmark shows it pays: a
// Query or Scan page of plain single-item entities is read from the
// response JSON straight into entities (pagejson.go), which costs the
// server less CPU per query than the SDK's token-by-token decoder and
// decodeItems (figures: docs/performance.md, "DynamoDB overhead").
// The page decoder calls codec.go's scalar decoders, so the Edm rules live
// once; a page holding anything else (a chunked entity's items, another
// tool's attributes) goes to the SDK whole and through decodeItems, and a
// differential test and a fuzz target hold the page decoder to the SDK's
// result. Point reads showed no measurable difference, so they take the
// SDK's path.
//
// # Requests per operation
//
//	GetEntity               1 GetItem (consistent); +1 TransactGetItems if chunked
//	insert                  1 PutItem
//	replace, upsert         1 PutItem
//	merge, merge-upsert     1 UpdateItem (SET each property)
//	                        (+1 for a replace or merge whose stored version
//	                        is stamped later, see Timestamps)
//	delete                  1 DeleteItem
//	Write of several ops    1 TransactWriteItems (DynamoDB's 100 actions and
//	                        4 MB, like Azure's 100 operations and 4 MiB)
//	QueryEntities           Query (PartitionKey equality), a Query per order
//	                        index shard, or Scan pages (a placement
//	                        without the index)
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
// # Timestamps
//
// The service stamps each write from its process's clock, and Lambda
// execution environments have independent clocks, so a write can carry a
// Timestamp older than the version it replaces. Yet incremental sync by
// `Timestamp ge` needs an entity's Timestamp to only increase, and the ETag
// is the Timestamp, so two versions must never share one. Without a read
// before each write:
//
//   - Replace and merge without If-Match carry the condition
//     `attribute_not_exists(Timestamp) OR Timestamp < :new`. In the common
//     case (clocks roughly agree, writes to one entity not within the skew)
//     it holds and the write is still one request.
//   - When it fails, ALL_OLD hands back the stored item: the next attempt
//     is conditioned on exactly that version and stamped 100 ns after its
//     Timestamp (raiseTimestamps), one request more. A writer that raced
//     in between makes it go round again, as any condition failure does.
//   - An If-Match write's Timestamp must exceed the one it matches: it is
//     raised locally before the request, no condition needed, since the
//     If-Match pins that version.
//   - All ops of one Write keep sharing one Timestamp when raised (a batch
//     has one Timestamp, as on Azure).
//
// The Timestamp stored is handed back in op.Entity.Timestamp
// (store.Store.Write), from which the service builds the ETag it answers.
// Limit: a delete leaves nothing to compare with, so an entity inserted
// again after a delete by a process whose clock lags may get a Timestamp
// older than the deleted version's (never equal to the version it
// replaces, since there is none).
//
// # Queries
//
// A query with a PartitionKey equality is a DynamoDB Query of the table with
// the RowKey bounds in its key condition, in RowKey order, strongly
// consistent. Any other query reads the order index (next section) and comes
// in (PartitionKey, RowKey) order, as on Azure; on a table without the index
// it is a Scan, which walks partitions in DynamoDB's hash order (each
// partition whole and in RowKey order, as Cosmos DB's Table API answers).
// The filter is evaluated exactly in Go; a page stops at Top matches, at the
// end of the data, or when Options.QueryTimeBudget (5 s, as Azure) or
// Options.QueryByteBudget runs out, and may then hold fewer entities with a
// continuation. The continuation is the key of the last entity examined, and
// a page resumes strictly after it. store.Page.ItemsRead counts the items
// DynamoDB read (ScannedCount) for the request log.
//
// # Ordered layout
//
// DynamoDB orders a table by the hash of its hash key, so the shared table
// (and each placement created since the index existed) also has a global
// secondary index, order-20, that holds the entities in key order:
//
//   - hash key $s (N), the shard: FNV-1a of the stored keys mod 20. The
//     whole key, not the PartitionKey alone: a query across partitions
//     reads every shard anyway, so keeping a partition in one shard would
//     save no read, while spreading every partition over all shards keeps
//     one busy partition (Azure's target: 2,000 entities/s) from passing
//     the 1,000 WCU/s of a single index partition.
//   - range key $o (B): stored PartitionKey, a zero byte, stored RowKey.
//     Stored keys never hold a zero byte (Azure forbids control characters
//     and the empty key is "\x01"), so byte order is key order, a
//     PartitionKey that is a prefix of another included. Binary, because a
//     truncated encoding (below) may end inside a UTF-8 sequence.
//   - projection ALL: a filter on any property reads no table item.
//
// N = 20 comes from the index's per-partition limits, 1,000 WCU and 3,000
// RCU per second. Every entity write is also an index write, so 20 evenly
// loaded shards take 20,000 writes/s of entities up to 1 KB (Azure's
// scalability target for a whole storage account) and 60,000 RCU of reads
// before DynamoDB has to split a shard for heat. More shards would raise
// that, but every query across partitions costs a Query per shard (at
// least 0.5 RCU each, run concurrently for the first page); 20 keeps a
// small page cheap.
//
// Reads (merge.go): each shard is queried with "$s = :shard AND $o BETWEEN
// :lo AND :hi", the bounds taken from the PartitionKey range and the
// cursor, reading ceil(wanted/20)+1 items at a time and only once its
// previous items are merged; a k-way merge by key yields the page. A
// PartitionKey range therefore reads its own entities plus at most a page
// per shard, and a "PartitionKey gt" bound with $top reads about Top plus
// two per shard, whatever the table holds. RowKey and property conditions
// are applied to what the range reads.
//
// Long keys: a sort key holds 1,024 bytes, a PartitionKey up to 2,048 and a
// RowKey 1,024. $o keeps the first 1,024 bytes of the encoding, which
// preserves order weakly: only keys whose encodings share those bytes tie.
// The reader holds back a shard's trailing group of tied items until it has
// read past the group, then sorts it by the full keys, so the order stays
// exact; such a group is read into memory whole, which only happens for
// keys with a PartitionKey near a kilobyte.
//
// Writes: $s and $o are attributes of the main item, written by the same
// PutItem, UpdateItem (a merge SETs them, so a merge-upsert creates an
// indexed item) or TransactWriteItems as the entity, so the index never
// disagrees with the table about which entities exist. Overflow items of
// large entities never carry them and stay out of the index. They are
// written in a placement without the index too (they add the keys' length
// and a few bytes to an item).
//
// Consistency: a global secondary index is eventually consistent, and
// DynamoDB offers no consistent read of one. A query across partitions
// may miss an entity written just before it, still return one just deleted,
// or return an entity's previous version, for as long as DynamoDB takes to
// propagate the write to the index: normally a fraction of a second, longer
// while the index is throttled. Point reads and PartitionKey-equality
// queries stay strongly consistent.
//
// Cost: each entity write writes the index too (WCU by the item's size,
// like the table write), and the index stores a copy of every entity, so
// write capacity and storage about double.
//
// Placements without the index (created before it existed, or by the
// unordered layout of earlier releases): a Query of the index answers
// "does not have the specified index" (DescribeTable, not the message,
// tells it from a backfilling index, see orderIndexUnusable); the query
// then Scans, and the store Scans that table for a minute before trying
// the index again. MoveToShared (`tablebridge dynamodb move-to-shared`)
// gives the table the index: it computes $s and $o for every entity it
// copies, those written before they existed included.
//
// # Errors
//
// Errors are told apart by their types (errors.As on service/dynamodb/types
// and smithy-go's, errors.Is for system errors such as ECONNREFUSED),
// never by message text; the one exception, an update outgrowing its item
// (a ValidationException, which has no type of its own), is pinned by a
// test against DynamoDB Local (errors_local_test.go).
//
// Throttling (ProvisionedThroughputExceededException, ThrottlingException,
// RequestLimitExceeded) becomes store.ErrBusy (503 ServerBusy, which the
// Azure SDKs retry); an unreachable endpoint, a network failure or a
// deadline becomes store.ErrUnavailable. Every request runs under
// Options.RequestTimeout, so nothing hangs. The client's own retries apply
// below that; Configure sets sensible ones.
//
// A write must not answer 503 ("not performed") when it may have been
// applied. Once any attempt of a write may have reached DynamoDB (its
// answer lost, a timeout, a 500), the write fails with
// store.ErrOutcomeUnknown (500 OperationTimedOut) whatever the later
// attempts answered: throttled retries, or TransactionInProgressException,
// which proves the first attempt of the same ClientRequestToken is still
// running (and may yet apply). The one definite answer after such an
// attempt is a transaction cancelled by its own conditions: a retry with
// the token of an applied transaction succeeds instead. Catalog writes
// follow the same rule (catalogWrite).
package dynamostore
