package httpapi

import (
	"encoding/xml"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// serviceProperties is the Table service properties document ("Set Table
// Service Properties"). Sections left out of a Set keep their stored value.
type serviceProperties struct {
	XMLName       xml.Name      `xml:"StorageServiceProperties"`
	Logging       *logging      `xml:"Logging,omitempty"`
	HourMetrics   *metrics      `xml:"HourMetrics,omitempty"`
	MinuteMetrics *metrics      `xml:"MinuteMetrics,omitempty"`
	Cors          *corsRuleList `xml:"Cors,omitempty"`
}

type logging struct {
	Version         string          `xml:"Version"`
	Delete          bool            `xml:"Delete"`
	Read            bool            `xml:"Read"`
	Write           bool            `xml:"Write"`
	RetentionPolicy retentionPolicy `xml:"RetentionPolicy"`
}

type metrics struct {
	Version         string          `xml:"Version"`
	Enabled         bool            `xml:"Enabled"`
	IncludeAPIs     *bool           `xml:"IncludeAPIs,omitempty"`
	RetentionPolicy retentionPolicy `xml:"RetentionPolicy"`
}

type retentionPolicy struct {
	Enabled bool `xml:"Enabled"`
	Days    *int `xml:"Days,omitempty"`
}

type corsRuleList struct {
	Rules []corsRule `xml:"CorsRule"`
}

type corsRule struct {
	AllowedOrigins  string `xml:"AllowedOrigins"`
	AllowedMethods  string `xml:"AllowedMethods"`
	MaxAgeInSeconds int    `xml:"MaxAgeInSeconds"`
	ExposedHeaders  string `xml:"ExposedHeaders"`
	AllowedHeaders  string `xml:"AllowedHeaders"`
}

// defaultServiceProperties is what an account that never set any reports:
// logging and metrics off, no CORS rules.
func defaultServiceProperties() *serviceProperties {
	return &serviceProperties{
		Logging:       &logging{Version: "1.0"},
		HourMetrics:   &metrics{Version: "1.0"},
		MinuteMetrics: &metrics{Version: "1.0"},
		Cors:          &corsRuleList{},
	}
}

// Limits from "CORS support for the Azure Storage services".
const (
	maxCORSRules          = 5
	maxCORSNameLength     = 256
	maxCORSLiteralHeaders = 64
	maxCORSPrefixHeaders  = 2
	maxRetentionDays      = 365
)

var corsMethods = map[string]bool{
	"DELETE": true, "GET": true, "HEAD": true, "MERGE": true, "POST": true,
	"OPTIONS": true, "PUT": true, "PATCH": true,
}

func (p *serviceProperties) validate() error {
	bad := func(format string, args ...any) error { return apierr.Newf(apierr.InvalidXMLDocument, format, args...) }
	checkRetention := func(section string, r retentionPolicy) error {
		if r.Enabled && (r.Days == nil || *r.Days < 1 || *r.Days > maxRetentionDays) {
			return bad("%s: RetentionPolicy Days must be 1 to %d when enabled.", section, maxRetentionDays)
		}
		return nil
	}
	if p.Logging != nil {
		if err := checkRetention("Logging", p.Logging.RetentionPolicy); err != nil {
			return err
		}
	}
	for name, m := range map[string]*metrics{"HourMetrics": p.HourMetrics, "MinuteMetrics": p.MinuteMetrics} {
		if m == nil {
			continue
		}
		if m.Enabled && m.IncludeAPIs == nil {
			return bad("%s: IncludeAPIs is required when metrics are enabled.", name)
		}
		if err := checkRetention(name, m.RetentionPolicy); err != nil {
			return err
		}
	}
	if p.Cors == nil {
		return nil
	}
	if len(p.Cors.Rules) > maxCORSRules {
		return bad("At most %d CORS rules are allowed.", maxCORSRules)
	}
	for i, r := range p.Cors.Rules {
		if strings.TrimSpace(r.AllowedOrigins) == "" || strings.TrimSpace(r.AllowedMethods) == "" {
			return bad("CORS rule %d needs AllowedOrigins and AllowedMethods.", i)
		}
		if r.MaxAgeInSeconds < 0 {
			return bad("CORS rule %d: MaxAgeInSeconds must not be negative.", i)
		}
		for _, m := range splitList(r.AllowedMethods) {
			if !corsMethods[strings.ToUpper(m)] {
				return bad("CORS rule %d: method %q is not allowed.", i, m)
			}
		}
		for _, o := range splitList(r.AllowedOrigins) {
			if len(o) > maxCORSNameLength {
				return bad("CORS rule %d: an origin is longer than %d characters.", i, maxCORSNameLength)
			}
		}
		for _, hs := range []string{r.AllowedHeaders, r.ExposedHeaders} {
			literal, prefix := 0, 0
			for _, h := range splitList(hs) {
				if len(h) > maxCORSNameLength {
					return bad("CORS rule %d: a header is longer than %d characters.", i, maxCORSNameLength)
				}
				if strings.HasSuffix(h, "*") && h != "*" {
					prefix++
				} else {
					literal++
				}
			}
			if literal > maxCORSLiteralHeaders || prefix > maxCORSPrefixHeaders {
				return bad("CORS rule %d: at most %d literal and %d prefixed headers.", i, maxCORSLiteralHeaders, maxCORSPrefixHeaders)
			}
		}
	}
	return nil
}

// merge overlays the sections present in p onto stored.
func (p *serviceProperties) mergeInto(stored *serviceProperties) *serviceProperties {
	out := *stored
	if p.Logging != nil {
		out.Logging = p.Logging
	}
	if p.HourMetrics != nil {
		out.HourMetrics = p.HourMetrics
	}
	if p.MinuteMetrics != nil {
		out.MinuteMetrics = p.MinuteMetrics
	}
	if p.Cors != nil {
		out.Cors = p.Cors
	}
	return &out
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseServiceProperties(doc []byte) (*serviceProperties, error) {
	var p serviceProperties
	if err := xml.Unmarshal(doc, &p); err != nil {
		return nil, &apierr.Error{Code: apierr.InvalidXMLDocument, Err: err}
	}
	return &p, nil
}

func marshalXML(v any) ([]byte, error) {
	b, err := xml.Marshal(v)
	if err != nil {
		return nil, apierr.Wrap(apierr.InternalError, err)
	}
	return append([]byte(`<?xml version="1.0" encoding="utf-8"?>`), b...), nil
}
