package stack_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/stack"
	"github.com/tablebridge/tablebridge/shared/store/memstore"
)

// TestOneClock: the clock given once dates the handler's answers and the
// service's entity Timestamps.
func TestOneClock(t *testing.T) {
	t.Parallel()
	st, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// Near the real clock: the SDK dates its requests with time.Now, and
	// the verifier allows 15 minutes either way.
	fixed := time.Now().UTC().Truncate(time.Second).Add(-time.Minute)
	h, err := stack.New(st, []auth.Account{auth.DevStoreAccount()}, httpapi.Options{Now: func() time.Time { return fixed }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	svc := protocoltest.NewServiceClient(t, fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s/%[1]s;",
		auth.DevStoreAccountName, auth.DevStoreAccountKey, srv.URL))
	if _, err := svc.CreateTable(t.Context(), "Clock", nil); err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("Clock")
	if _, err := c.AddEntity(t.Context(), []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatal(err)
	}
	var raw *http.Response
	got, err := c.GetEntity(runtime.WithCaptureResponse(t.Context(), &raw), "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	if date := raw.Header.Get("Date"); date != fixed.Format(http.TimeFormat) {
		t.Errorf("Date %q, want %q", date, fixed.Format(http.TimeFormat))
	}
	var entity struct{ Timestamp time.Time }
	if err := json.Unmarshal(got.Value, &entity); err != nil {
		t.Fatal(err)
	}
	// Timestamps step 100 ns past each other on a clock that stands still.
	if d := entity.Timestamp.Sub(fixed); d < 0 || d > time.Millisecond {
		t.Errorf("Timestamp %v, want the injected clock's %v", entity.Timestamp, fixed)
	}
}

func TestNilStoreRefused(t *testing.T) {
	t.Parallel()
	if _, err := stack.New(nil, []auth.Account{auth.DevStoreAccount()}, httpapi.Options{}); err == nil {
		t.Fatal("a nil store was accepted")
	}
}
