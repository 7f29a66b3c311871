package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// response is what an operation returns; writeResponse puts it on the wire.
type response struct {
	status int
	// The headers of the entity and table operations, each written when
	// set: fields rather than entries of header, which would cost a map
	// per request.
	etag              string      // ETag
	location          string      // Location
	dataServiceID     string      // DataServiceId
	preferenceApplied string      // Preference-Applied
	header            http.Header // other headers; may be nil
	contentType       string
	body              []byte
	// recycleBody hands body back to bodyBuffers once it is written
	// (ResponseWriter.Write, like every io.Writer, keeps no reference).
	recycleBody bool
}

const (
	contentTypeJSONMinimal = "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
	contentTypeJSONNone    = "application/json;odata=nometadata;streaming=true;charset=utf-8"
	contentTypeJSONFull    = "application/json;odata=fullmetadata;streaming=true;charset=utf-8"
	contentTypeXML         = "application/xml"
	contentTypeJSON        = "application/json"
)

func jsonContentType(level edm.Metadata) string {
	switch level {
	case edm.NoMetadata:
		return contentTypeJSONNone
	case edm.FullMetadata:
		return contentTypeJSONFull
	}
	return contentTypeJSONMinimal
}

// bodyBuffers recycles request and response bodies: an entity group
// transaction's, tens of KiB each, and the answers of the single-entity
// operations and queries, so that they do not drive the garbage
// collector. A buffer belongs to the request that took it until it hands it
// back with putBodyBuffer; a response with recycleBody set hands its body
// back once ServeHTTP has written it.
// It holds *[]byte of length 0.
var bodyBuffers sync.Pool

// maxPooledBodyBuffer keeps a rare huge batch or query page from pinning
// its buffers.
const maxPooledBodyBuffer = 1 << 20

func getBodyBuffer() []byte {
	if p, ok := bodyBuffers.Get().(*[]byte); ok {
		return *p
	}
	return nil
}

// putBodyBuffer hands b back for reuse; nothing may refer to it after.
func putBodyBuffer(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooledBodyBuffer {
		return
	}
	b = b[:0]
	bodyBuffers.Put(&b)
}

// commonHeaders are on every response ("Common REST API headers").
func (h *Handler) commonHeaders(c *call) http.Header {
	hd := c.w.Header()
	hd["X-Ms-Request-Id"] = []string{c.requestID}
	hd["X-Ms-Version"] = []string{c.version}
	hd["Date"] = []string{h.dates.format(c.now)}
	return hd
}

// dateCache formats the Date header once per second instead of once per
// answer: the header has a resolution of one second (http.TimeFormat), so
// every answer within a second carries the same text.
type dateCache struct {
	last atomic.Pointer[formattedDate]
}

type formattedDate struct {
	unix int64
	text string
}

// format returns t, in UTC, as http.TimeFormat spells it.
func (d *dateCache) format(t time.Time) string {
	sec := t.Unix()
	if f := d.last.Load(); f != nil && f.unix == sec {
		return f.text
	}
	f := &formattedDate{unix: sec, text: t.UTC().Format(http.TimeFormat)}
	d.last.Store(f)
	return f.text
}

func (h *Handler) writeResponse(c *call, resp *response) int {
	hd := h.commonHeaders(c)
	for k, v := range resp.header {
		hd[k] = v
	}
	if resp.etag != "" {
		hd["Etag"] = []string{resp.etag}
	}
	if resp.location != "" {
		hd["Location"] = []string{resp.location}
	}
	if resp.dataServiceID != "" {
		hd["Dataserviceid"] = []string{resp.dataServiceID}
	}
	if resp.preferenceApplied != "" {
		hd["Preference-Applied"] = []string{resp.preferenceApplied}
	}
	if resp.contentType != "" {
		hd["Content-Type"] = []string{resp.contentType}
	}
	if resp.body != nil || resp.status != http.StatusNoContent {
		hd["Content-Length"] = []string{strconv.Itoa(len(resp.body))}
	}
	hd["X-Content-Type-Options"] = []string{"nosniff"}
	hd["Cache-Control"] = []string{"no-cache"}
	c.w.WriteHeader(resp.status)
	if c.r.Method != http.MethodHead && len(resp.body) > 0 {
		c.bytesOut, _ = c.w.Write(resp.body)
	}
	return resp.status
}

// ServeError answers r with err the way the handler answers its own errors.
// It is for adapters that fail before a request exists to serve, such as an
// API Gateway event that is not a proxy request, so that there too the
// client gets Azure's error shape from the one writer.
func (h *Handler) ServeError(w http.ResponseWriter, r *http.Request, err error) {
	h.writeError(&call{r: r, w: w, requestID: h.opts.NewRequestID(), now: h.opts.Now().UTC(), version: defaultVersion}, err)
}

// writeError is the only place errors are written: the odata.error JSON body
// (or XML <Error> for the XML operations), x-ms-error-code, and the common
// headers. Internal errors are logged here, once; a request whose client
// went away is not an internal error (ServeHTTP logs it at info level).
func (h *Handler) writeError(c *call, err error) (int, apierr.Code) {
	ae, ok := apierr.As(err)
	if !ok {
		ae = apierr.Wrap(apierr.InternalError, err)
	}
	status := ae.HTTPStatus()
	if status >= 500 && !clientCancelled(c.r) && !errors.Is(err, errOverloaded) {
		h.log.Error("request failed", "requestId", c.requestID, "account", c.account,
			"operation", c.opName(), "table", c.res.table, "status", status, "code", string(ae.Code), "err", err)
	}
	hd := h.commonHeaders(c)
	hd["X-Ms-Error-Code"] = []string{string(ae.Code)}
	if ae.Challenge != "" {
		hd["Www-Authenticate"] = []string{ae.Challenge}
	}
	msg := ae.Text() + "\nRequestId:" + c.requestID + "\nTime:" + c.now.Format("2006-01-02T15:04:05.0000000Z")
	// A request without credentials is answered before the request is
	// read as OData: plain application/json whatever it accepts, and no
	// Preference-Applied though it asked for no content (the Java SDK's
	// recording TableAsyncClientTest.createTableWithMultipleTenants, and the
	// .NET SDK's EnableTenantDiscoveryLiveTests(StorageAAD)/EnableTenantDiscoveryDoesNotFailAuth).
	unauthenticated := ae.Code == apierr.NoAuthenticationInformation
	var body []byte
	switch {
	case c.xml:
		hd["Content-Type"] = []string{contentTypeXML}
		body = appendXMLError(nil, ae.Code, msg)
	case unauthenticated:
		hd["Content-Type"] = []string{contentTypeJSON}
		body = appendJSONError(nil, ae.Code, msg)
	default:
		hd["Content-Type"] = []string{errorContentType(c)}
		body = appendJSONError(nil, ae.Code, msg)
	}
	if !unauthenticated && preferenceAppliesOnError(c) {
		hd["Preference-Applied"] = []string{"return-no-content"}
	}
	hd["Content-Length"] = []string{strconv.Itoa(len(body))}
	c.w.WriteHeader(status)
	if c.r.Method != http.MethodHead {
		c.bytesOut, _ = c.w.Write(body)
	}
	return status, ae.Code
}

// errorContentType is the media type of a JSON error answer: it follows
// the request's Accept (or $format) as a success would, e.g.
// application/json;odata=nometadata for GET Tables('missing') with
// Accept: application/json;odata=nometadata (azure-cosmos-table-python
// azure-cosmosdb-table/tests/recordings/test_table.test_table_not_exists.yaml).
// An Accept that names no JSON level, or one that is itself the error,
// gets minimal metadata.
func errorContentType(c *call) string {
	if c.r == nil {
		return contentTypeJSONMinimal
	}
	format := ""
	if c.query != nil {
		format = c.query.Get("$format")
	}
	level, err := metadataLevelOf(c.r.Header, format)
	if err != nil {
		return contentTypeJSONMinimal
	}
	return jsonContentType(level)
}

// preferenceAppliesOnError reports whether an error answer carries
// Preference-Applied: return-no-content. Azure sends it on the errors of
// the two operations that honour Prefer, Create Table and Insert Entity,
// when the request asked for no content: 409 TableAlreadyExists
// (azure-cosmos-table-python
// azure-cosmosdb-table/tests/recordings/test_table.test_create_table_with_already_existing_table_fail_on_exist.yaml),
// 400 InvalidResourceName and 409 EntityAlreadyExists.
func preferenceAppliesOnError(c *call) bool {
	if c.r == nil || (c.op != operation.CreateTable && c.op != operation.InsertEntity) {
		return false
	}
	noContent, _ := preference(c.r)
	return noContent
}

func appendJSONError(b []byte, code apierr.Code, msg string) []byte {
	b = append(b, `{"odata.error":{"code":`...)
	b = edm.AppendString(b, string(code))
	b = append(b, `,"message":{"lang":"en-US","value":`...)
	b = edm.AppendString(b, msg)
	return append(b, "}}}"...)
}

func appendXMLError(b []byte, code apierr.Code, msg string) []byte {
	var sb strings.Builder
	sb.WriteString(`<?xml version="1.0" encoding="utf-8"?><Error><Code>`)
	xmlEscape(&sb, string(code))
	sb.WriteString("</Code><Message>")
	xmlEscape(&sb, msg)
	sb.WriteString("</Message></Error>")
	return append(b, sb.String()...)
}

var xmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func xmlEscape(sb *strings.Builder, s string) { _, _ = xmlReplacer.WriteString(sb, s) }

// newRequestIDFunc returns a generator of unique request ids shaped like
// Azure's (a UUID): a random per-process prefix and a counter, so the hot
// path costs no system call.
func newRequestIDFunc() func() string {
	var prefix [10]byte
	_, _ = rand.Read(prefix[:])
	var n atomic.Uint64
	p := hex.EncodeToString(prefix[:4]) + "-" + hex.EncodeToString(prefix[4:6]) + "-" +
		hex.EncodeToString(prefix[6:8]) + "-" + hex.EncodeToString(prefix[8:10]) + "-"
	return func() string {
		v := n.Add(1)
		var buf [12]byte
		const digits = "0123456789abcdef"
		for i := 11; i >= 0; i-- {
			buf[i] = digits[v&0xf]
			v >>= 4
		}
		return p + string(buf[:])
	}
}
