// Package prommetrics holds the Prometheus metrics of `tablebridge serve`
// (prometheus/client_golang) and the handler that exposes them. It is fed
// by three hooks, each owned by the package that knows the figure:
// httpapi.Options.Observe (requests by operation, status and account,
// latency, body bytes, refusals by the admission limits), timedstore
// (store call latency and outcome) and boltstore.WithCommitObserver
// (group-commit size and time). The Lambda functions report the same
// per-operation figures as CloudWatch Embedded Metric Format lines instead
// (shared/lambdafn).
package prommetrics
