package lambdafn_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// eventsDir is the repository's events/ directory.
var eventsDir = filepath.Join("..", "..", "events")

func loadEvent(t testing.TB, file string) (events.APIGatewayProxyRequest, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(eventsDir, filepath.FromSlash(file)))
	if err != nil {
		t.Fatalf("%v (regenerate events/ with make events-fixtures)", err)
	}
	var ev events.APIGatewayProxyRequest
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return ev, b
}

// TestEventsRunInOrder feeds every stored event, re-signed now, to its
// function, in the order make events lists them, and checks each status.
// A stored event that is not re-signed is too old to authenticate.
func TestEventsRunInOrder(t *testing.T) {
	fns := newFunctions(t, openBolt(t))
	samples, err := gatewayevent.Samples(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dev := auth.DevStoreAccount()

	stale, _ := loadEvent(t, samples[0].File())
	stale.MultiValueHeaders["X-Ms-Date"] = []string{time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)}
	if resp := fns.invoke(t, samples[0].Function, stale); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a stale event got %d, want 403", resp.StatusCode)
	}

	for _, s := range samples {
		t.Run(s.Name, func(t *testing.T) {
			ev, _ := loadEvent(t, s.File())
			if ev.HTTPMethod != http.MethodOptions {
				if err := gatewayevent.ResignEvent(&ev, dev.Name, dev.Keys[0], time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			resp := fns.invoke(t, s.Function, ev)
			body := readAll(t, resp)
			if resp.StatusCode != s.WantStatus {
				t.Fatalf("%s: got %d, want %d: %s", s.Operation, resp.StatusCode, s.WantStatus, body)
			}
		})
	}
}

func TestResignEventKeepsTheScheme(t *testing.T) {
	fns := newFunctions(t, openBolt(t))
	r := newRequest(t, req{method: http.MethodGet, path: "/Tables", sign: auth.SignSharedKey, date: time.Now().Add(-time.Hour)})
	ev, fn, err := gatewayevent.NewEvent(r, stageOpts())
	if err != nil {
		t.Fatal(err)
	}
	if resp := fns.invoke(t, fn.Name, ev); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("hour-old signature: %d", resp.StatusCode)
	}
	dev := auth.DevStoreAccount()
	if err := gatewayevent.ResignEvent(&ev, dev.Name, dev.Keys[0], time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := ev.Headers["Authorization"]; len(got) < 10 || got[:10] != "SharedKey " {
		t.Errorf("Authorization = %q, want SharedKey", got)
	}
	if resp := fns.invoke(t, fn.Name, ev); resp.StatusCode != http.StatusOK {
		t.Fatalf("re-signed: %d %s", resp.StatusCode, readAll(t, resp))
	}
}
