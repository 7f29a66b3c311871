package httpapi

import (
	"errors"
	"net/http"
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
		// empty changeset response (issue 22).
		b := h.batchBoundaries()
		body, err := batch.AppendResponse(nil, b, nil)
		if err != nil {
			return nil, apierr.Wrap(apierr.InternalError, err)
		}
		return &response{status: batch.StatusCode, contentType: b.ContentType(), body: body}, nil
	}

	ops := make([]tables.EntityWrite, len(req.Operations))
	table := ""
	for i := range req.Operations {
		op := &req.Operations[i]
		bop, opTable, err := h.batchOperation(c, op)
		if err != nil {
			return h.batchFailure(c, op.Fail(asAPIError(err)))
		}
		if i == 0 {
			table = opTable
		} else if opTable != table && !strings.EqualFold(opTable, table) {
			// A second table is a second entity group.
			return h.batchFailure(c, op.Fail(apierr.New(apierr.CommandsInBatchActOnDifferentPartitions)))
		}
		ops[i] = bop
	}
	c.res.table = table
	results, err := h.svc.Batch(c.r.Context(), c.scope, table, ops)
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
		switch ops[i].Op {
		case operation.InsertEntity:
			loc := entityLocation(c.baseURL, table, res.Entity)
			noContent, explicit := preferenceOf(op.Header)
			if noContent {
				parts[i] = batch.InsertedNoContent(loc, etag)
				break
			}
			level, err := metadataLevelOf(op.Header, op.URL.Query().Get("$format"))
			if err != nil {
				return h.batchFailure(c, op.Fail(asAPIError(err)))
			}
			enc := &entityEncoder{level: level, baseURL: c.baseURL, account: c.account, table: table}
			parts[i] = batch.Inserted(loc, etag, jsonContentType(level), enc.appendEntity(nil, res.Entity, true))
			if explicit {
				parts[i].PreferenceApplied = "return-content"
			}
		case operation.DeleteEntity:
			parts[i] = batch.Deleted()
		default:
			parts[i] = batch.Updated(etag)
		}
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

// batchOperation resolves one changeset operation: its target, its
// authorization, and the service operation it becomes.
func (h *Handler) batchOperation(c *call, op *batch.Operation) (tables.EntityWrite, string, error) {
	res, err := batchResource(op)
	if err != nil {
		return tables.EntityWrite{}, "", err
	}
	var need operation.Operation
	action := op.Action()
	switch action {
	case batch.ActionInsert:
		if res.kind != operation.PathEntities {
			return tables.EntityWrite{}, "", apierr.Newf(apierr.InvalidInput, "An insert must target the table, not an entity.")
		}
		need = operation.InsertEntity
	case batch.ActionUpdate, batch.ActionInsertOrReplace, batch.ActionMerge, batch.ActionInsertOrMerge, batch.ActionDelete:
		if res.kind != operation.PathEntity {
			return tables.EntityWrite{}, "", apierr.Newf(apierr.InvalidInput, "The operation must target an entity.")
		}
		switch action {
		case batch.ActionUpdate:
			need = operation.UpdateEntity
		case batch.ActionInsertOrReplace:
			need = operation.InsertOrReplaceEntity
		case batch.ActionMerge:
			need = operation.MergeEntity
		case batch.ActionInsertOrMerge:
			need = operation.InsertOrMergeEntity
		default:
			need = operation.DeleteEntity
		}
	default:
		return tables.EntityWrite{}, "", apierr.Newf(apierr.InvalidInput, "A GET must be the only operation of its batch.")
	}
	if err := c.principal.Authorize(need, res.table); err != nil {
		return tables.EntityWrite{}, "", err
	}
	return entityWrite(need, res, op.Header, op.Body), res.table, nil
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
	sub := *c
	r, err := http.NewRequestWithContext(c.r.Context(), http.MethodGet, op.URL.String(), nil)
	if err != nil {
		return batch.Response{}, apierr.Wrap(apierr.InvalidInput, err)
	}
	r.Header = op.Header
	sub.r, sub.res, sub.query = r, res, r.URL.Query()
	var resp *response
	if res.kind == operation.PathEntity {
		if err = c.principal.Authorize(operation.GetEntity, res.table); err == nil {
			resp, err = h.getEntity(&sub)
		}
	} else {
		if err = c.principal.Authorize(operation.QueryEntities, res.table); err == nil {
			resp, err = h.queryEntities(&sub)
		}
	}
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
