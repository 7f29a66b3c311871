package httpapi

import (
	"mime"
	"net/http"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/edm"
)

// metadataLevel picks the JSON metadata level: $format overrides Accept
// ("Payload format for Table service operations"). Plain application/json
// and anything unspecified mean minimalmetadata.
func metadataLevel(c *call) (edm.Metadata, error) {
	return metadataLevelOf(c.r.Header, c.query.Get("$format"))
}

func metadataLevelOf(header http.Header, format string) (edm.Metadata, error) {
	if f := format; f != "" {
		lvl, ok := parseJSONMediaType(f)
		if !ok {
			return 0, apierr.Newf(apierr.InvalidInput, "$format=%s is not a supported format.", f)
		}
		return lvl, nil
	}
	accept := headerValue(header, "Accept")
	if accept == "" {
		return edm.MinimalMetadata, nil
	}
	for rest, more := accept, true; more; {
		var part string
		part, rest, more = strings.Cut(rest, ",")
		if lvl, ok := parseJSONMediaType(part); ok {
			return lvl, nil
		}
	}
	if strings.Contains(accept, "atom+xml") {
		return 0, apierr.New(apierr.AtomFormatNotSupported)
	}
	// */*, application/xml on a JSON operation, and so on: Azure answers
	// JSON with minimal metadata.
	return edm.MinimalMetadata, nil
}

func parseJSONMediaType(s string) (edm.Metadata, bool) {
	s = strings.TrimSpace(s)
	if lvl, ok := commonJSONMediaType(s); ok {
		return lvl, true
	}
	return parseJSONMediaTypeSlow(s)
}

// commonJSONMediaType recognises the JSON media types the SDKs send (in
// Accept, $format and Content-Type) spelled exactly as they send them,
// which every request would otherwise pay mime.ParseMediaType for. For
// these strings it gives the parser's answer (FuzzJSONMediaType checks
// that); any other spelling, even an equivalent one, reports false and goes
// to the parser.
func commonJSONMediaType(s string) (edm.Metadata, bool) {
	switch s {
	case "application/json", "application/json;odata=minimalmetadata":
		return edm.MinimalMetadata, true
	case "application/json;odata=nometadata":
		return edm.NoMetadata, true
	case "application/json;odata=fullmetadata":
		return edm.FullMetadata, true
	}
	return 0, false
}

// parseJSONMediaTypeSlow is parseJSONMediaType by way of the full media type
// grammar (RFC 2045 section 5.1).
func parseJSONMediaTypeSlow(s string) (edm.Metadata, bool) {
	mt, params, err := mime.ParseMediaType(s)
	if err != nil || mt != "application/json" {
		return 0, false
	}
	switch strings.ToLower(params["odata"]) {
	case "", "minimalmetadata":
		return edm.MinimalMetadata, true
	case "nometadata":
		return edm.NoMetadata, true
	case "fullmetadata":
		return edm.FullMetadata, true
	}
	return 0, false
}

// checkFormat refuses entity payloads that are not JSON: Atom/XML payloads
// belong to pre-2015 clients, which tablebridge does not serve.
func checkFormat(r *http.Request, op endpoint) error {
	if !op.json {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" || r.ContentLength == 0 && (r.Method == http.MethodGet || r.Method == http.MethodDelete) {
		return nil
	}
	if _, ok := commonJSONMediaType(ct); ok {
		return nil // application/json, as the parser would find
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return apierr.Newf(apierr.InvalidHeaderValue, "Content-Type: %s", ct)
	}
	switch mt {
	case "application/json":
		return nil
	case "application/atom+xml", "application/xml":
		return apierr.New(apierr.AtomFormatNotSupported)
	}
	return apierr.Newf(apierr.InvalidHeaderValue, "Content-Type: %s", ct)
}

// preference reads the Prefer header: return-content (the default for
// inserts) or return-no-content.
func preference(r *http.Request) (noContent, explicit bool) { return preferenceOf(r.Header) }

// It runs for every insert of a batch, so it walks the values in place
// rather than splitting and lower-casing them. EqualFold matches what
// lower-casing did: no letter of either preference has a non-ASCII case
// variant.
func preferenceOf(header http.Header) (noContent, explicit bool) {
	for _, v := range header["Prefer"] {
		for more := true; more; {
			var p string
			p, v, more = strings.Cut(v, ",")
			switch p = strings.TrimSpace(p); {
			case p == "return-no-content" || strings.EqualFold(p, "return-no-content"):
				return true, true
			case p == "return-content" || strings.EqualFold(p, "return-content"):
				return false, true
			}
		}
	}
	return false, false
}

// headerValue is h.Get(key) for a key already in canonical form, without
// canonicalizing it again on every call: the batch handler reads a few
// headers of each of up to 100 operations.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
