// Package localproc runs a local server as a child process for tests and
// local tooling, and shares one such server across the tests of a test
// binary. The Azurite and DynamoDB Local harnesses (internal/azurite,
// internal/dynamolocal) are thin users of it; they only say which program to
// run, with which flags, and where it answers.
//
// Start picks a free loopback port, runs the program in a throwaway working
// directory (servers such as DynamoDB Local write files there even when told
// to keep everything in memory), keeps the tail of its output for error
// messages, and polls an HTTP path until the server answers while watching
// for an early exit. A port can be taken by another process between picking
// and binding it; the server then exits at once and Start tries another
// port. On Linux the child is killed when the process that started it dies,
// so a crashed or interrupted test binary leaves no server behind; elsewhere
// Stop must run.
//
// Shared is one server per test binary, started by the first test that asks
// and stopped from TestMain. An environment variable can name a server that
// is already running instead. When the server cannot start for a reason the
// user can fix by installing something, the tests that need it are skipped
// with a loud message saying how, except when CI is set: then they fail, so
// CI never passes by skipping. Under go test -short (make check) the
// harnesses skip before starting anything, through SkipShort.
package localproc
