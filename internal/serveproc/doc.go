// Package serveproc runs the real `tablebridge serve` binary for end-to-end
// tests of clients that are not Go (the Python SDK in e2e/python, the Azure
// CLI in e2e/azcli, the JavaScript SDK in e2e/browser) and for the command's
// own tests: it builds the binary from this module once per test
// binary, starts it on a free loopback port over an embedded store or
// over DynamoDB Local (internal/dynamolocal, with a table prefix of its
// own), and stops it with the test.
//
// Tools the tests drive are found with Require, which skips a test loudly
// on a developer machine when a tool is missing and fails it when CI is set
// (localproc.EnvCI), naming the install script, as the DynamoDB Local and
// Azurite harnesses do; under go test -short (make check) it skips without
// looking.
package serveproc
