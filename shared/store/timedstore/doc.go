// Package timedstore wraps a store.Store and reports how long each call
// took and how it ended, for the local server's store latency metrics. It
// follows the wrapper pattern of shared/lambdafn's guardStore: every method
// of store.Store passes through, named by operation.StoreMethod, the one
// spelling of store methods the project uses.
package timedstore
