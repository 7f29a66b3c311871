// Package python holds the end-to-end test of the official Python SDK,
// azure-data-tables, against the real `tablebridge serve` on the pebble store
// and on DynamoDB Local: scenario.py runs tables, inserts of all 8 Edm
// types, replace/merge/upsert/delete with ETags, a transaction
// (submit_transaction) and a refused one, queries with $filter, $select and
// paging, a table SAS, service properties, and the secondary location
// (get_service_stats, a read, a refused write). challenge.py signs in
// from the service's bearer challenge with the SDK's own
// BearerTokenChallengePolicy (TestPythonSDKChallenge).
//
// The SDK comes from Debian's python3-azure package (PyPI is not used),
// run by /usr/bin/python3 or TABLEBRIDGE_PYTHON; infra/python/install.sh
// installs it (make tools). Without it the test skips loudly on a
// developer machine and fails when CI is set.
package python
