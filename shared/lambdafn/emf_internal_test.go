package lambdafn

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/httpapi"
)

// TestEMFLines: each request is one JSON line that CloudWatch's embedded
// metric format accepts: the _aws metadata names the namespace, the
// Operation dimension and every metric with its unit, and each of them is a
// member of the root, as the specification requires ("Target members").
func TestEMFLines(t *testing.T) {
	var buf bytes.Buffer
	e := newEMFWriter(&buf, emfNamespace("tb-prod"), "InsertOrBatchFunction")
	e.now = func() time.Time { return time.UnixMilli(1764134400123) }
	for _, s := range []httpapi.RequestStats{
		{Operation: "InsertEntity", Account: "acct", Status: 201, Duration: 12500 * time.Microsecond, BytesIn: 40, BytesOut: 300},
		{Operation: "InsertEntity", Account: "acct", Status: 409, Code: apierr.EntityAlreadyExists, Duration: time.Millisecond},
		{Operation: "GetEntity", Account: "acct", Status: 503, Code: apierr.ServerBusy, Duration: time.Millisecond},
		{Operation: "QueryEntities", Account: "acct", Status: 500, Code: apierr.InternalError, Duration: time.Millisecond},
		{Status: 400, Code: apierr.InvalidURI},
	} {
		e.observe(s)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5:\n%s", len(lines), buf.String())
	}
	type counts struct{ Requests, ClientErrors, ServerErrors, Throttled int }
	want := []struct {
		op string
		c  counts
	}{
		{"InsertEntity", counts{1, 0, 0, 0}},
		{"InsertEntity", counts{1, 1, 0, 0}},
		{"GetEntity", counts{1, 0, 0, 1}},
		{"QueryEntities", counts{1, 0, 1, 0}},
		{"None", counts{1, 1, 0, 0}},
	}
	for i, raw := range lines {
		var doc map[string]any
		if err := json.Unmarshal([]byte(raw), &doc); err != nil {
			t.Fatalf("line %d is no JSON object: %v: %s", i, err, raw)
		}
		meta := doc["_aws"].(map[string]any)
		if meta["Timestamp"] != float64(1764134400123) {
			t.Errorf("line %d: Timestamp %v", i, meta["Timestamp"])
		}
		directives := meta["CloudWatchMetrics"].([]any)
		if len(directives) != 1 {
			t.Fatalf("line %d: %d directives", i, len(directives))
		}
		d := directives[0].(map[string]any)
		if d["Namespace"] != "tablebridge/tb-prod" {
			t.Errorf("line %d: namespace %v", i, d["Namespace"])
		}
		for _, set := range d["Dimensions"].([]any) {
			for _, dim := range set.([]any) {
				if _, ok := doc[dim.(string)].(string); !ok {
					t.Errorf("line %d: dimension %v is not a string member of the root", i, dim)
				}
			}
		}
		for _, m := range d["Metrics"].([]any) {
			name := m.(map[string]any)["Name"].(string)
			if _, ok := doc[name].(float64); !ok {
				t.Errorf("line %d: metric %s is not a number member of the root", i, name)
			}
		}
		if doc["Operation"] != want[i].op || doc["Function"] != "InsertOrBatchFunction" {
			t.Errorf("line %d: operation %v, function %v", i, doc["Operation"], doc["Function"])
		}
		got := counts{int(doc["Requests"].(float64)), int(doc["ClientErrors"].(float64)),
			int(doc["ServerErrors"].(float64)), int(doc["Throttled"].(float64))}
		if got != want[i].c {
			t.Errorf("line %d: counts %+v, want %+v", i, got, want[i].c)
		}
	}
	var first emfLine
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.Latency != 12.5 || first.BytesIn != 40 || first.BytesOut != 300 || first.Status != 201 || first.Account != "acct" {
		t.Errorf("first line %+v", first)
	}
	if got := emfNamespace(""); got != "tablebridge" {
		t.Errorf("namespace without a stack: %q", got)
	}
}
