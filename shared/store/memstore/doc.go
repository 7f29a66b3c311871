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
// Entities are copied on the way in and on the way out, so no caller ever
// shares memory with the store. One RWMutex guards the whole store: reads
// run in parallel, a write (one entity or a batch of up to 100) holds it
// exclusively for the few map and slice operations it needs, which is what
// makes Write atomic and isolated without any log. Query pages are bounded
// by the same rows, time and byte budgets as the bolt store's.
package memstore
