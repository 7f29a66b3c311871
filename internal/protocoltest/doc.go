// Package protocoltest runs the real tablebridge handler on a loopback
// httptest.Server for end-to-end tests, and holds the SDK conformance suite
// (RunSDK) that every store runs through it.
//
// A Server is the whole stack a deployed tablebridge serves: httpapi over
// tables over a store.Store, with the emulator account devstoreaccount1
// (auth.DevStoreAccount) and any extra accounts. The default store is a
// bbolt file in t.TempDir(); WithStore substitutes any store.Store, so the
// DynamoDB store runs the same suite:
//
//	func TestSDK(t *testing.T) {
//		protocoltest.RunSDK(t, func(t *testing.T) *protocoltest.Server {
//			return protocoltest.New(t, tablebridgetest.WithStore(newDynamoStore(t)))
//		})
//	}
//
// The suite drives the official Go SDK (aztables v1.4.1) for everything the
// SDK can express and asserts Azure's documented status and error code for
// every failure, plus that nothing stored changed after a failed write.
// Protocol cases the SDK cannot express (metadata levels, verb tunnelling,
// $top above 1000, bad signatures) go through Server.Do, a raw request
// signed with shared/auth's signer.
//
// The reference is Azure's documented behaviour, not Azurite's. Where the
// Go SDK itself loses information (it re-encodes every payload through
// map[string]any, so an integral Edm.Double reads back as int32 through
// EDMEntity), the suite asserts on the wire bytes and says so.
package protocoltest
