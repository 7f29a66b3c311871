// Package tablebridgetest runs a real tablebridge server inside a Go test,
// in the spirit of net/http/httptest and fake-gcs-server: the same handler
// as `tablebridge serve` and the Lambda functions (httpapi over tables over
// a store), on a loopback port, over a store that lives only as long as the
// test. The default store is in memory (shared/store/memstore); WithBoltStore
// uses a bbolt file in t.TempDir(), and WithStore any store.Store.
//
//	func TestOrders(t *testing.T) {
//		srv := tablebridgetest.NewServer(t)
//		client := srv.Client() // an *aztables.ServiceClient for devstoreaccount1
//		// or: aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), nil)
//		...
//	}
//
// The server answers as Azure's Table service does (not as Azurite does),
// with the emulator's account devstoreaccount1 and its well-known key, plus
// any accounts given with WithAccount. WithTLS serves HTTPS with a
// certificate that the server's own clients (Client, HTTPClient,
// ClientOptions) trust. WithBearerTokens accepts Microsoft Entra ID bearer
// tokens as the emulator's basic mode does (claims checked, signature not),
// and TokenCredential mints them, so code that authenticates with an
// azcore.TokenCredential is tested as it runs in production.
//
// NewServer stops the server and drops the store with t.Cleanup. Start and
// Close do the same outside a test, as in the package example.
package tablebridgetest
