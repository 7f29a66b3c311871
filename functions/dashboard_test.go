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
				Metrics [][]map[string]string
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("dashboard body is no JSON: %v\n%s", err, body)
	}
	var searched []string
	nameRe := regexp.MustCompile(`MetricName="(\w+)"`)
	for _, w := range doc.Widgets {
		for _, m := range w.Properties.Metrics {
			expr := m[0]["expression"]
			if !strings.Contains(expr, "SEARCH(") {
				t.Errorf("widget %q: expression %q", w.Properties.Title, expr)
			}
			for _, sm := range nameRe.FindAllStringSubmatch(expr, -1) {
				searched = append(searched, sm[1])
			}
		}
	}
	for _, want := range []string{"Requests", "ServerErrors", "ClientErrors", "Throttled", "Latency",
		"ReadThrottleEvents", "WriteThrottleEvents", "ThrottledRequests"} {
		if !slices.Contains(searched, want) {
			t.Errorf("the dashboard graphs no %s (it graphs %v)", want, searched)
		}
	}
}
