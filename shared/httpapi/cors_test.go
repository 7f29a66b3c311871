package httpapi

import "testing"

func TestMatchCORS(t *testing.T) {
	t.Parallel()
	rules := []corsRule{
		{AllowedOrigins: "http://a.example,http://b.example", AllowedMethods: "GET,PUT", AllowedHeaders: "x-ms-meta*,content-type", MaxAgeInSeconds: 60},
		{AllowedOrigins: "*", AllowedMethods: "GET", AllowedHeaders: "*"},
	}
	tests := []struct {
		name    string
		origin  string
		method  string
		headers []string
		want    int // index of the rule, -1 for none
	}{
		{"first rule literal origin", "http://a.example", "PUT", []string{"content-type"}, 0},
		{"origin case-insensitive", "HTTP://B.EXAMPLE", "GET", nil, 0},
		{"prefixed header", "http://a.example", "PUT", []string{"x-ms-meta-foo", "Content-Type"}, 0},
		{"header not allowed falls to next rule", "http://a.example", "GET", []string{"x-other"}, 1},
		{"header not allowed, no fallback for PUT", "http://a.example", "PUT", []string{"x-other"}, -1},
		{"wildcard origin", "http://c.example", "GET", []string{"anything"}, 1},
		{"method not allowed", "http://c.example", "DELETE", nil, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := matchCORS(rules, tt.origin, tt.method, tt.headers)
			got := -1
			if ok {
				for i := range rules {
					if rules[i] == r {
						got = i
					}
				}
			}
			if got != tt.want {
				t.Fatalf("matchCORS = rule %d, want %d", got, tt.want)
			}
		})
	}
}

func TestServicePropertiesValidate(t *testing.T) {
	t.Parallel()
	days := 7
	ok := &serviceProperties{Logging: &logging{Version: "1.0", RetentionPolicy: retentionPolicy{Enabled: true, Days: &days}}}
	if err := ok.validate(); err != nil {
		t.Fatalf("valid properties refused: %v", err)
	}
	bad := []*serviceProperties{
		{Logging: &logging{RetentionPolicy: retentionPolicy{Enabled: true}}},
		{HourMetrics: &metrics{Enabled: true}},
		{Cors: &corsRuleList{Rules: make([]corsRule, 6)}},
		{Cors: &corsRuleList{Rules: []corsRule{{AllowedOrigins: "*", AllowedMethods: "FETCH"}}}},
		{Cors: &corsRuleList{Rules: []corsRule{{AllowedOrigins: "*", AllowedMethods: "GET", MaxAgeInSeconds: -1}}}},
		{Cors: &corsRuleList{Rules: []corsRule{{AllowedOrigins: "*", AllowedMethods: "GET", AllowedHeaders: "a*,b*,c*"}}}},
	}
	for i, p := range bad {
		if err := p.validate(); err == nil {
			t.Errorf("case %d: invalid properties accepted", i)
		}
	}
}
