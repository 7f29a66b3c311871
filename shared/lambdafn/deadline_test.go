package lambdafn_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/store"
)

// deadlineStore records the deadline of each query's context and, when
// block is set, holds the query until that context ends, as a DynamoDB
// call that never answers would.
type deadlineStore struct {
	store.Store
	block bool

	mu        sync.Mutex
	deadlines []time.Time
}

func (s *deadlineStore) QueryEntities(ctx context.Context, account, table string, q store.Query) (store.Page, error) {
	d, _ := ctx.Deadline()
	s.mu.Lock()
	s.deadlines = append(s.deadlines, d)
	s.mu.Unlock()
	if s.block {
		<-ctx.Done()
		return store.Page{}, ctx.Err()
	}
	return s.Store.QueryEntities(ctx, account, table, q)
}

func (s *deadlineStore) last() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deadlines[len(s.deadlines)-1]
}

// TestRequestDeadlineOnLambda: the store works under the request's
// deadline, API Gateway's 29 s from the event's receipt time or the
// invocation's deadline, less a second; a step that runs into it ends in
// Azure's 503 ServerBusy, answered before the invocation's deadline, not in
// the gateway's 504 or a killed function.
func TestRequestDeadlineOnLambda(t *testing.T) {
	st := &deadlineStore{Store: openBolt(t)}
	fs := newFunctions(t, st)
	createTable(t, fs, "deadline")
	query := func(t *testing.T, o gatewayevent.Options, ctx context.Context, received time.Time) gatewayevent.Response {
		t.Helper()
		prefix := "-"
		if o.Profile == deploy.ProfileRESTAPI {
			prefix = ""
		}
		payload, fn, err := gatewayevent.Build(newRequest(t, req{method: http.MethodGet, path: "/deadline()", prefix: prefix}), o)
		if err != nil {
			t.Fatal(err)
		}
		if !received.IsZero() {
			var ev map[string]any
			if err := json.Unmarshal(payload, &ev); err != nil {
				t.Fatal(err)
			}
			rc := ev["requestContext"].(map[string]any)
			if o.Profile == deploy.ProfileRESTAPI {
				rc["requestTimeEpoch"] = received.UnixMilli()
			} else {
				rc["timeEpoch"] = received.UnixMilli()
			}
			payload, _ = json.Marshal(ev)
		}
		out, err := fs.byName[fn.Name].Invoke(ctx, payload)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := gatewayevent.DecodeResponse(o.Profile, out)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	rest := gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: stage}
	funcURL := gatewayevent.Options{Profile: deploy.ProfileFunctionURL}

	t.Run("API Gateway's 29 s from receipt", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		received := time.Now().Add(-20 * time.Second).Truncate(time.Millisecond)
		if resp := query(t, rest, ctx, received); resp.Status != http.StatusOK {
			t.Fatalf("%d %s", resp.Status, resp.Body)
		}
		if got, want := st.last(), received.Add(28*time.Second); !got.Equal(want) {
			t.Errorf("store deadline %v after receipt, want %v", got.Sub(received), want.Sub(received))
		}
	})
	t.Run("the invocation's deadline", func(t *testing.T) {
		invocation := time.Now().Add(20 * time.Second)
		ctx, cancel := context.WithDeadline(context.Background(), invocation)
		defer cancel()
		if resp := query(t, funcURL, ctx, time.Time{}); resp.Status != http.StatusOK {
			t.Fatalf("%d %s", resp.Status, resp.Body)
		}
		if got, want := st.last(), invocation.Add(-time.Second); !got.Equal(want) {
			t.Errorf("store deadline %v, want a second before the invocation's", invocation.Sub(got))
		}
	})
	t.Run("a step that runs into it", func(t *testing.T) {
		st.block = true
		defer func() { st.block = false }()
		invocation := time.Now().Add(1500 * time.Millisecond)
		ctx, cancel := context.WithDeadline(context.Background(), invocation)
		defer cancel()
		resp := query(t, funcURL, ctx, time.Time{})
		if resp.Status != http.StatusServiceUnavailable || resp.Header.Get("x-ms-error-code") != "ServerBusy" {
			t.Fatalf("%d %v %s, want 503 ServerBusy", resp.Status, resp.Header, resp.Body)
		}
		var body map[string]map[string]any
		if err := json.Unmarshal(resp.Body, &body); err != nil || body["odata.error"]["code"] != "ServerBusy" {
			t.Errorf("not Azure's error body: %s", resp.Body)
		}
		if ctx.Err() != nil {
			t.Logf("answered after the invocation's deadline (a loaded machine): the margin is a second")
		}
	})
}
