// Package tables is the Azure Table service over a store.Store: a method
// per REST operation, but for the entity writes, which share WriteEntity
// (and Batch, for a transaction of them) and name their operation of
// shared/operation's table; entityWrites says in one place what each does
// to the store. It owns the protocol's semantics: validation through
// package model, ETags and If-Match, the server-managed Timestamp, $filter,
// $select and $top, SAS key-range scoping, entity group transactions, and the
// mapping of store sentinel errors to Azure error codes (package apierr).
//
// It parses no HTTP: package httpapi decodes requests into the inputs here
// and encodes the results. Inputs and results are this package's own types
// (EntityWrite, QueryInput and Continuation, EntityPage, TablePage,
// TableInfo), never the store's, so httpapi depends on the service and not
// on storage (TestServiceNamesNoStoreType). Time is injected through
// Options.Now, so results are deterministic in tests.
package tables
