package functions_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestTemplateDashboard: the dashboard's body is valid JSON once
// CloudFormation substitutes it, and it graphs the metrics the functions
// write as Embedded Metric Format lines (shared/lambdafn emf.go), in the
// namespace those lines and the log metric filters use, beside DynamoDB's
// throttle metrics.
func TestTemplateDashboard(t *testing.T) {
	tpl := loadTemplate(t)
	dashboards := resourcesOfType(tpl, "AWS::CloudWatch::Dashboard")
	d, ok := dashboards["Dashboard"]
	if !ok || len(dashboards) != 1 {
		t.Fatalf("dashboards %v, want one named Dashboard", dashboards)
	}
	sub := get(d, "Properties", "DashboardBody")
	if sub == nil || sub.Tag != "!Sub" || len(sub.Content) != 2 {
		t.Fatalf("DashboardBody is no !Sub [body, variables]")
	}
	if ns := str(get(sub.Content[1], "Namespace")); ns != "tablebridge/${AWS::StackName}" {
		t.Errorf("dashboard namespace %q, want the EMF lines' tablebridge/${AWS::StackName}", ns)
	}
	// What CloudFormation leaves once it substitutes ${...}.
	body := regexp.MustCompile(`\$\{[^}]+\}`).ReplaceAllString(sub.Content[0].Value, "x")
	var doc struct {
		Widgets []struct {
			Properties struct {
				Title   string
				Metrics [][]any
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("dashboard body is no JSON: %v\n%s", err, body)
	}
	// A metric is a search expression ([{"expression": ...}]) or a metric
	// named in full ([namespace, name, dimension, value, ..., {options}]).
	var graphed []string
	nameRe := regexp.MustCompile(`MetricName="(\w+)"`)
	for _, w := range doc.Widgets {
		for _, m := range w.Properties.Metrics {
			switch first := m[0].(type) {
			case map[string]any:
				expr, _ := first["expression"].(string)
				if !strings.Contains(expr, "SEARCH(") {
					t.Errorf("widget %q: expression %q", w.Properties.Title, expr)
				}
				for _, sm := range nameRe.FindAllStringSubmatch(expr, -1) {
					graphed = append(graphed, sm[1])
				}
			case string:
				if len(m) < 2 || first != "AWS/DynamoDB" {
					t.Errorf("widget %q: metric %v", w.Properties.Title, m)
					continue
				}
				name, _ := m[1].(string)
				graphed = append(graphed, name)
			default:
				t.Errorf("widget %q: metric %v", w.Properties.Title, m)
			}
		}
	}
	for _, want := range []string{"Requests", "ServerErrors", "ClientErrors", "Throttled", "Latency",
		"ReadThrottleEvents", "WriteThrottleEvents", "ThrottledRequests", "ConsumedReadCapacityUnits", "ConsumedWriteCapacityUnits"} {
		if !slices.Contains(graphed, want) {
			t.Errorf("the dashboard graphs no %s (it graphs %v)", want, graphed)
		}
	}
}
