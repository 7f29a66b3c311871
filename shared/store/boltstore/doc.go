// Package boltstore is the embedded store.Store of tablebridge, on bbolt
// (go.etcd.io/bbolt). It backs the local server (cmd/tablebridge serve).
//
// # Layout
//
// The file holds two top-level buckets:
//
//	meta                   "format" -> the layout version (1)
//	accounts
//	  <account>            one bucket per account name, exact case
//	    catalog            lower-cased table name -> encoded table info
//	                       (display name as created, ACL)
//	    tables
//	      <lower name>     one bucket per table: entity key -> encoded entity
//	    service            the service properties document, when set
//
// An entity key is PartitionKey + "\x00" + RowKey. bbolt orders keys by their
// bytes and UTF-8 byte order is code point order, so a cursor walks entities
// by PartitionKey, then RowKey, in ordinal order, as Azure returns them. (Code
// point order is also Go's string order, which $filter bounds use; it differs
// from UTF-16 code unit order only between U+E000..U+FFFF and characters
// beyond U+FFFF, which a .NET ordinal comparison would put first.) Azure
// forbids control characters in keys (U+0000 to U+001F, see "Understanding
// the Table service data model"), so the separator cannot occur in a valid
// PartitionKey, and a short PartitionKey that is a prefix of a longer one
// still sorts first: its separator byte is smaller than any key character.
//
// Deleting a table drops its bucket in the same transaction that removes its
// catalog entry, so a table is either fully there or fully gone: this store
// never answers store.ErrTableBeingDeleted.
//
// # Encoding
//
// Entities and table infos are stored in a compact binary encoding whose
// first byte is a version (package record); keys are not repeated in the value.
// Every Edm value round-trips bit for bit: doubles as their IEEE bits (NaN
// payloads, ±Inf and -0 included), times as Unix seconds plus nanoseconds.
// An unknown version or a damaged record is reported as ErrCorrupt, never a
// panic.
//
// # Durability and group commit
//
// A write returns only after its transaction is fsynced (bbolt's NoSync stays
// false). Concurrent writers are group-committed (committer.go): one goroutine
// commits, in one bbolt transaction, every write that queued while the
// previous commit was on its fsyncs, so one commit covers many writes. A
// Write's function may be run more than once and must not fail the shared
// transaction for a condition failure:
// it checks every op first, records an *store.OpError in a captured variable
// and returns nil without touching the bucket, so the other writes of the
// batch still commit. Close waits for writes in flight.
//
// A write whose function panics fails alone: the committer recovers the
// panic, rolls the shared transaction back and commits the others without
// it, as bbolt's DB.Batch does, so one bad write cannot take the server
// down. A write honours its context until the committer claims it: one
// whose request ended while it waited is dropped unapplied and returns the
// context's error (503 ServerBusy); once claimed it reports its commit,
// because it may already be on disk.
//
// # Timestamps
//
// A replace or merge whose Timestamp is not after the stored version's (the
// clock stepped back) is stamped 100 ns after it instead, under the write
// lock, and the Timestamp stored is handed back in op.Entity.Timestamp
// (store.Store.Write): Timestamps only increase and no two versions share
// an ETag. One process owns the file, so comparing with the stored value
// inside the write transaction is exact and costs no extra read.
//
// # Queries
//
// QueryEntities seeks a cursor to the lowest key the query's Keys range and
// After cursor allow, skips ahead over RowKey ranges that cannot match, stops
// past the upper bound, and applies Match to every candidate. A page ends when
// Top entities matched or a scan budget (rows examined, elapsed time, see
// WithScanBudget) runs out; its Next is then the last key examined.
package boltstore
