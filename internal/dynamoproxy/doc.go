// Package dynamoproxy is test tooling: a loopback HTTP proxy in front of
// DynamoDB Local that does what AWS DynamoDB does and DynamoDB Local does
// not. It counts which partition key each request touches and the capacity
// units it takes, throttles a key that takes more than a configured rate,
// and injects the faults of a real network and a busy service.
//
//	p, err := dynamoproxy.Start(dynamoproxy.Config{
//		Upstream: dynamolocal.Endpoint(t),
//		Capacity: dynamoproxy.Capacity{ReadUnits: 30, WriteUnits: 10}, // per key per second
//		Faults:   dynamoproxy.RandomFaults(seed, dynamoproxy.FaultRates{LoseAnswer: 0.05}),
//	})
//	defer p.Close()
//	// Give the SDK (or TABLEBRIDGE_DYNAMODB_ENDPOINT) p.URL().
//	before := p.Stats()
//	... the workload ...
//	key, usage, share := p.Stats().Since(before).Hottest()
//
// It speaks DynamoDB's JSON 1.0 protocol (X-Amz-Target
// DynamoDB_20120810.<Op>). Requests keep the Host their client signed;
// DynamoDB Local does not verify signatures, so a body the proxy changed
// (below) needs no new one. Every answer carries an X-Amz-Crc32 of the body
// actually sent, which the AWS SDKs check. Answers are not compressed.
//
// # Which keys, how many units
//
// The item operations (GetItem, Query, Scan, PutItem, UpdateItem,
// DeleteItem, BatchGetItem, BatchWriteItem, TransactGetItems,
// TransactWriteItems) are accounted; the control plane and PartiQL pass
// through and are only counted by operation (Stats.Ops). The proxy learns
// each table's key schema, global secondary indexes, ARNs and billing mode
// with one DescribeTable per table, sent with the client's credentials
// (DynamoDB Local keeps a database per access key and region) and
// forgotten when a CreateTable, DeleteTable or UpdateTable of that table
// passes.
//
// A request touches a Key (table or index, partition key value): a read
// the key it reads (a Query on an index, the index's key); a write its
// table key, and on each global secondary index the key of the entry it
// removes (old item) and of the one it adds (new item), when the items have
// the index's key attributes. A Scan reads every partition; it counts on
// its table or index as a whole (Hash "") and is never throttled.
//
// The units are DynamoDB Local's own: the proxy sets ReturnConsumedCapacity
// INDEXES on every request and reads the answer, which follows AWS's rules
// (4 KB a read unit, per item for GetItem and BatchGetItem, on the total
// for Query and Scan, half for eventually consistent reads, twice for
// TransactGetItems; 1 KB a write unit on the larger of the old and new
// item, twice for TransactWriteItems; index writes on the index). The
// client gets ConsumedCapacity only as it asked. To know the old and new
// items it asks for them too: ReturnValues ALL_OLD (PutItem, DeleteItem)
// or ALL_NEW (UpdateItem) on tables with indexes, and
// ReturnValuesOnConditionCheckFailure ALL_OLD on every single-item write,
// taking out of the answer what the client did not ask for. A write whose
// condition fails costs the write units of the larger of the stored and
// the new item ("Capacity unit consumption for write operations"); DynamoDB
// Local reports nothing for it, so the proxy prices it from the stored item
// (size.go has DynamoDB's item size rules). Before a batch or transaction
// that writes several items or writes to a table with indexes, and before
// an update that names an index key attribute, it reads the old items (one
// consistent BatchGetItem, neither counted nor faulted); after such a
// request it reads the new items of its updates that the answer did not
// carry. Where one request touches
// several keys of a table or index, the units DynamoDB Local reports there
// are split among them by what each item would cost alone.
//
// # The capacity model
//
// Capacity gives each Key a token bucket of read units and one of write
// units per second, holding Burst (default one second) of them; AWS's
// figures are PartitionReadUnits and PartitionWriteUnits, tests scale them
// down. A request may proceed while every bucket it needs holds more than
// zero units; it is charged after its answer, with the units counted, so a
// bucket can go below zero and the requests after it wait until it refills.
// Over time each key passes its rate plus its burst, plus what requests
// admitted together at the last positive moment took. Clock is injectable.
//
// A request that finds a bucket empty is not forwarded and gets DynamoDB's
// answer, HTTP 400 ("Error Handling"; the members as the SDK's service
// model names them):
//
//   - on an on-demand table (BillingMode PAY_PER_REQUEST), ThrottlingException
//     with "message" and "throttlingReasons"; on a provisioned one
//     ProvisionedThroughputExceededException with "message" and
//     "ThrottlingReasons". The reason is TableRead, TableWrite, IndexRead or
//     IndexWrite followed by KeyRangeThroughputExceeded, with the table's
//     or index's ARN as resource ("ThrottlingReason", API Reference; "Key
//     range throughput exceeded (hot partitions)", Developer Guide: the
//     limit type of a hot partition in both modes). The message is the
//     service's (see answers.go): on demand "Throughput exceeds the current
//     capacity of your table or index..." (for a write throttled by an
//     index "...for one or more global secondary indexes..."), provisioned
//     "The level of configured provisioned throughput for the table was
//     exceeded..." (or "...for one or more global secondary indexes...");
//   - TransactWriteItems and TransactGetItems: TransactionCanceledException,
//     CancellationReasons in the request's order, ThrottlingError (on
//     demand) or ProvisionedThroughputExceeded (provisioned) on the items
//     throttled and None on the others, the Message "Transaction cancelled,
//     please refer cancellation reasons for specific reasons [None,
//     ThrottlingError]" (TransactionCanceledException, API Reference);
//   - BatchWriteItem and BatchGetItem forward what is not throttled and
//     return the throttled items in UnprocessedItems or UnprocessedKeys (as
//     sent, with the table's ConsistentRead and projection); only when every
//     item is throttled do they fail, with the exception above
//     (BatchWriteItem and BatchGetItem, API Reference).
//
// # Faults
//
// Config.Faults, a Policy, chooses a Fault for each item request from what
// it touches and which attempt of its call it is; RandomFaults is a seeded
// one for concurrent histories. Throttle and Conflict are answered without
// forwarding (nothing applied); LoseAnswer applies then resets the
// connection; InFlight resets the connection first and applies later; Slow
// delays before or after applying, past the client's deadline. A
// TransactWriteItems whose ClientRequestToken belongs to an attempt still
// running (held by a fault, or just not answered yet) is answered
// TransactionInProgressException, as DynamoDB answers it; an InFlight
// attempt is held until such a retry has been told so. Every fault
// injected, InProgress answers included, is listed by Proxy.Faults with the
// status DynamoDB gave the request when it was forwarded. Proxy.Settle
// waits until every request received has finished upstream.
//
// # What is approximated
//
//   - Partitions are keys. DynamoDB's limits hold per partition, which
//     holds many keys, and it splits a hot partition for heat; the model
//     holds one bucket per key, the ceiling a single hot key meets (a key
//     is never split). There is no table, account or provisioned-table
//     limit, and no burst capacity beyond Burst: a throttle is always
//     KeyRangeThroughputExceeded.
//   - Charging after the answer lets concurrent requests overshoot a
//     bucket once before it throttles.
//   - The old and new items the proxy reads itself (batches, transactions,
//     updates that move an index key) are read just before or after the
//     write; a concurrent write to the same item in between can make the
//     index keys or the split of units follow the other write.
//   - A transaction cancelled by its own conditions, and any request
//     DynamoDB Local refuses other than a failed single-item condition, is
//     charged nothing.
//   - The policy's random choices follow the order requests arrive in,
//     which concurrent clients do not fix: a seed reproduces the sequence
//     of choices, not which request got which.
//   - Delays of faults run on real time; Delay 0 waits on an event instead
//     (the client giving up, a retry), which tests should prefer.
package dynamoproxy
