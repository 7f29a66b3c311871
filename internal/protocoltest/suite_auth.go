package protocoltest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// suiteAuth covers Shared Key authorization ("Authorize with Shared Key"):
// both schemes, both keys of an account, the 15-minute date window, and
// that a refused request changes nothing.
func suiteAuth(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	// A second account with two keys, served over the same store by a
	// second handler: newServer only ever configures devstoreaccount1.
	second := auth.Account{Name: "secondacct", Keys: [][]byte{randomKey(t), randomKey(t)}}
	srv2 := New(t, tablebridgetest.WithStore(srv.Store), tablebridgetest.WithAccounts(second))
	sc := srv.Client()
	c := newTable(t, sc, "auth")
	table := TableName(t, "auth")
	addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","V":1}`)

	t.Run("UnsignedIsForbidden", func(t *testing.T) {
		for _, req := range []Request{
			{Method: http.MethodGet, Path: "/Tables"},
			{Method: http.MethodGet, Path: entityPath(table, "p", "r")},
			{Method: http.MethodPost, Path: "/" + table, Body: []byte(`{"PartitionKey":"p","RowKey":"unsigned"}`)},
		} {
			req.Signing = Unsigned
			resp := srv.Do(t, req)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("unsigned %s %s: %d %s, want 403", req.Method, req.Path, resp.StatusCode, truncate(resp.Body))
			}
			commonHeaders(t, resp)
		}
		_, err := c.GetEntity(ctxFor(t), "p", "unsigned", nil)
		wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	})

	t.Run("WrongKeyIsAuthenticationFailed", func(t *testing.T) {
		wrong := srv.ClientFrom(t, fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;",
			auth.DevStoreAccountName, base64.StdEncoding.EncodeToString(randomKey(t)), srv.AccountURL(auth.DevStoreAccountName)))
		before := snapshot(t, c)
		_, err := wrong.CreateTable(ctxFor(t), TableName(t, ""), nil)
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
		_, err = wrong.NewClient(table).AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"wrongKey"}`), nil)
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
		_, err = wrong.NewClient(table).DeleteEntity(ctxFor(t), "p", "r", nil)
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
		_, err = wrong.NewListTablesPager(nil).NextPage(ctxFor(t))
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
		unchanged(t, c, before)
		_, err = sc.NewClient(TableName(t, "")).NewListEntitiesPager(nil).NextPage(ctxFor(t))
		wantError(t, err, http.StatusNotFound, "TableNotFound")

		// Another account's key does not sign for this account.
		resp := srv2.Do(t, Request{Method: http.MethodGet, Path: "/Tables", Key: second.Keys[0]})
		wantRawError(t, resp, http.StatusForbidden, "AuthenticationFailed")
	})

	t.Run("DateWindow", func(t *testing.T) {
		// "the storage services ensure that a request is no older than 15
		// minutes by the time it reaches the service".
		now := time.Now()
		for _, tc := range []struct {
			name   string
			date   time.Time
			status int
		}{
			{"16MinutesOld", now.Add(-16 * time.Minute), http.StatusForbidden},
			{"16MinutesAhead", now.Add(16 * time.Minute), http.StatusForbidden},
			{"14MinutesOld", now.Add(-14 * time.Minute), http.StatusOK},
			{"14MinutesAhead", now.Add(14 * time.Minute), http.StatusOK},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp := srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, "p", "r"), Date: tc.date})
				if tc.status == http.StatusForbidden {
					wantRawError(t, resp, tc.status, "AuthenticationFailed")
				} else if resp.StatusCode != tc.status {
					t.Errorf("got %d %s, want %d", resp.StatusCode, truncate(resp.Body), tc.status)
				}
			})
		}
	})

	t.Run("EitherKeyOfAnAccount", func(t *testing.T) {
		for i := range second.Keys {
			sc2 := srv2.ClientFrom(t, srv2.accountConnectionString(t, second.Name, i))
			name := TableName(t, fmt.Sprint(i))
			if _, err := sc2.CreateTable(ctxFor(t), name, nil); err != nil {
				t.Fatalf("key %d: create table: %v", i+1, err)
			}
			if _, err := sc2.NewClient(name).AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
				t.Errorf("key %d: insert: %v", i+1, err)
			}
			// Accounts are separate namespaces over the same store.
			_, err := sc.NewClient(name).GetEntity(ctxFor(t), "p", "r", nil)
			wantError(t, err, http.StatusNotFound, "TableNotFound")
		}
	})

	t.Run("SharedKey", func(t *testing.T) {
		// Signed by shared/auth's signer.
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, "p", "r"), Signing: SharedKey})
		if resp.StatusCode != http.StatusOK {
			t.Errorf("SharedKey GET: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		resp = srv.Do(t, Request{Method: http.MethodPost, Path: "/" + table, Body: []byte(`{"PartitionKey":"p","RowKey":"sharedKey"}`), Signing: SharedKey})
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("SharedKey POST: %d %s", resp.StatusCode, truncate(resp.Body))
		}

		// Signed here, straight from the documented string-to-sign, so a
		// mistake shared by the signer and the verifier cannot hide:
		// VERB\nContent-MD5\nContent-Type\nDate\nCanonicalizedResource.
		req := srv.NewRequest(t, ctxFor(t), Request{Method: http.MethodPost, Path: "/" + table,
			Body: []byte(`{"PartitionKey":"p","RowKey":"handSigned"}`), Signing: Unsigned})
		resource := "/" + auth.DevStoreAccountName + req.URL.EscapedPath()
		sts := "POST\n\napplication/json\n" + req.Header.Get("x-ms-date") + "\n" + resource
		req.Header.Set("Authorization", "SharedKey "+auth.DevStoreAccountName+":"+hmacBase64(srv.Account(t, auth.DevStoreAccountName).Keys[0], sts))
		if resp := srv.Send(t, req); resp.StatusCode != http.StatusCreated {
			t.Errorf("hand-signed SharedKey POST: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		lite := srv.NewRequest(t, ctxFor(t), Request{Method: http.MethodGet, Path: entityPath(table, "p", "r"), Signing: Unsigned})
		sts = lite.Header.Get("x-ms-date") + "\n/" + auth.DevStoreAccountName + lite.URL.EscapedPath()
		lite.Header.Set("Authorization", "SharedKeyLite "+auth.DevStoreAccountName+":"+hmacBase64(srv.Account(t, auth.DevStoreAccountName).Keys[0], sts))
		if resp := srv.Send(t, lite); resp.StatusCode != http.StatusOK {
			t.Errorf("hand-signed SharedKeyLite GET: %d %s", resp.StatusCode, truncate(resp.Body))
		}
	})

	t.Run("TamperedRequestIsAuthenticationFailed", func(t *testing.T) {
		before := snapshot(t, c)
		// Shared Key signs the Content-Type; Shared Key Lite does not.
		req := srv.NewRequest(t, ctxFor(t), Request{Method: http.MethodPost, Path: "/" + table,
			Body: []byte(`{"PartitionKey":"p","RowKey":"tampered"}`), Signing: SharedKey})
		req.Header.Set("Content-Type", "application/json;charset=utf-8")
		wantRawError(t, srv.Send(t, req), http.StatusForbidden, "AuthenticationFailed")

		// Both sign the path.
		for _, s := range []Signing{SharedKey, SharedKeyLite} {
			req := srv.NewRequest(t, ctxFor(t), Request{Method: http.MethodDelete, Path: entityPath(table, "p", "other"),
				Header: http.Header{"If-Match": {"*"}}, Signing: s})
			req.URL.Path = "/" + auth.DevStoreAccountName + "/" + table + "(PartitionKey='p',RowKey='r')"
			req.URL.RawPath = ""
			wantRawError(t, srv.Send(t, req), http.StatusForbidden, "AuthenticationFailed")
		}
		// And the date.
		req = srv.NewRequest(t, ctxFor(t), Request{Method: http.MethodGet, Path: entityPath(table, "p", "r")})
		req.Header.Set("x-ms-date", time.Now().Add(-time.Minute).UTC().Format(http.TimeFormat))
		wantRawError(t, srv.Send(t, req), http.StatusForbidden, "AuthenticationFailed")
		unchanged(t, c, before)
	})

	t.Run("SASFromTheSDK", func(t *testing.T) {
		// The SDK builds the token; only the happy path is checked here.
		sasURL := srv.sdkTableSASURL(t, table, aztables.SASPermissions{Read: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
		sasClient, err := aztables.NewClientWithNoCredential(sasURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sasClient.GetEntity(ctxFor(t), "p", "r", nil); err != nil {
			t.Errorf("read with a table SAS: %v", err)
		}
		_, err = sasClient.AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"sas"}`), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	})
}

func randomKey(t testing.TB) []byte {
	k := make([]byte, 64)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func hmacBase64(key []byte, msg string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}
