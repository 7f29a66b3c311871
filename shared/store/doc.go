// Package store defines the storage contract of tablebridge: the Store
// interface, its request and result types, and the sentinel errors every
// implementation returns. Implementations live in sibling packages
// (boltstore, memstore, dynamostore), each asserting var _ store.Store = (*Store)(nil),
// and all of them pass the one conformance suite in storetest.
//
// A store speaks no HTTP and knows no Azure error codes: package tables maps
// the sentinels below to protocol errors.
package store
