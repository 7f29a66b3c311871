// Package pebblestore is a store.Store on Pebble
// (github.com/cockroachdb/pebble), a log-structured merge tree with a
// write-ahead log: the default store of the local server (tablebridge
// serve -store pebble).
//
// # Layout
//
// One Pebble directory holds everything, in four key spaces told apart by
// their first byte:
//
//	0x01 "format"                            the layout version (1)
//	0x02 account, table                      catalog: table info (display name, ACL)
//	0x03 account                             the account's service properties
//	0x04 account, table, PartitionKey, RowKey the entity's record
//
// Table names are lower-cased (Azure's are case-insensitive). Account,
// table and PartitionKey are written with every zero byte escaped and a
// terminator after each (keys.go), and the RowKey raw at the end, so
// Pebble's byte order is Azure's order of (account, table, PartitionKey,
// RowKey), each by its bytes, for any strings, empty ones included: a
// partition scan, a key-range query and a continuation are a seek and a
// walk of the index. Values are records of package record, the bolt
// store's format.
//
// Delete Table is one batch: the catalog entry's deletion and one range
// deletion over the table's key range, so it costs the same for any table
// and a table is either wholly there or wholly gone.
//
// # Writes, durability and group commit
//
// A write checks its conditions and builds one batch (an entity group
// transaction is one batch) under a write lock, hands the batch to Pebble,
// which appends it to its log and applies it to the memtable, releases the
// lock, and then waits for the log's sync (pebble.Sync, through
// ApplyNoSyncWait and SyncWait). Pebble's log writer syncs everything that
// queued during one sync with the next one, so concurrent writers share an
// fsync and the next group forms while one syncs; a write is acknowledged
// only once its batch is on disk.
//
// Pebble shows a batch to readers as soon as it is in the memtable,
// before its sync. So that no answer shows what a crash could still take
// back, a read (or a write refused by a condition, which tells what it
// read) waits until every write applied before it read is synced: at most
// about one sync, and nothing when no write is under way.
//
// # Failures
//
// If the log cannot be written or synced, what the engine holds in memory
// may no longer match the disk. The write that met the failure returns
// store.ErrOutcomeUnknown (it may or may not be on disk), and the store
// stops: every later call returns store.ErrUnavailable naming the cause,
// until the directory is opened again, which replays the log as the disk
// has it: every acknowledged write, and no torn tail. Pebble's fatal errors
// on a caller's goroutine stop the store the same way instead of ending
// the process; damaged data found while reading stops it too. Background
// flush and compaction errors are logged and retried by Pebble.
//
// # Bounds
//
// Memory and disk are bounded by the options store.go sets (block cache,
// memtables, compaction, Bloom filters on every level, so a point read or
// an insert's existence check reads at most one data block); docs/serve.md,
// "Memory and disk", lists them with what they measured.
package pebblestore
