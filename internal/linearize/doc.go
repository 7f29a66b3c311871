// Package linearize checks tablebridge as the most trusted databases are
// checked: several clients run random operations concurrently, every
// operation is recorded with its call, its return and its answer, and a
// checker (Porcupine, github.com/anishathalye/porcupine, as etcd uses it)
// searches for one order of the operations that explains every answer. If
// none exists, the history is not linearizable: some answer broke a
// promise of Azure's Table service.
//
// The recorder (Run) drives the official Go SDK (aztables) over HTTP with
// its retries off, so each recorded operation is one HTTP exchange: 8
// clients by default, over 6 row keys in one partition or in three, send
// Insert, Get, Update Entity and Merge with If-Match on the ETag the client
// last saw or on *, Insert Or Replace, Insert Or Merge, Delete with
// If-Match, entity group transactions of 2 to 5 operations, and queries of
// a whole partition. Every write writes its own id as the property W and
// sets each of A, B and C to it or leaves it out, so a read names the
// version it saw and shows what a merge kept.
//
// The model (model.go) is Azure's semantics, per PartitionKey:
//
//   - Insert fails with 409 on an entity that exists; Get answers 404 for
//     one that does not;
//   - Update Entity, Merge and Delete with If-Match need the entity (404)
//     and, with an ETag, the very version the ETag names (412); an ETag
//     names one version of an entity (an ETag answered for two versions,
//     or two ETags for one version, is reported on its own);
//   - Merge keeps the properties it does not name; Update Entity and the
//     upserts replace them;
//   - an entity group transaction applies all of its operations or none,
//     and a failed one names its first failing operation;
//   - a partition query returns, for each entity, a version that existed
//     at some point during the query (what Azure promises, and all a
//     DynamoDB Query reads: each item strongly consistent, not one
//     snapshot of the partition). History.SnapshotQueries holds stores
//     whose queries read one snapshot (memory, bolt) to that instead.
//
// Answers are read as Azure defines them: 404, 409 and 412 are definite; a
// 500 (OperationTimedOut, InternalError), a timeout or a connection broken
// after sending leave the outcome open (indeterminate: Porcupine gives the
// operation a return after every other one, and the model lets it apply
// or not); 503 ServerBusy and a refused connection mean not performed, and
// the model holds the service to it, so a 503 whose write did land is
// caught when a read sees it.
//
// A failing history is written out (Test, EnvOut) with the shortest
// failing history Shrink finds and Porcupine's HTML view of it, and the
// seed to replay. The configurations (memory, bolt with a kill -9 in the
// middle of a history, DynamoDB Local on either layout, DynamoDB behind
// fault injection, the Lambda bootstraps) are the tests of this package
// and of functions/; make histories runs them long (docs/consistency.md).
package linearize
