// Package dynamostore is the production store.Store on Amazon DynamoDB
// (aws-sdk-go-v2). It keeps Azure Table entities as plain DynamoDB items, so
// the data stays readable with any AWS tool, and spends the fewest requests
// the Azure semantics allow. docs/dynamodb.md says how Azure tables map to
// DynamoDB and why (the shared table, placements, look-ups, the purge, the
// order index, moving and restoring tables); docs/capacity.md what each
// operation costs and where the ceilings are. This comment holds what a
// reader of the code needs besides: the contract, the invariants the code
// relies on, and which file does what.
//
// # Contract
//
//   - New takes a client and Options (store.go), whose zero fields get
//     their defaults in one place (withDefaults); Open builds the client
//     too (awsclient.go). The catalog and the shared table are the
//     deployment's; the store creates them only on a local endpoint.
//   - Point reads and queries with a PartitionKey equality are strongly
//     consistent; a query across partitions reads the order index, a
//     global secondary index, and is eventually consistent. Every query
//     answers in (PartitionKey, RowKey) order, except on a placement
//     without the index, which is scanned in hash order.
//   - Every write stores a Timestamp later than the version it replaces,
//     whichever process's clock stamped it, and hands the stored one back
//     in op.Entity.Timestamp (store.Store.Write), from which the service
//     builds the ETag. The ops of one Write share one Timestamp.
//   - A Write of several ops is one TransactWriteItems: all or nothing. A
//     batch whose large entities take it past DynamoDB's 100 actions or
//     4 MB fails with store.ErrEntityTooLarge on the op that crosses the
//     limit, although Azure might accept it.
//   - Errors: see "Errors" below.
//
// # Invariants
//
// One item format, two places (location.go; docs/design.md, "One item
// format"): a table Create Table makes lives in the shared table under the
// key prefix "<account>/<id>/", with the id a fresh random number, so a
// name created again never sees the old table's items; a table an earlier
// release made in a DynamoDB table of its own is served there, as a
// placement, with an empty prefix. Azure forbids '/' in account names and
// keys, so the prefix ends unambiguously.
//
// Stored keys hold no byte below 0x20 but "\x01", which stands for the
// empty key and, after a RowKey, marks an overflow item (codec.go). Byte
// order of the stored keys is therefore key order, and the order index's
// sort key $o (PartitionKey, a zero byte, RowKey) sorts as the entities do
// (order.go). Attribute names starting with '$' are the store's own: no
// property name (a C# identifier) can hold '$'.
//
// An entity larger than one item is a main item and overflow items, always
// written in one TransactWriteItems and read with TransactGetItems, and
// tagged with one $gen per version (item.go, read.go). Only the main item
// carries the order index attributes ($s, $o), written by the same request
// as the entity, so the index never disagrees with the table about which
// entities exist.
//
// No write reads first: If-Match and the newer-Timestamp rule are
// conditions, and ReturnValuesOnConditionCheckFailure=ALL_OLD hands back
// the stored item when one fails; a write that cannot be exact in one
// request (a chunked entity, a merge that might pass 252 properties or
// 400 KB) fails its fast condition without effect and is redone from that
// item (write.go).
//
// A catalog entry and its 16 copies (copies.go) are written in one
// transaction, and a look-up reads a copy strongly consistently; a process
// keeps a look-up for CatalogCacheTTL and, with Options.ConfirmTable,
// confirms it alongside each operation (location.go). A deleted name is
// given out again only after that TTL plus a second, and its items are
// purged only Options.PurgeGrace after the delete, so a process still
// holding the old id cannot write where a new table or the purge would
// miss it.
//
// # Timestamps
//
// Replace and merge without If-Match carry `attribute_not_exists(Timestamp)
// OR Timestamp < :new`; when the stored version is stamped later, the next
// attempt is conditioned on exactly that version and stamped 100 ns after
// it (raiseTimestamps). An If-Match write is raised before it is sent,
// since If-Match pins the version it replaces. A delete leaves nothing to
// compare with: an entity inserted again by a process whose clock lags may
// get a Timestamp older than the deleted version's.
//
// # Errors
//
// Errors are told apart by their types (errors.As on service/dynamodb/types
// and smithy-go's, errors.Is for system errors such as ECONNREFUSED), never
// by message text; the one exception, an update outgrowing its item (a
// ValidationException, which has no type of its own), is pinned by a test
// against DynamoDB Local (errors_local_test.go). Throttling becomes
// store.ErrBusy (503 ServerBusy, which the Azure SDKs retry); an
// unreachable endpoint, a network failure or a deadline store.ErrUnavailable.
// Every request runs under Options.RequestTimeout. Once any attempt of a
// write may have reached DynamoDB, the write fails with
// store.ErrOutcomeUnknown (500 OperationTimedOut) whatever later attempts
// answered, unless a transaction was cancelled by its own conditions
// (errors.go; SECURITY.md, "What a failed write means").
//
// # Files
//
//   - store.go, awsclient.go, client.go, tune.go: Options and New, the SDK
//     client, its retries and timeouts.
//   - catalog.go, copies.go, tables.go: the catalog's entries and their
//     copies; Create, Delete and Query Tables; stored access policies.
//   - location.go, placement.go: where a table lives; what is still done
//     with the DynamoDB tables of earlier releases.
//   - codec.go, item.go, limits.go: entities as items (attributes, keys,
//     overflow items, sizes).
//   - read.go, write.go, write_exec.go: point reads; writes, their
//     conditions and Timestamps, transactions.
//   - query.go, order.go, merge.go, pagejson.go: queries by PartitionKey,
//     across partitions through the order index, and the page decoder.
//   - purge.go, purgequeue.go, limiter.go: the purge of deleted tables,
//     paced per key.
//   - copy.go, move.go, restore.go: copying a table, for move-to-shared and
//     restore-table.
//   - errors.go: DynamoDB's errors as the store's.
package dynamostore
