package httpapi

import (
	"net/http"

	"github.com/tablebridge/tablebridge/shared/batch"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// encoder returns the request's entity encoder by value, so that it can
// live on the handler's stack.
func (h *Handler) encoder(c *call) (entityEncoder, error) {
	level, err := metadataLevel(c)
	if err != nil {
		return entityEncoder{}, err
	}
	return entityEncoder{level: level, baseURL: c.baseURL, account: c.account, table: c.res.table}, nil
}

// entityWrite is the entity write that a request, or an operation of a
// batch, asks of the service: its operation, the entity its URL names, its
// body and its If-Match.
func entityWrite(op operation.Operation, res resource, header http.Header, body []byte) tables.EntityWrite {
	return tables.EntityWrite{Op: op, PartitionKey: res.partitionKey, RowKey: res.rowKey, Body: body,
		IfMatch: headerValue(header, "If-Match")}
}

func (h *Handler) insertEntity(c *call) (*response, error) {
	enc, err := h.encoder(c)
	if err != nil {
		return nil, err
	}
	body, err := readBody(c.r)
	if err != nil {
		return nil, err
	}
	defer putBodyBuffer(body)
	e, err := h.svc.WriteEntity(c.r.Context(), c.scope, c.res.table, entityWrite(c.op, c.res, c.r.Header, body))
	if err != nil {
		return nil, err
	}
	loc := entityLocation(c.baseURL, c.res.table, e)
	resp := &response{etag: tables.ETag(e.Timestamp), location: loc, dataServiceID: loc}
	if noContent, explicit := preference(c.r); noContent {
		resp.status, resp.preferenceApplied = http.StatusNoContent, "return-no-content"
		return resp, nil
	} else if explicit {
		resp.preferenceApplied = "return-content"
	}
	resp.status = http.StatusCreated
	resp.contentType = jsonContentType(enc.level)
	resp.body, resp.recycleBody = enc.appendEntity(getBodyBuffer(), e, true), true
	return resp, nil
}

// insertedPart answers an Insert Entity in a changeset, as insertEntity
// answers it alone: 201 with the entity, or 204 for "Prefer:
// return-no-content", in the form Azure gives a batch's parts.
func insertedPart(c *call, part *batch.Operation) (partAnswer, error) {
	noContent, explicit := preferenceOf(part.Header)
	if noContent {
		return func(e *model.Entity, etag string) batch.Response {
			return batch.InsertedNoContent(entityLocation(c.baseURL, c.res.table, e), etag)
		}, nil
	}
	level, err := metadataLevelOf(part.Header, queryValue(part.URL.RawQuery, "$format"))
	if err != nil {
		return nil, err
	}
	return func(e *model.Entity, etag string) batch.Response {
		enc := &entityEncoder{level: level, baseURL: c.baseURL, account: c.account, table: c.res.table}
		answer := batch.Inserted(entityLocation(c.baseURL, c.res.table, e), etag, jsonContentType(level), enc.appendEntity(nil, e, true))
		if explicit {
			answer.PreferenceApplied = "return-content"
		}
		return answer
	}, nil
}

func (h *Handler) getEntity(c *call) (*response, error) {
	enc, err := h.encoder(c)
	if err != nil {
		return nil, err
	}
	if err = enc.setSelect(c.query); err != nil {
		return nil, err
	}
	e, err := h.svc.GetEntity(c.r.Context(), c.scope, c.res.table, c.res.partitionKey, c.res.rowKey)
	if err != nil {
		return nil, err
	}
	return &response{
		status:      http.StatusOK,
		etag:        tables.ETag(e.Timestamp),
		contentType: jsonContentType(enc.level),
		body:        enc.appendEntity(getBodyBuffer(), e, true),
		recycleBody: true,
	}, nil
}

func (h *Handler) queryEntities(c *call) (*response, error) {
	enc, err := h.encoder(c)
	if err != nil {
		return nil, err
	}
	q := c.query
	if err = enc.setSelect(q); err != nil {
		return nil, err
	}
	in := tables.QueryInput{Table: c.res.table, Filter: q.Get("$filter")}
	if in.Top, err = parseTop(q.Get("$top")); err != nil {
		return nil, err
	}
	if in.After, err = entityCursor(q); err != nil {
		return nil, err
	}
	page, err := h.svc.QueryEntities(c.r.Context(), c.scope, in)
	if err != nil {
		return nil, err
	}
	c.itemsRead = page.ItemsRead
	budget := h.answerBudget()
	body, sent := enc.appendEntityList(getBodyBuffer(), page.Entities, &budget)
	resp := &response{status: http.StatusOK, contentType: jsonContentType(enc.level), body: body, recycleBody: true}
	next := page.Next
	if sent < len(page.Entities) {
		// The answer is full: the next page resumes after the last entity
		// sent, which the service reads as strictly after it.
		last := page.Entities[sent-1]
		next = &tables.Continuation{PartitionKey: last.PartitionKey, RowKey: last.RowKey}
	}
	if next != nil {
		resp.header = http.Header{
			"X-Ms-Continuation-Nextpartitionkey": {encodeToken(next.PartitionKey)},
			"X-Ms-Continuation-Nextrowkey":       {encodeToken(next.RowKey)},
		}
	}
	return resp, nil
}

// updateEntity serves Update, Merge, Insert Or Replace and Insert Or Merge
// Entity: the service tells them apart by the operation.
func (h *Handler) updateEntity(c *call) (*response, error) {
	body, err := readBody(c.r)
	if err != nil {
		return nil, err
	}
	defer putBodyBuffer(body)
	e, err := h.svc.WriteEntity(c.r.Context(), c.scope, c.res.table, entityWrite(c.op, c.res, c.r.Header, body))
	if err != nil {
		return nil, err
	}
	return &response{status: http.StatusNoContent, etag: tables.ETag(e.Timestamp)}, nil
}

// updatedPart answers them in a changeset: 204 with the new ETag.
func updatedPart(*call, *batch.Operation) (partAnswer, error) {
	return func(_ *model.Entity, etag string) batch.Response { return batch.Updated(etag) }, nil
}

func (h *Handler) deleteEntity(c *call) (*response, error) {
	_, err := h.svc.WriteEntity(c.r.Context(), c.scope, c.res.table, entityWrite(c.op, c.res, c.r.Header, nil))
	if err != nil {
		return nil, err
	}
	return &response{status: http.StatusNoContent}, nil
}

// deletedPart answers a Delete Entity in a changeset: 204.
func deletedPart(*call, *batch.Operation) (partAnswer, error) {
	return func(*model.Entity, string) batch.Response { return batch.Deleted() }, nil
}
