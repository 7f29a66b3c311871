package prommetrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/store/timedstore"
)

// noOperation labels requests answered before their operation was known
// (an unknown account, a malformed URL, a refusal by admission).
const noOperation = "none"

// Metrics is one server's registry. Its methods are safe for concurrent
// use.
type Metrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	bytesIn       *prometheus.CounterVec
	bytesOut      *prometheus.CounterVec
	refused       *prometheus.CounterVec
	storeLatency  *prometheus.HistogramVec
	commitWrites  prometheus.Histogram
	commitLatency prometheus.Histogram
}

// Latency buckets from 100 µs (a point read on bbolt) to 30 s (the
// handler's timeout).
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// New returns the metrics, registered with the Go runtime and process
// collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tablebridge_requests_total",
			Help: "Requests answered, by REST operation, HTTP status (499: the client went away first) and account.",
		}, []string{"operation", "status", "account"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tablebridge_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by REST operation.",
			Buckets: latencyBuckets,
		}, []string{"operation"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tablebridge_request_body_bytes_total",
			Help: "Request body bytes read, by REST operation.",
		}, []string{"operation"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tablebridge_response_body_bytes_total",
			Help: "Answer body bytes written, by REST operation.",
		}, []string{"operation"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tablebridge_refused_requests_total",
			Help: "Requests answered 503 ServerBusy by the admission limits: bound=request (-max-requests, -max-body-bytes) or answer (-max-answer-bytes).",
		}, []string{"bound"}),
		storeLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tablebridge_store_call_duration_seconds",
			Help:    "Store calls by method and outcome (ok; busy: throttled; unavailable; failed: any other error, mostly not found or condition failed).",
			Buckets: latencyBuckets,
		}, []string{"method", "outcome"}),
		commitWrites: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tablebridge_group_commit_writes",
			Help:    "Writes sharing one bbolt transaction (and its fsyncs) in the embedded store's group commit.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 9), // 1 to 256, the largest group
		}),
		commitLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tablebridge_group_commit_duration_seconds",
			Help:    "Time of one group commit of the embedded store, fsyncs included.",
			Buckets: latencyBuckets,
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.bytesIn, m.bytesOut, m.refused,
		m.storeLatency, m.commitWrites, m.commitLatency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveRequest is an httpapi.Options.Observe.
func (m *Metrics) ObserveRequest(s httpapi.RequestStats) {
	op := s.Operation
	if op == "" {
		op = noOperation
	}
	m.requests.WithLabelValues(op, strconv.Itoa(s.Status), s.Account).Inc()
	m.latency.WithLabelValues(op).Observe(s.Duration.Seconds())
	if s.BytesIn > 0 {
		m.bytesIn.WithLabelValues(op).Add(float64(s.BytesIn))
	}
	if s.BytesOut > 0 {
		m.bytesOut.WithLabelValues(op).Add(float64(s.BytesOut))
	}
	if s.Refused != "" {
		m.refused.WithLabelValues(s.Refused).Inc()
	}
}

// ObserveStoreCall is a timedstore.Observer.
func (m *Metrics) ObserveStoreCall(method operation.StoreMethod, took time.Duration, o timedstore.Outcome) {
	m.storeLatency.WithLabelValues(string(method), string(o)).Observe(took.Seconds())
}

// ObserveGroupCommit is a boltstore.WithCommitObserver observer.
func (m *Metrics) ObserveGroupCommit(writes int, took time.Duration) {
	m.commitWrites.Observe(float64(writes))
	m.commitLatency.Observe(took.Seconds())
}
