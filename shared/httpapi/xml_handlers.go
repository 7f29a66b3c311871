package httpapi

import (
	"encoding/xml"
	"net/http"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
)

func (h *Handler) loadServiceProperties(c *call) (*serviceProperties, error) {
	doc, err := h.svc.ServiceProperties(c.r.Context(), c.scope)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return defaultServiceProperties(), nil
	}
	p, err := parseServiceProperties(doc)
	if err != nil {
		return nil, apierr.Wrap(apierr.InternalError, err)
	}
	return p, nil
}

func (h *Handler) getServiceProperties(c *call) (*response, error) {
	p, err := h.loadServiceProperties(c)
	if err != nil {
		return nil, err
	}
	body, err := marshalXML(p)
	if err != nil {
		return nil, err
	}
	return &response{status: http.StatusOK, contentType: contentTypeXML, body: body}, nil
}

func (h *Handler) setServiceProperties(c *call) (*response, error) {
	body, err := readXMLBody(c.r)
	if err != nil {
		return nil, err
	}
	in, err := parseServiceProperties(body)
	if err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	stored, err := h.loadServiceProperties(c)
	if err != nil {
		return nil, err
	}
	doc, err := marshalXML(in.mergeInto(stored))
	if err != nil {
		return nil, err
	}
	if err := h.svc.SetServiceProperties(c.r.Context(), c.scope, doc); err != nil {
		return nil, err
	}
	h.cors.invalidate(c.account)
	return &response{status: http.StatusAccepted}, nil
}

// getServiceStats answers "Get Table Service Stats", which Azure serves
// only on the secondary location ("<account>-secondary"); on the primary the
// comp=stats query is 400 InvalidQueryParameterValue. tablebridge's
// secondary is the primary's own store: replication is always live and
// synced as of now.
func (h *Handler) getServiceStats(c *call) (*response, error) {
	if !c.secondary {
		return nil, apierr.Newf(apierr.InvalidQueryParameterValue,
			"QueryParameterName: comp\nQueryParameterValue: stats\nReason: Get Table Service Stats is served on the secondary location only: address %s%s.",
			c.account, secondarySuffix)
	}
	type geo struct {
		Status       string `xml:"Status"`
		LastSyncTime string `xml:"LastSyncTime"`
	}
	stats := struct {
		XMLName        xml.Name `xml:"StorageServiceStats"`
		GeoReplication geo      `xml:"GeoReplication"`
	}{GeoReplication: geo{Status: "live", LastSyncTime: c.now.Format(http.TimeFormat)}}
	body, err := marshalXML(stats)
	if err != nil {
		return nil, err
	}
	return &response{status: http.StatusOK, contentType: contentTypeXML, body: body}, nil
}

// signedIdentifiers is the ACL document of "Get Table ACL" / "Set Table ACL".
type signedIdentifiers struct {
	XMLName     xml.Name           `xml:"SignedIdentifiers"`
	Identifiers []signedIdentifier `xml:"SignedIdentifier"`
}

type signedIdentifier struct {
	ID           string       `xml:"Id"`
	AccessPolicy accessPolicy `xml:"AccessPolicy"`
}

type accessPolicy struct {
	Start      string `xml:"Start,omitempty"`
	Expiry     string `xml:"Expiry,omitempty"`
	Permission string `xml:"Permission,omitempty"`
}

const aclTimeFormat = "2006-01-02T15:04:05.0000000Z"

func (h *Handler) getTableACL(c *call) (*response, error) {
	info, err := h.svc.TableACL(c.r.Context(), c.scope, c.res.table)
	if err != nil {
		return nil, err
	}
	doc := signedIdentifiers{Identifiers: []signedIdentifier{}}
	for _, si := range info.ACL {
		x := signedIdentifier{ID: si.ID, AccessPolicy: accessPolicy{Permission: si.Permission}}
		if !si.Start.IsZero() {
			x.AccessPolicy.Start = si.Start.UTC().Format(aclTimeFormat)
		}
		if !si.Expiry.IsZero() {
			x.AccessPolicy.Expiry = si.Expiry.UTC().Format(aclTimeFormat)
		}
		doc.Identifiers = append(doc.Identifiers, x)
	}
	body, err := marshalXML(doc)
	if err != nil {
		return nil, err
	}
	return &response{status: http.StatusOK, contentType: contentTypeXML, body: body}, nil
}

func (h *Handler) setTableACL(c *call) (*response, error) {
	body, err := readXMLBody(c.r)
	if err != nil {
		return nil, err
	}
	var doc signedIdentifiers
	if len(body) > 0 {
		if err := xml.Unmarshal(body, &doc); err != nil {
			return nil, &apierr.Error{Code: apierr.InvalidXMLDocument, Err: err}
		}
	}
	acl := make([]model.SignedIdentifier, 0, len(doc.Identifiers))
	for _, x := range doc.Identifiers {
		si := model.SignedIdentifier{ID: x.ID, Permission: x.AccessPolicy.Permission}
		var err error
		if si.Start, err = parseACLTime(x.AccessPolicy.Start); err != nil {
			return nil, err
		}
		if si.Expiry, err = parseACLTime(x.AccessPolicy.Expiry); err != nil {
			return nil, err
		}
		acl = append(acl, si)
	}
	if err := h.svc.SetTableACL(c.r.Context(), c.scope, c.res.table, acl); err != nil {
		return nil, err
	}
	return &response{status: http.StatusNoContent}, nil
}

// parseACLTime reads an ISO 8601 UTC time ("Set Table ACL": "must be in a
// supported ISO 8601 format"), with or without fractional seconds.
func parseACLTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, apierr.Newf(apierr.InvalidXMLDocument, "The time %q is not ISO 8601.", s)
}
