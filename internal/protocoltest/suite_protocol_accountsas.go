package protocoltest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// accountSASClient is a service client authenticating with nothing but an
// account SAS built by auth.NewAccountSAS.
func (s *Server) accountSASClient(t testing.TB, v auth.AccountSASValues) *aztables.ServiceClient {
	t.Helper()
	q, err := auth.NewAccountSAS(auth.DevStoreAccountName, s.Account(t, auth.DevStoreAccountName).Keys[0], v)
	if err != nil {
		t.Fatalf("auth.NewAccountSAS: %v", err)
	}
	return sasServiceClient(t, s.AccountURL(auth.DevStoreAccountName)+"/?"+q.Encode(), nil)
}

func sasServiceClient(t testing.TB, sasURL string, transport policy.Transporter) *aztables.ServiceClient {
	t.Helper()
	c, err := aztables.NewServiceClientWithNoCredential(sasURL, sasClientOptions(transport))
	if err != nil {
		t.Fatalf("aztables.NewServiceClientWithNoCredential: %v", err)
	}
	return c
}

// suiteAccountSAS covers account SAS ("Create an account SAS"): signed
// services (ss), resource types (srt) and permissions (sp) per
// operation, the time window, and aztables' own token, which is signed
// for HTTPS only.
func suiteAccountSAS(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()
	now := time.Now().UTC()
	token := func(srt, perms string) auth.AccountSASValues {
		return auth.AccountSASValues{Services: "t", ResourceTypes: srt, Permissions: perms,
			Start: now.Add(-5 * time.Minute), Expiry: now.Add(time.Hour), Protocol: "https,http"}
	}
	c := newTable(t, sc, "shared")
	table := TableName(t, "shared")
	addEntity(t, c, `{"PartitionKey":"p","RowKey":"r"}`)
	tableGone := func(t *testing.T, name string) {
		t.Helper()
		_, err := sc.NewClient(name).NewListEntitiesPager(nil).NextPage(ctxFor(t))
		wantError(t, err, http.StatusNotFound, "TableNotFound")
	}

	t.Run("WithoutCreateCannotCreateTables", func(t *testing.T) {
		// Neither c nor w: Create Table needs one of them.
		sas := srv.accountSASClient(t, token("sco", "rlaud"))
		name := TableName(t, "")
		_, err := sas.CreateTable(ctxFor(t), name, nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		tableGone(t, name)
		// The same token does what its letters allow.
		if _, err := sas.NewListTablesPager(nil).NextPage(ctxFor(t)); err != nil {
			t.Errorf("list tables with l: %v", err)
		}
		if _, err := sas.NewClient(table).AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"viaAccountSAS"}`), nil); err != nil {
			t.Errorf("insert with a: %v", err)
		}
		if _, err := sas.NewClient(table).GetEntity(ctxFor(t), "p", "viaAccountSAS", nil); err != nil {
			t.Errorf("read with r: %v", err)
		}
	})

	t.Run("WithCreate", func(t *testing.T) {
		sas := srv.accountSASClient(t, token("sco", "rlc"))
		name := TableName(t, "")
		if _, err := sas.CreateTable(ctxFor(t), name, nil); err != nil {
			t.Fatalf("create table with c: %v", err)
		}
		before := snapshot(t, c)
		_, err := sas.DeleteTable(ctxFor(t), name, nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		_, err = sas.NewClient(table).AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"noAdd"}`), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		_, err = sas.NewClient(table).SubmitTransaction(ctxFor(t), []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd,
			Entity: []byte(`{"PartitionKey":"p","RowKey":"noAdd"}`)}}, nil)
		wantTransactionFailure(t, err, 0, http.StatusForbidden, "AuthorizationPermissionMismatch")
		unchanged(t, c, before)
		if _, err := sc.NewClient(name).NewListEntitiesPager(nil).NextPage(ctxFor(t)); err != nil {
			t.Errorf("the refused delete removed the table: %v", err)
		}
	})

	t.Run("ResourceTypes", func(t *testing.T) {
		objects := srv.accountSASClient(t, token("o", "rwdlacu"))
		_, err := objects.NewListTablesPager(nil).NextPage(ctxFor(t))
		wantError(t, err, http.StatusForbidden, "AuthorizationResourceTypeMismatch")
		name := TableName(t, "")
		_, err = objects.CreateTable(ctxFor(t), name, nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationResourceTypeMismatch")
		tableGone(t, name)
		_, err = objects.GetProperties(ctxFor(t), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationResourceTypeMismatch")
		if _, err := objects.NewClient(table).GetEntity(ctxFor(t), "p", "r", nil); err != nil {
			t.Errorf("read an entity with srt=o: %v", err)
		}

		service := srv.accountSASClient(t, token("s", "rwdlacu"))
		if _, err := service.GetProperties(ctxFor(t), nil); err != nil {
			t.Errorf("service properties with srt=s: %v", err)
		}
		_, err = service.NewClient(table).GetEntity(ctxFor(t), "p", "r", nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationResourceTypeMismatch")
	})

	t.Run("OtherServices", func(t *testing.T) {
		v := token("sco", "rwdlacu")
		v.Services = "bq"
		_, err := srv.accountSASClient(t, v).NewClient(table).GetEntity(ctxFor(t), "p", "r", nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationServiceMismatch")
	})

	t.Run("Expired", func(t *testing.T) {
		v := token("sco", "rwdlacu")
		v.Start, v.Expiry = now.Add(-2*time.Hour), now.Add(-time.Hour)
		sas := srv.accountSASClient(t, v)
		before := snapshot(t, c)
		_, err := sas.NewClient(table).AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"expired"}`), nil)
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
		name := TableName(t, "")
		_, err = sas.CreateTable(ctxFor(t), name, nil)
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
		tableGone(t, name)
		unchanged(t, c, before)
	})

	t.Run("SDKTokenOverTLS", func(t *testing.T) {
		// GetAccountSASURL always signs spr=https. The same handler behind
		// a TLS listener (same store) accepts it; plain HTTP must refuse it
		// with AuthorizationProtocolMismatch.
		tlsSrv := httptest.NewTLSServer(srv.Handler())
		t.Cleanup(tlsSrv.Close)
		cred, err := aztables.NewSharedKeyCredential(auth.DevStoreAccountName, auth.DevStoreAccountKey)
		if err != nil {
			t.Fatal(err)
		}
		keyed, err := aztables.NewServiceClientWithSharedKey(tlsSrv.URL+"/"+auth.DevStoreAccountName+"/", cred, sasClientOptions(tlsSrv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		sasURL, err := keyed.GetAccountSASURL(aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true},
			aztables.AccountSASPermissions{Read: true, List: true, Add: true, Create: true}, now.Add(-5*time.Minute), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(sasURL, "spr=https") {
			t.Fatalf("the SDK's account SAS %s does not say spr=https", sasURL)
		}
		sas := sasServiceClient(t, sasURL, tlsSrv.Client())
		name := TableName(t, "")
		if _, err := sas.CreateTable(ctxFor(t), name, nil); err != nil {
			t.Fatalf("create table over TLS: %v", err)
		}
		if _, err := sas.NewClient(name).AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"tls"}`), nil); err != nil {
			t.Errorf("insert over TLS: %v", err)
		}
		if _, err := sc.NewClient(name).GetEntity(ctxFor(t), "p", "tls", nil); err != nil {
			t.Errorf("the entity written over TLS is not in the store: %v", err)
		}

		plain := sasServiceClient(t, strings.Replace(sasURL, tlsSrv.URL, srv.URL, 1), nil)
		before := snapshot(t, sc.NewClient(name))
		_, err = plain.NewClient(name).AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"plain"}`), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationProtocolMismatch")
		unchanged(t, sc.NewClient(name), before)
	})
}
