// Package azurestorage holds the end-to-end test of the legacy Node.js SDK,
// azure-storage 2.10.7 (npm), which ported applications still run: tables,
// typed entities through its entity generator, optimistic concurrency,
// entity group transactions, query continuation and a table SAS with a
// key range, against a real `tablebridge serve` on each store (the
// embedded pebble store and DynamoDB Local).
//
// legacy.js does the calls and prints what it saw as one JSON object;
// azurestorage_test.go starts the servers and checks that object.
//
// Tools: Node.js and this folder's node_modules (npm ci from
// package-lock.json). infra/azurestorage/install.sh installs both; make
// tools runs it. Without them the test skips on a developer machine and
// fails when CI is set.
package azurestorage
