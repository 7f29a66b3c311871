// Package migrate is the engine behind tablebridge migrate, verify, export
// and import: it copies Azure tables, entity for entity and type for type,
// from any Azure Table endpoint (Azure, Azurite, Cosmos DB's Table API,
// another tablebridge) into a tablebridge, and proves the copy.
// docs/migration.md is the commands' reference (flags, checkpoints,
// following a live source, the export format) and docs/performance.md,
// "Migration throughput", their figures; this comment says how the engine
// keeps those promises.
//
// # Sources and destinations
//
// A Source reads pages of entities; a Dest upserts them. Endpoint is both,
// over the official Go SDK (aztables v1.4.1), opened from a connection
// string or a SAS URL (OpenEndpoint). StoreIO is both over a store.Store
// opened directly (the bolt file of tablebridge serve, or DynamoDB).
// FileSource reads export files.
//
// StoreIO writes through shared/tables (ReplaceEntities), the one place
// that enforces the data model's rules and assigns Timestamps, as the
// server would; it passes decoded entities, so nothing is encoded to JSON
// and decoded again. Writing through the service rather than the store
// costs nothing measurable. It reads the store directly, which takes a key
// range to split a table by; reads change nothing, so no rule is bypassed.
//
// Reading goes through the SDK's pager but not its entity decoding: the SDK
// re-encodes each entity through map[string]any, which turns an integral
// Edm.Double into an Int32. capturePolicy hands the raw response body to
// DecodeEntity (shared/edm's decoder) instead, at full metadata so a
// service that annotates more than Azure gives every type it knows.
// Writing goes through SubmitTransaction with Insert Or Replace operations,
// each entity annotated with every non-string type (AppendEntityJSON), so
// the SDK's re-encoding cannot lose one either. Two SDK limitations are
// worked around where they bite, and documented there: quotes in keys in a
// transaction's URLs, and the empty PartitionKey, which the SDK refuses to
// put in an update URL although Azure allows it.
//
// So every Edm type and value survives bit for bit (docs/migration.md
// lists them); the Timestamp does not, since the destination assigns its
// own on every write (Options.KeepTimestamp keeps the source's as an extra
// property).
//
// # How a migration runs (Migrate)
//
//  1. The source's tables are listed (or taken from Options.Tables), renamed
//     by Options.Rename, and recorded in the checkpoint.
//  2. Per table, a discovery pass reads the keys only, counts the entities
//     (for the progress ETA) and samples PartitionKeys to split the table
//     into Options.Ranges ranges of about equal size (ranges.go explains the
//     choice of split points and why they are safe in any server's string
//     order).
//  3. Every range is scanned page by page ($top=1000), Options.Parallel
//     scans at a time across all tables. While a page is written the next
//     one is fetched. A page's entities are grouped by partition into
//     transactions of at most 100 (and about 3 MiB), up to Options.Writers
//     in flight.
//  4. A range's continuation token moves forward in the checkpoint only
//     once every transaction of the page before it is acknowledged. The
//     checkpoint is JSON, written atomically (temporary file, fsync,
//     rename) every second and at the end. Interrupted by SIGINT, a crash
//     or kill -9, the next run with the same options resumes each range at
//     its last acknowledged page, and the pages it writes again are upserts
//     of the same values: nothing is lost, nothing is duplicated.
//
// Throttling (503 ServerBusy, 429 TooManyRequests) and transient failures
// are retried by the SDK's retry policy (exponential back-off with jitter,
// honouring Retry-After), and what it cannot see, such as a 202 transaction
// response holding a 503, by Backoff. Options.Rate caps entities per second
// with a token bucket.
//
// # Following a live source (Options.Follow)
//
// After the bulk copy, passes copy the entities whose Timestamp is at or
// after the start of the previous pass minus a safety margin, and every few
// passes (and in the final one) a key comparison finds what the source
// deleted, until the caller stops the follow; each table's position is in
// the checkpoint. follow.go explains why nothing written on a busy source
// is lost.
//
// # Verify
//
// Verify hashes every entity's canonical encoding into buckets by key, so
// it works whatever order each side returns, with bounded memory, and
// re-reads only the buckets that disagree; verify.go explains the
// algorithm.
//
// # Export and import
//
// ExportTable writes one table as newline-delimited JSON (ndjson.go;
// docs/migration.md, "Export and import"). FileSource reads such files
// back as a Source, so import is Migrate from files: batched, retried and
// resumable the same way.
package migrate
