// Package loadgen is the engine behind `tablebridge bench`: a load generator
// that drives any Azure Table endpoint (tablebridge on bbolt, tablebridge on
// DynamoDB, Azurite) with N concurrent clients and reports throughput and
// latency per phase.
//
// It speaks the wire protocol itself, over raw net/http, the way the Go
// aztables SDK does: the same headers (x-ms-version 2019-02-02,
// DataServiceVersion 3.0, Accept application/json;odata=minimalmetadata), the
// same SharedKeyLite signature (shared/auth's signer: string-to-sign =
// x-ms-date + "\n" + "/" + account + escaped path [+ "?comp=" + value]), and
// byte-for-byte the same $batch multipart body as aztables'
// transactional_batch.go. Doing it by hand rather than through the SDK keeps
// the client cheap: on a small machine the client and the server share the
// CPU, so every microsecond the client spends is one the server does not
// get. Entity bodies are precomputed templates, responses are checked
// without decoding them, and the x-ms-date string is cached per second.
//
// A run creates one table named <prefix><random hex>, executes the requested
// phases in order and deletes the table again:
//
//   - insert: single-entity inserts (POST /<table>) of distinct keys, each
//     entity about -entity-size bytes of JSON: ten properties covering all
//     eight Edm types (four with @odata.type annotations), one String
//     padded to the size; unpadded it is about 400 bytes, the minimum.
//   - get: point reads (GET /<table>(PartitionKey='..',RowKey='..')) of
//     random existing entities.
//   - query: whole-partition scans (GET /<table>()?$filter=PartitionKey eq
//     '..') of -partition-size rows, following x-ms-continuation-* headers;
//     it reports partition scans/s, pages/s and rows/s.
//   - batch: entity group transactions (POST /$batch) of 100 inserts into one
//     partition; it reports transactions/s and entities/s.
//
// The get and query phases read a seed data set that is loaded (untimed) with
// batches when a phase first needs it; get prefers the keys the insert phase
// wrote when that phase ran.
//
// With Config.DynamoDBEndpoint the same phases, keys, concurrency and
// properties go straight to DynamoDB (e.g. DynamoDB Local) through a plain
// aws-sdk-go-v2 client, as the calls a hand-written app would make: PutItem
// with attribute_not_exists, GetItem and Query with ConsistentRead, and
// TransactWriteItems of conditional Puts, on items holding the properties as
// native attributes. That run is the baseline against which tablebridge's
// overhead on DynamoDB is measured; the report names its mode.
//
// Every loop is bounded by a per-phase duration or an operation count, and
// each request has its own timeout. Traffic goes only to the configured
// endpoint, and only to loopback addresses unless AllowRemote is set: the
// dialer itself refuses any other address, so a DNS name cannot smuggle load
// onto the network. Failures are counted and the first few distinct ones are
// reported verbatim; nothing is retried or hidden. Latencies go into a
// log-linear histogram (HDR style, <1% relative error) per worker, merged at
// the end of each phase, so recording costs no locks or allocations.
package loadgen
