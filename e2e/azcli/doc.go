// Package azcli holds the end-to-end test of the Azure CLI's Table
// commands (`az storage table`, `az storage entity`) against the real
// `tablebridge serve` on the pebble store and on DynamoDB Local: tables
// (create, list, stats, delete), an insert of all 8 Edm types and its read
// back, a refused duplicate, replace with a current and a stale ETag, merge,
// insert-or-replace, a query with $filter, $select and paging through the
// continuation marker, a table SAS that az generates and uses, and delete.
// The CLI has no command for entity group transactions (batches); the
// Python SDK test (e2e/python) covers them.
//
// The CLI is Debian's azure-cli package (/usr/bin/az, or TABLEBRIDGE_AZ);
// infra/azure-cli/install.sh installs it (make tools). Without it the test
// skips loudly on a developer machine and fails when CI is set. Each run
// gets its own AZURE_CONFIG_DIR with telemetry, surveys and extension
// installs off, and any HTTP(S) traffic other than to the loopback server
// goes to a closed loopback proxy, so the CLI never reaches the internet.
package azcli
