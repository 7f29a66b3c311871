package protocoltest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// sasClientOptions turns retries off, as ServiceClient does, and sends
// through transport when it is not nil (a TLS test server's client).
func sasClientOptions(transport policy.Transporter) *aztables.ClientOptions {
	return &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:     policy.RetryOptions{MaxRetries: -1},
		Transport: transport,
	}}
}

// tableSASClient is an aztables client of table that authenticates with
// nothing but a table SAS built by auth.NewTableSAS, the way an
// application hands a token to a less trusted party.
func (s *Server) tableSASClient(t testing.TB, table string, v auth.TableSASValues) *aztables.Client {
	t.Helper()
	q, err := auth.NewTableSAS(auth.DevStoreAccountName, s.Account(t, auth.DevStoreAccountName).Keys[0], v)
	if err != nil {
		t.Fatalf("auth.NewTableSAS: %v", err)
	}
	return s.sasURLClient(t, s.AccountURL(auth.DevStoreAccountName)+"/"+table+"?"+q.Encode())
}

// sasURLClient builds a client from a table URL carrying a SAS.
func (s *Server) sasURLClient(t testing.TB, sasURL string) *aztables.Client {
	t.Helper()
	c, err := aztables.NewClientWithNoCredential(sasURL, sasClientOptions(nil))
	if err != nil {
		t.Fatalf("aztables.NewClientWithNoCredential: %v", err)
	}
	return c
}

// sdkTableSASURL returns the table's URL with a SAS that aztables itself
// signs with the development account's key (GetTableSASURL). The SDK joins
// the endpoint and the table without a slash for path-style URLs, hence the
// trailing slash on the endpoint.
func (s *Server) sdkTableSASURL(t testing.TB, table string, perms aztables.SASPermissions, start, expiry time.Time) string {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(auth.DevStoreAccountName, auth.DevStoreAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := aztables.NewServiceClientWithSharedKey(s.AccountURL(auth.DevStoreAccountName)+"/", cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	sasURL, err := keyed.NewClient(table).GetTableSASURL(perms, start, expiry)
	if err != nil {
		t.Fatal(err)
	}
	return sasURL
}

// suiteSAS covers table (service) SAS ("Create a service SAS"):
// permissions, the time window, protocol and source address, key ranges
// for point operations, queries and batches, stored access policies and
// their revocation, and the table a token is bound to.
func suiteSAS(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()
	now := time.Now().UTC()
	// spr "https,http": the test server speaks plain HTTP.
	token := func(table, perms string) auth.TableSASValues {
		return auth.TableSASValues{Table: table, Permissions: perms, Start: now.Add(-5 * time.Minute),
			Expiry: now.Add(time.Hour), Protocol: "https,http"}
	}
	fixture := func(t *testing.T) (*aztables.Client, string, string) {
		c := newTable(t, sc, "")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","V":1}`)
		return c, TableName(t, ""), snapshot(t, c)
	}
	addAction := func(rk string) aztables.TransactionAction {
		return aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
			Entity: []byte(`{"PartitionKey":"p","RowKey":"` + rk + `"}`)}
	}

	t.Run("ReadOnlyTokenRefusesWrites", func(t *testing.T) {
		c, table, before := fixture(t)
		sas := srv.tableSASClient(t, table, token(table, "r"))
		if _, err := sas.GetEntity(ctxFor(t), "p", "r", nil); err != nil {
			t.Errorf("read with sp=r: %v", err)
		}
		if got, _ := listAll(t, sas, nil); len(got) != 1 {
			t.Errorf("query with sp=r returned %d entities, want 1", len(got))
		}
		_, err := sas.AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"new"}`), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		_, err = sas.UpsertEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"r","V":2}`), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		_, err = sas.UpdateEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"r","V":2}`), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		_, err = sas.DeleteEntity(ctxFor(t), "p", "r", nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		_, err = sas.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{addAction("batched")}, nil)
		wantTransactionFailure(t, err, 0, http.StatusForbidden, "AuthorizationPermissionMismatch")
		// "Only the account owner may" read or set a table's ACL.
		_, err = sas.GetAccessPolicy(ctxFor(t), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationFailure")
		unchanged(t, c, before)
	})

	t.Run("UpsertNeedsAddAndUpdate", func(t *testing.T) {
		// "Add and Update permissions are required for upsert operations."
		c, table, _ := fixture(t)
		addOnly := srv.tableSASClient(t, table, token(table, "a"))
		if _, err := addOnly.AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"added"}`), nil); err != nil {
			t.Errorf("insert with sp=a: %v", err)
		}
		before := snapshot(t, c)
		_, err := addOnly.UpsertEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"upsert"}`), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		unchanged(t, c, before)
		both := srv.tableSASClient(t, table, token(table, "au"))
		if _, err := both.UpsertEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"upsert"}`), nil); err != nil {
			t.Errorf("upsert with sp=au: %v", err)
		}
	})

	t.Run("OutsideTheTimeWindow", func(t *testing.T) {
		c, table, before := fixture(t)
		for _, tc := range []struct {
			name          string
			start, expiry time.Time
		}{
			{"Expired", now.Add(-2 * time.Hour), now.Add(-time.Hour)},
			{"NotYetValid", now.Add(time.Hour), now.Add(2 * time.Hour)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				sas := srv.tableSASClient(t, table, auth.TableSASValues{Table: table, Permissions: "raud",
					Start: tc.start, Expiry: tc.expiry, Protocol: "https,http"})
				_, err := sas.GetEntity(ctxFor(t), "p", "r", nil)
				wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
				_, err = sas.AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"late"}`), nil)
				wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
				unchanged(t, c, before)
			})
		}
	})

	t.Run("ProtocolAndSourceAddress", func(t *testing.T) {
		_, table, _ := fixture(t)
		httpsOnly := token(table, "r")
		httpsOnly.Protocol = "https"
		_, err := srv.tableSASClient(t, table, httpsOnly).GetEntity(ctxFor(t), "p", "r", nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationProtocolMismatch")

		loopback := token(table, "r")
		loopback.IPRange = "127.0.0.1"
		if _, err := srv.tableSASClient(t, table, loopback).GetEntity(ctxFor(t), "p", "r", nil); err != nil {
			t.Errorf("sip=127.0.0.1 from loopback: %v", err)
		}
		elsewhere := token(table, "r")
		elsewhere.IPRange = "10.1.2.3-10.1.2.9"
		_, err = srv.tableSASClient(t, table, elsewhere).GetEntity(ctxFor(t), "p", "r", nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationSourceIPMismatch")
	})

	t.Run("KeyRange", func(t *testing.T) { sasKeyRange(t, srv, sc, token) })

	t.Run("StoredAccessPolicy", func(t *testing.T) {
		c, table, _ := fixture(t)
		start := now.Add(-5 * time.Minute).Truncate(time.Second)
		policy := func(id, perms string) *aztables.SignedIdentifier {
			return &aztables.SignedIdentifier{ID: to.Ptr(id), AccessPolicy: &aztables.AccessPolicy{
				Start: to.Ptr(start), Expiry: to.Ptr(start.Add(time.Hour)), Permission: to.Ptr(perms)}}
		}
		if _, err := c.SetAccessPolicy(ctxFor(t), &aztables.SetAccessPolicyOptions{
			TableACL: []*aztables.SignedIdentifier{policy("readadd", "ra"), policy("other", "r")}}); err != nil {
			t.Fatalf("SetAccessPolicy: %v", err)
		}
		// The token names the policy (si) and nothing it provides: the
		// policy's start, expiry and permissions apply.
		ours := srv.tableSASClient(t, table, auth.TableSASValues{Table: table, Identifier: "readadd", Protocol: "https,http"})
		cred, err := aztables.NewSharedKeyCredential(auth.DevStoreAccountName, auth.DevStoreAccountKey)
		if err != nil {
			t.Fatal(err)
		}
		sdkToken, err := aztables.SASSignatureValues{TableName: table, Identifier: "readadd"}.Sign(cred)
		if err != nil {
			t.Fatal(err)
		}
		sdk := srv.sasURLClient(t, srv.AccountURL(auth.DevStoreAccountName)+"/"+table+"?"+sdkToken)

		tokens := []struct {
			name string
			sas  *aztables.Client
		}{{"auth", ours}, {"aztables", sdk}}
		for _, tk := range tokens {
			name, sas := tk.name, tk.sas
			if _, err := sas.GetEntity(ctxFor(t), "p", "r", nil); err != nil {
				t.Errorf("%s token: read through policy: %v", name, err)
			}
			if _, err := sas.AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"`+name+`"}`), nil); err != nil {
				t.Errorf("%s token: insert through policy: %v", name, err)
			}
			before := snapshot(t, c)
			_, err := sas.DeleteEntity(ctxFor(t), "p", "r", nil)
			wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
			unchanged(t, c, before)
		}

		// Removing the policy revokes every token that names it.
		if _, err := c.SetAccessPolicy(ctxFor(t), &aztables.SetAccessPolicyOptions{
			TableACL: []*aztables.SignedIdentifier{policy("other", "r")}}); err != nil {
			t.Fatalf("SetAccessPolicy without readadd: %v", err)
		}
		before := snapshot(t, c)
		for _, tk := range tokens {
			name, sas := tk.name, tk.sas
			_, err := sas.GetEntity(ctxFor(t), "p", "r", nil)
			wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
			_, err = sas.AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"revoked`+name+`"}`), nil)
			wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
		}
		unchanged(t, c, before)

		// So does deleting the table: its policies are gone with it.
		gone := srv.tableSASClient(t, table, auth.TableSASValues{Table: table, Identifier: "other", Protocol: "https,http"})
		if _, err := gone.GetEntity(ctxFor(t), "p", "r", nil); err != nil {
			t.Fatalf("read through policy other: %v", err)
		}
		if _, err := c.Delete(ctxFor(t), nil); err != nil {
			t.Fatalf("Delete table: %v", err)
		}
		_, err = gone.GetEntity(ctxFor(t), "p", "r", nil)
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
	})

	t.Run("TokenOfAnotherTable", func(t *testing.T) {
		_, table, _ := fixture(t)
		other := newTable(t, sc, "other")
		otherName := TableName(t, "other")
		before := snapshot(t, other)
		// A token for table, presented on other.
		sas := srv.tableSASClient(t, otherName, token(table, "raud"))
		_, err := sas.GetEntity(ctxFor(t), "p", "r", nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationFailure")
		_, err = sas.AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"intruder"}`), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationFailure")
		// $batch names no table in its URL; each operation is checked.
		_, err = sas.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{addAction("intruder")}, nil)
		wantTransactionFailure(t, err, 0, http.StatusForbidden, "AuthorizationFailure")
		unchanged(t, other, before)
		// Nor can a table SAS reach the table list.
		_, err = srv.sasTableListPage(t, token(table, "raud"))
		wantError(t, err, http.StatusForbidden, "AuthorizationFailure")
	})

	t.Run("SDKTableSAS", func(t *testing.T) {
		// aztables' own token (no spr, so plain HTTP is allowed).
		c, table, _ := fixture(t)
		sasURL := srv.sdkTableSASURL(t, table, aztables.SASPermissions{Read: true, Add: true, Update: true},
			now.Add(-5*time.Minute), now.Add(time.Hour))
		sas := srv.sasURLClient(t, sasURL)
		if _, err := sas.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{addAction("b1"), addAction("b2"),
			{ActionType: aztables.TransactionTypeInsertMerge, Entity: []byte(`{"PartitionKey":"p","RowKey":"r","W":1}`)}}, nil); err != nil {
			t.Errorf("batch with sp=rau: %v", err)
		}
		if got := strings.Join(keysOf(t, mustList(t, sas)), ","); got != "p/b1,p/b2,p/r" {
			t.Errorf("entities %s, want p/b1,p/b2,p/r", got)
		}
		before := snapshot(t, c)
		_, err := sas.DeleteEntity(ctxFor(t), "p", "r", nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		_, err = sas.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{addAction("b3"),
			{ActionType: aztables.TransactionTypeDelete, Entity: []byte(`{"PartitionKey":"p","RowKey":"b1"}`)}}, nil)
		wantTransactionFailure(t, err, 1, http.StatusForbidden, "AuthorizationPermissionMismatch")
		unchanged(t, c, before)
	})
}

// sasTableListPage lists the account's tables with a table SAS.
func (s *Server) sasTableListPage(t testing.TB, v auth.TableSASValues) (aztables.ListTablesResponse, error) {
	t.Helper()
	q, err := auth.NewTableSAS(auth.DevStoreAccountName, s.Account(t, auth.DevStoreAccountName).Keys[0], v)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := aztables.NewServiceClientWithNoCredential(s.AccountURL(auth.DevStoreAccountName)+"/?"+q.Encode(), sasClientOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	return svc.NewListTablesPager(nil).NextPage(ctxFor(t))
}

func mustList(t testing.TB, c *aztables.Client) [][]byte {
	t.Helper()
	entities, _ := listAll(t, c, nil)
	return entities
}
