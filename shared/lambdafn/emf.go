package lambdafn

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/httpapi"
)

// Metrics: every answered request also becomes one CloudWatch Embedded
// Metric Format line on stdout, from which CloudWatch Logs extracts the
// per-operation figures the local server exports to Prometheus (requests,
// errors, throttles, latency, body bytes) with no metric filter
// ("Specification: Embedded metric format"). The line is JSON on its own,
// because an EMF log event must be a JSON object with nothing around it;
// the functions log in LogFormat Text, which passes stdout lines unchanged.
// template.yaml's dashboard graphs these metrics.

// emfNamespace is the CloudWatch namespace of a stack's metrics, the one
// its log metric filters already use.
func emfNamespace(stack string) string {
	if stack == "" {
		return "tablebridge"
	}
	return "tablebridge/" + stack
}

// The metrics of each line, with their CloudWatch units.
var emfMetrics = []emfMetric{
	{"Requests", "Count"},
	{"ClientErrors", "Count"},
	{"ServerErrors", "Count"},
	{"Throttled", "Count"},
	{"Latency", "Milliseconds"},
	{"BytesIn", "Bytes"},
	{"BytesOut", "Bytes"},
}

type emfMetric struct {
	Name string
	Unit string
}

type emfDirective struct {
	Namespace  string
	Dimensions [][]string
	Metrics    []emfMetric
}

type emfMetadata struct {
	Timestamp         int64
	CloudWatchMetrics []emfDirective
}

// emfLine is one request's EMF document. Operation is the dimension;
// Function, Account, Status and Code are plain members, searchable with
// Logs Insights but no metric dimensions (an account or a status per
// dimension would multiply the metrics CloudWatch bills).
type emfLine struct {
	AWS          emfMetadata `json:"_aws"`
	Operation    string
	Function     string
	Account      string `json:",omitempty"`
	Status       int
	Code         string `json:",omitempty"`
	Requests     int
	ClientErrors int
	ServerErrors int
	// Throttled counts 503 ServerBusy answers: DynamoDB throttled the
	// request (the store's ErrBusy), and the SDKs retry it.
	Throttled int
	Latency   float64
	BytesIn   int64
	BytesOut  int64
}

// emfWriter writes one EMF line per request to w.
type emfWriter struct {
	mu        sync.Mutex
	w         io.Writer
	namespace string
	function  string
	now       func() time.Time
}

func newEMFWriter(w io.Writer, namespace, function string) *emfWriter {
	return &emfWriter{w: w, namespace: namespace, function: function, now: time.Now}
}

// observe is an httpapi.Options.Observe.
func (e *emfWriter) observe(s httpapi.RequestStats) {
	op := s.Operation
	if op == "" {
		op = "None" // refused before its operation was known
	}
	line := emfLine{
		AWS: emfMetadata{Timestamp: e.now().UnixMilli(), CloudWatchMetrics: []emfDirective{{
			Namespace: e.namespace, Dimensions: [][]string{{"Operation"}}, Metrics: emfMetrics}}},
		Operation: op, Function: e.function, Account: s.Account, Status: s.Status, Code: string(s.Code),
		Requests: 1, Latency: float64(s.Duration.Microseconds()) / 1000, BytesIn: s.BytesIn, BytesOut: s.BytesOut,
	}
	switch {
	case s.Code == apierr.ServerBusy:
		line.Throttled = 1
	case s.Status >= http.StatusInternalServerError:
		line.ServerErrors = 1
	case s.Status >= http.StatusBadRequest:
		line.ClientErrors = 1
	}
	b, err := json.Marshal(line)
	if err != nil {
		return // cannot happen: the document holds only strings and numbers
	}
	b = append(b, '\n')
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.w.Write(b)
}
