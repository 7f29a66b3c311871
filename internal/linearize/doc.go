// Package linearize checks tablebridge as the most trusted databases are
// checked: several clients run random operations concurrently, every
// operation is recorded with its call, its return and its answer, and a
// checker (Porcupine, github.com/anishathalye/porcupine, as etcd uses it)
// searches for one order of the operations that explains every answer. If
// none exists, the history is not linearizable: some answer broke a
// promise of Azure's Table service.
//
// docs/consistency.md, "The checker", says which operations are recorded,
// how each answer is read ("What an error answer means") and which
// configurations run; this comment says where each part lives:
//
//   - Run (run.go, workload.go, client.go) records a history through the
//     official Go SDK with its retries off, so each recorded operation is
//     one HTTP exchange. Every write writes its own id as the property W
//     and sets each of A, B and C to it or leaves it out, so a read names
//     the version it saw and shows what a merge kept.
//   - model.go is Azure's semantics per PartitionKey, operations.go how
//     each recorded operation is checked against it; History.SnapshotQueries
//     holds the stores whose one-page queries read one snapshot (memory,
//     pebble, bolt) to that stronger promise.
//   - Check, Shrink and Visualize (check.go) find an order, cut a failing
//     history to the shortest that still fails, and draw Porcupine's view
//     of it; Test (testing.go) runs histories in a test and writes a
//     failing one out (EnvOut) with its seed to replay.
//
// The configurations docs/consistency.md lists are the tests of this
// package and of functions/; make histories runs them long.
package linearize
