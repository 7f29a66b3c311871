// Package protocoltest holds the protocol conformance suites of the Table
// service, as storetest holds the store's: RunSDK (tables, entities,
// queries and continuations, types, formats, verbs, auth, service
// properties, probes) and RunProtocol ($batch, SAS, service settings,
// CORS, the secondary location, real clients' requests and Azure's
// recorded traffic, anonymous access), which every store runs through
// the real handler.
//
// A Server is tablebridgetest's (the whole stack a deployed tablebridge
// serves, on a loopback port, with the emulator account devstoreaccount1
// and any extra accounts) with the suites' helpers, which take the test
// for their failures. New's default store is a bbolt file in t.TempDir();
// tablebridgetest.WithStore substitutes any store.Store, so the DynamoDB
// store runs the same suites:
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
