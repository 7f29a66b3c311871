// Package azurite runs Azurite, the Azure Storage emulator (npm package
// azurite, pinned to 3.37.0 and installed by infra/azurite/install.sh under
// .tools/azurite), as a Table endpoint for tests and local tooling.
//
// tablebridge does not copy Azurite's behaviour; Azure's documentation is the
// reference. Azurite is here because real applications hold data in it, so
// tablebridge migrate must read the emulator's wire format as it is.
//
// Start launches one table service on a free loopback port with in-memory
// persistence and waits until it answers; Instance.Stop kills it. Tests use
// it through Main and ConnectionString:
//
//	func TestMain(m *testing.M) { os.Exit(azurite.Main(m)) }
//
//	func TestFromAzurite(t *testing.T) {
//		cs := azurite.ConnectionString(t) // skips, or fails under CI, without Azurite
//		...
//	}
//
// When TABLEBRIDGE_AZURITE_ENDPOINT is set (an account URL such as
// http://127.0.0.1:10002/devstoreaccount1) every test binary shares that
// emulator. Otherwise the first test that asks starts one for its test binary
// (about 1-2 s) and Main stops it when the tests end. When Azurite cannot
// start (no Node.js, no package) the Azurite tests are skipped with a loud
// message saying how to install it (infra/azurite/install.sh), except when
// CI is set: then they fail, so CI never passes by skipping.
package azurite
