package protocoltest

import "testing"

// RunSDK is the conformance suite: the official Go SDK (and raw
// signed requests where the SDK cannot express a case) against a server
// from newServer. Every store runs it; newServer decides the store:
//
//	protocoltest.RunSDK(t, func(t *testing.T) *protocoltest.Server { return protocoltest.New(t) })
//
// newServer must return a server whose accounts start empty (a fresh store,
// or a fresh namespace in a shared one): a few subtests list every table of
// the account. Each group gets its own server and runs in parallel with the
// others. Within a group, every subtest uses tables named after itself
// (TableName), so subtests never see each other's data. The Auth group
// also starts a second handler over the same store (WithStore(srv.Store))
// with an extra account.
func RunSDK(t *testing.T, newServer func(t *testing.T) *Server) {
	groups := []struct {
		name string
		run  func(t *testing.T, newServer func(t *testing.T) *Server)
	}{
		{"Tables", suiteTables},
		{"Entities", suiteEntities},
		{"Query", suiteQuery},
		{"Continuation", suiteContinuation},
		{"Types", suiteTypes},
		{"DataModel", suiteDataModel},
		{"Formats", suiteFormats},
		{"Verbs", suiteVerbs},
		{"Auth", suiteAuth},
		{"Service", suiteService},
		{"Probes", suiteProbes},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, newServer)
		})
	}
}
