// Package store defines the storage contract of tablebridge: the Store
// interface, its request and result types, and the sentinel errors every
// implementation returns. Implementations live in sibling packages
// (boltstore, memstore, dynamostore), each asserting var _ store.Store = (*Store)(nil),
// and all of them pass the one conformance suite in storetest.
//
// A store speaks no HTTP and knows no Azure error codes: package tables maps
// the sentinels below to protocol errors.
//
// A write (Op) says what it does to a stored entity, not which REST
// operation asked for it: OpInsert adds one that must be absent, OpReplace
// and OpMerge store or merge one, OpDelete removes one, the last three
// under a condition (CondKind: none, that it exists, that it exists at a
// Timestamp). Six REST operations write entities, and package tables maps
// them onto these kinds and conditions in one place (Update Entity and
// Insert Or Replace Entity are both OpReplace, with and without a
// condition), so a store implements each kind and condition once, and
// adding a REST operation adds nothing here.
package store
