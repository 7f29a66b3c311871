// Package storetest is the conformance suite of the store.Store contract.
// Every store runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := boltstore.Open(filepath.Join(t.TempDir(), "tables.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// Run asks for a store per group of subtests and closes it when the group
// ends (newStore may register its own cleanup too; Close must then be
// harmless twice). The groups run in parallel (t.Parallel), so newStore is
// called concurrently. A group creates few tables, since a DynamoDB table takes a
// while to create, and names every account and table uniquely from the test
// name and a per-process nonce, so stores that share one backend across
// calls do not see each other's data.
//
// The suite covers every method and every sentinel error of the contract:
// tables and their case rules, ACLs, service properties and account
// isolation; every write kind under every If-Match condition; the atomicity
// of multi-op writes and the index of the failing op; merge semantics and
// merge results that break the entity limits; exact round trips of every
// Edm type and its edge values; empty and Unicode keys; 1 MiB entities; key
// order, key range pushdown and paging; copy semantics; and concurrent
// writers.
//
// Orders compare strings ordinally by their bytes (UTF-8, so code point
// order), which is how Go, bbolt and DynamoDB compare them.
package storetest
