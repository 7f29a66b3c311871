// Package memstore is a store.Store that keeps everything in the process's
// memory, the counterpart of Azurite's --inMemoryPersistence: nothing
// touches the disk and the data is gone when the store closes or the
// process exits. It backs `tablebridge serve -store memory` and is the
// default store of package tablebridgetest.
//
// Layout: accounts by exact name, each with its tables by lower-cased name
// (Azure table names are case-insensitive) and its service properties
// document. A table keeps its entities in (PartitionKey, RowKey) order in
// a list of sorted chunks (rows.go), so queries walk keys in Azure's order
// and a write moves at most one chunk's worth of pointers.
//
// A row holds its entity encoded (package record, the bolt store's value
// format) in one string with its keys: encoding on the way in and decoding
// on the way out means no caller ever shares memory with the store, and a
// row is a few hundred bytes without pointers where an entity's map of
// values is about two kilobytes with dozens, which the garbage collector
// would trace on every cycle. One RWMutex guards the whole store: reads
// run in parallel, a write (one entity or a batch of up to 100) holds it
// exclusively for the few map and slice operations it needs, which is what
// makes Write atomic and isolated without any log. Query pages are bounded
// by the same rows, time and byte budgets as the bolt store's.
package memstore
