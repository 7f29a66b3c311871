package httpapi

import (
	"net/http"

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
	e, err := h.svc.InsertEntity(c.r.Context(), c.scope, c.res.table, body)
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

func (h *Handler) updateEntity(c *call) (*response, error) { return h.update(c, false) }
func (h *Handler) mergeEntity(c *call) (*response, error)  { return h.update(c, true) }

func (h *Handler) update(c *call, merge bool) (*response, error) {
	body, err := readBody(c.r)
	if err != nil {
		return nil, err
	}
	defer putBodyBuffer(body)
	ts, err := h.svc.UpdateEntity(c.r.Context(), c.scope, tables.UpdateInput{
		Table:        c.res.table,
		PartitionKey: c.res.partitionKey,
		RowKey:       c.res.rowKey,
		Body:         body,
		IfMatch:      c.r.Header.Get("If-Match"),
		Merge:        merge,
	})
	if err != nil {
		return nil, err
	}
	return &response{status: http.StatusNoContent, etag: tables.ETag(ts)}, nil
}

func (h *Handler) deleteEntity(c *call) (*response, error) {
	err := h.svc.DeleteEntity(c.r.Context(), c.scope, c.res.table, c.res.partitionKey, c.res.rowKey, c.r.Header.Get("If-Match"))
	if err != nil {
		return nil, err
	}
	return &response{status: http.StatusNoContent}, nil
}
