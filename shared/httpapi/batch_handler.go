package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/batch"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// batch serves an entity group transaction (POST /$batch): the codec in
// package batch parses it, each operation is authorized like its
// single-entity counterpart, and tables.Service.Batch applies them all or
// none through one atomic store write.
func (h *Handler) batch(c *call) (*response, error) {
	data, err := readBody(c.r)
	if err != nil {
		return nil, err
	}
	// Nothing this returns refers to data: the entities, the response and
	// any error message are built from copies.
	defer putBodyBuffer(data)
	req, err := batch.ParseBytes(c.r.Header.Get("Content-Type"), data)
	if err != nil {
		var oe *batch.OperationError
		if errors.As(err, &oe) {
			return h.batchFailure(c, oe)
		}
		return nil, err
	}
	if req.IsQuery {
		return h.batchQuery(c, &req.Operations[0])
	}
	if len(req.Operations) == 0 {
		// An empty changeset changes nothing: Azure answers 202 with an
		// empty changeset response (docs/compatibility.md).
		b := h.batchBoundaries()
		body, err := batch.AppendResponse(nil, b, nil)
		if err != nil {
			return nil, apierr.Wrap(apierr.InternalError, err)
		}
		return &response{status: batch.StatusCode, contentType: b.ContentType(), body: body}, nil
	}

	writes := make([]tables.EntityWrite, len(req.Operations))
	answers := make([]partAnswer, len(req.Operations))
	table := ""
	for i := range req.Operations {
		op := &req.Operations[i]
		w, opTable, err := h.changesetWrite(c, op)
		if err == nil {
			answers[i], err = endpoints[w.Op].part(c, op)
		}
		if err != nil {
			return h.batchFailure(c, op.Fail(asAPIError(err)))
		}
		if i == 0 {
			table = opTable
		} else if opTable != table && !strings.EqualFold(opTable, table) {
			// A second table is a second entity group.
			return h.batchFailure(c, op.Fail(apierr.New(apierr.CommandsInBatchActOnDifferentPartitions)))
		}
		writes[i] = w
	}
	c.res.table = table
	results, err := h.svc.Batch(c.r.Context(), c.scope, table, writes)
	if err != nil {
		var be *tables.BatchError
		if !errors.As(err, &be) {
			return nil, err
		}
		op := &req.Operations[be.Index]
		return h.batchFailure(c, op.Fail(be.APIError()))
	}

	parts := make([]batch.Response, len(results))
	// The operations of a transaction share one Timestamp, so they share
	// one ETag: format it once, not once per operation.
	var etag string
	var etagTime time.Time
	for i, res := range results {
		op := &req.Operations[i]
		if etag == "" || !res.Entity.Timestamp.Equal(etagTime) {
			etag, etagTime = tables.ETag(res.Entity.Timestamp), res.Entity.Timestamp
		}
		parts[i] = answers[i](res.Entity, etag)
		parts[i].ContentID = op.ContentID
	}
	b := h.batchBoundaries()
	body, err := batch.AppendResponse(getBodyBuffer(), b, parts)
	if err != nil {
		return nil, apierr.Wrap(apierr.InternalError, err)
	}
	if h.opts.AnswerCost(body) > h.opts.AnswerBudget {
		// The inserted entities do not fit the answer (up to 100 entities of
		// a 4 MiB batch, larger as JSON and larger again in a Lambda
		// response). The changeset is applied and cannot be cut, so each
		// insert answers 204 with its ETag and Location instead, as for
		// "Prefer: return-no-content": Prefer is a preference a server may
		// decline (RFC 7240 section 2), and Preference-Applied tells the
		// client which one it got.
		for i := range parts {
			if parts[i].Status == http.StatusCreated {
				part := batch.InsertedNoContent(parts[i].Location, parts[i].ETag)
				part.ContentID = parts[i].ContentID
				parts[i] = part
			}
		}
		if body, err = batch.AppendResponse(body[:0], b, parts); err != nil {
			putBodyBuffer(body)
			return nil, apierr.Wrap(apierr.InternalError, err)
		}
	}
	return &response{status: batch.StatusCode, contentType: b.ContentType(), body: body, recycleBody: true}, nil
}

// changesetWrite resolves one operation of a changeset as a request of its
// own resolves, holds it to what a changeset carries (changesetOperation),
// authorizes it like one, and returns the entity write it asks of the
// service and the table it names.
func (h *Handler) changesetWrite(c *call, part *batch.Operation) (tables.EntityWrite, string, error) {
	res, err := batchResource(part)
	if err != nil {
		return tables.EntityWrite{}, "", err
	}
	op, err := changesetOperation(res, part)
	if err != nil {
		return tables.EntityWrite{}, "", err
	}
	if err := c.principal.Authorize(op.Authorization(), res.table); err != nil {
		return tables.EntityWrite{}, "", err
	}
	return entityWrite(op, res, part.Header, part.Body), res.table, nil
}

// changesetOperation resolves an operation of a changeset (its method
// already untunnelled by the parser) and accepts the entity writes, the
// operations a changeset carries. The rest is refused by the batch's own
// rules, before the answer a request of its own would get: a GET belongs
// alone in its batch, and a verb that is an entity write's on the other
// entity path (an insert on an entity, an update or delete on the table)
// is told which path it needs.
func changesetOperation(res resource, part *batch.Operation) (operation.Operation, error) {
	op, err := resolvePart(res, part)
	if err == nil && op.WritesEntity() {
		return op, nil
	}
	if part.Method == http.MethodGet {
		return 0, apierr.Newf(apierr.InvalidInput, "A GET must be the only operation of its batch.")
	}
	other := operation.PathEntity
	if res.kind == operation.PathEntity {
		other = operation.PathEntities
	}
	if write, miss := operation.Resolve(other, part.Method, "", "", part.Header); miss == operation.Matched && write.WritesEntity() {
		if other == operation.PathEntities {
			return 0, apierr.Newf(apierr.InvalidInput, "An insert must target the table, not an entity.")
		}
		return 0, apierr.Newf(apierr.InvalidInput, "The operation must target an entity.")
	}
	if err != nil {
		return 0, err
	}
	return 0, apierr.Newf(apierr.InvalidInput, "%s cannot be part of a changeset.", op)
}

// resolvePart resolves an operation of a batch as resolveOperation resolves
// a request of its own; the parser has applied X-HTTP-Method already.
func resolvePart(res resource, part *batch.Operation) (operation.Operation, error) {
	raw := part.URL.RawQuery
	return resolve(res, part.Method, queryValue(raw, "restype"), queryValue(raw, "comp"), part.Header)
}

// batchResource parses an embedded request's target. Its last path segment
// is the resource, since neither table names nor keys may contain "/"; the
// account and any stage prefix before it are the outer request's.
func batchResource(op *batch.Operation) (resource, error) {
	// An embedded request's URL is held to the outer request's limit: a
	// $filter too long for the URL of a query does not become servable by
	// moving into a batch body.
	if n := len(op.URL.RequestURI()); n > MaxURLBytes {
		return resource{}, urlTooLong(n)
	}
	p := op.URL.Path
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i:]
	}
	res, err := parseResource(p)
	if err != nil {
		return resource{}, err
	}
	if res.kind != operation.PathEntities && res.kind != operation.PathEntity {
		return resource{}, apierr.Newf(apierr.InvalidInput, "A batch operation must target a table's entities.")
	}
	return res, nil
}

// queryValue is url.Values.Get(name) on the query rawQuery parses to,
// without building the map: every operation of a changeset is resolved by
// its restype and comp, and the SDKs give each one a $format (aztables,
// Azure.Data.Tables), so a map per operation would allocate for every
// operation of a transaction. A query of more parameters than net/url
// takes is left to net/url, which refuses it whole.
func queryValue(rawQuery, name string) string {
	if len(rawQuery) >= maxQueryScan && strings.Count(rawQuery, "&") >= maxQueryScan {
		q, _ := url.ParseQuery(rawQuery)
		return q.Get(name)
	}
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		key, value, _ := strings.Cut(pair, "=")
		// net/url drops a pair with a semicolon (and an empty one).
		if pair == "" || !queryKeyIs(key, name) || strings.Contains(pair, ";") {
			continue
		}
		if value, err := url.QueryUnescape(value); err == nil {
			return value
		}
	}
	return ""
}

// queryKeyIs reports whether key unescapes (url.QueryUnescape) to name,
// without the copy unescaping makes of a key that holds an escape, as the
// SDKs' "%24format" does. A key that does not unescape names nothing.
func queryKeyIs(key, name string) bool {
	n := 0
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch c {
		case '+':
			c = ' '
		case '%':
			if i+2 >= len(key) {
				return false
			}
			hi, okHi := unhex(key[i+1])
			lo, okLo := unhex(key[i+2])
			if !okHi || !okLo {
				return false
			}
			c, i = hi<<4|lo, i+2
		}
		if n == len(name) || name[n] != c {
			return false
		}
		n++
	}
	return n == len(name)
}

// unhex is the value of a hexadecimal digit.
func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// maxQueryScan is the number of parameters from which queryValue hands a
// query to net/url (whose own limit is 10000 by default).
const maxQueryScan = 1000

// batchQuery serves a batch whose only operation is a GET, as the single
// part of the batch response.
func (h *Handler) batchQuery(c *call, op *batch.Operation) (*response, error) {
	part, err := h.batchQueryPart(c, op)
	if err != nil {
		ae := asAPIError(err)
		if part, err = batch.FailureResponse(op.Fail(ae), c.requestID, c.now); err != nil {
			return nil, apierr.Wrap(apierr.InternalError, err)
		}
	}
	part.ContentID = op.ContentID
	b := h.batchBoundaries()
	body, err := batch.AppendQueryResponse(getBodyBuffer(), b, part)
	// The part's body (a pooled answer of getEntity or queryEntities, or a
	// failure's) is copied into the batch answer, and nothing else holds it.
	putBodyBuffer(part.Body)
	if err != nil {
		return nil, apierr.Wrap(apierr.InternalError, err)
	}
	return &response{status: batch.StatusCode, contentType: b.ContentType(), body: body, recycleBody: true}, nil
}

func (h *Handler) batchQueryPart(c *call, op *batch.Operation) (batch.Response, error) {
	res, err := batchResource(op)
	if err != nil {
		return batch.Response{}, err
	}
	read, err := resolvePart(res, op)
	if err != nil {
		return batch.Response{}, err
	}
	if !read.ReadsEntities() {
		return batch.Response{}, apierr.Newf(apierr.InvalidInput, "%s cannot stand alone in a batch; only an entity query can.", read)
	}
	if err := c.principal.Authorize(read.Authorization(), res.table); err != nil {
		return batch.Response{}, err
	}
	sub := *c
	r, err := http.NewRequestWithContext(c.r.Context(), http.MethodGet, op.URL.String(), nil)
	if err != nil {
		return batch.Response{}, apierr.Wrap(apierr.InvalidInput, err)
	}
	r.Header = op.Header
	sub.r, sub.res, sub.query, sub.op = r, res, r.URL.Query(), read
	resp, err := endpoints[read].serve(h, &sub)
	if err != nil {
		return batch.Response{}, err
	}
	part := batch.Retrieved(resp.etag, resp.contentType, resp.body)
	for k, v := range resp.header {
		if part.Header == nil {
			part.Header = http.Header{}
		}
		part.Header[k] = v
	}
	return part, nil
}

func (h *Handler) batchFailure(c *call, oe *batch.OperationError) (*response, error) {
	b := h.batchBoundaries()
	body, err := batch.AppendFailure(nil, b, oe, c.requestID, c.now)
	if err != nil {
		return nil, apierr.Wrap(apierr.InternalError, err)
	}
	if oe.Err.HTTPStatus() >= 500 && !clientCancelled(c.r) {
		h.log.Error("batch operation failed", "requestId", c.requestID, "index", oe.Index, "err", oe.Err)
	}
	return &response{status: batch.StatusCode, contentType: b.ContentType(), body: body}, nil
}

func (h *Handler) batchBoundaries() batch.Boundaries {
	return batch.Boundaries{Batch: h.opts.BatchBoundary(), Changeset: h.opts.BatchBoundary()}
}

func asAPIError(err error) *apierr.Error {
	if ae, ok := apierr.As(err); ok {
		return ae
	}
	return apierr.Wrap(apierr.InternalError, err)
}
