package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
)

// target is what the phases drive. The phases choose the keys (in w.pk and
// w.rk, or the arguments) and measure; a target performs the operation on
// its service and counts the requests it sends in w.requests.
type target interface {
	createTable(ctx context.Context, w *worker) error
	deleteTable(ctx context.Context, w *worker) error
	// insert writes one new entity with keys w.pk, w.rk; it fails if the
	// entity exists.
	insert(ctx context.Context, w *worker) error
	// get reads the entity w.pk, w.rk and checks it is the one asked for.
	get(ctx context.Context, w *worker) error
	// scan reads the whole partition w.pk, following continuations, and
	// returns the rows it read; want bounds the pages it follows.
	scan(ctx context.Context, w *worker, want int64) (int64, error)
	// writeBatch inserts rows firstRow..firstRow+count-1 of partition pk in
	// one atomic transaction.
	writeBatch(ctx context.Context, w *worker, pk []byte, firstRow, count int64) error
}

// Modes name the targets in reports.
const (
	ModeAzureTable     = "azure-table"
	ModeDirectDynamoDB = "direct-dynamodb"
)

// tableTarget speaks the Azure Table wire protocol the way aztables does.
type tableTarget struct{}

// createTable creates the run's table (Create Table: POST /Tables).
func (tableTarget) createTable(ctx context.Context, w *worker) error {
	body := []byte(`{"TableName":"` + w.r.table + `"}`)
	resp, err := w.send(ctx, http.MethodPost, w.r.base+"/Tables", body, jsonContentType, func(h http.Header) {
		h["Prefer"] = returnNoContent
	})
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusNoContent {
		return newStatusError("create table", resp, w.resp.Bytes())
	}
	return nil
}

// deleteTable deletes the run's table (Delete Table: DELETE /Tables('t')).
func (tableTarget) deleteTable(ctx context.Context, w *worker) error {
	resp, err := w.send(ctx, http.MethodDelete, w.r.base+"/Tables('"+w.r.table+"')", nil, nil, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusNoContent {
		return newStatusError("delete table", resp, w.resp.Bytes())
	}
	return nil
}

// insert inserts one entity as aztables' AddEntity does: POST /<table>
// without Prefer, so the service answers 201 with the entity.
func (tableTarget) insert(ctx context.Context, w *worker) error {
	// A fresh body per request: net/http may still be reading a request
	// body after Do returns, so it must not be reused.
	body := w.r.template.appendEntity(make([]byte, 0, w.r.template.size), w.pk, w.rk)
	resp, err := w.send(ctx, http.MethodPost, w.r.tableURL, body, jsonContentType, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusNoContent {
		return newStatusError("insert", resp, w.resp.Bytes())
	}
	return nil
}

// get reads one entity with both keys in the URL, as aztables' GetEntity
// sends it.
func (tableTarget) get(ctx context.Context, w *worker) error {
	u := make([]byte, 0, len(w.r.tableURL)+64)
	u = append(u, w.r.tableURL...)
	u = append(u, "(PartitionKey='"...)
	u = append(u, w.pk...)
	u = append(u, "',RowKey='"...)
	u = append(u, w.rk...)
	u = append(u, "')"...)
	resp, err := w.send(ctx, http.MethodGet, string(u), nil, nil, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return newStatusError("get", resp, w.resp.Bytes())
	}
	// A cheap check that the entity asked for is the one that came back.
	want := append(append([]byte(`"RowKey":"`), w.rk...), '"')
	if !bytes.Contains(w.resp.Bytes(), want) {
		return fmt.Errorf("get: response does not hold RowKey %s", w.rk)
	}
	return nil
}

// scan reads a partition with a PartitionKey filter, following the
// continuation headers until they stop, as aztables' ListEntities pager does.
func (tableTarget) scan(ctx context.Context, w *worker, want int64) (int64, error) {
	filter := "%24filter=" + escapeQueryValue("PartitionKey eq '"+string(w.pk)+"'")
	pageURL := w.r.tableURL + "()?" + filter
	// Azure may return short or even empty pages with a continuation; one
	// row per page is the worst case a correct server can produce.
	maxPages := want + 2
	var rows int64
	for page := int64(0); ; page++ {
		if page == maxPages {
			return 0, fmt.Errorf("query: partition %s still continuing after %d pages", w.pk, page)
		}
		resp, err := w.send(ctx, http.MethodGet, pageURL, nil, nil, nil)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, newStatusError("query", resp, w.resp.Bytes())
		}
		n, err := countValueRows(w.resp.Bytes())
		if err != nil {
			return 0, fmt.Errorf("query: %w", err)
		}
		rows += int64(n)
		nextPK := resp.Header.Get("x-ms-continuation-NextPartitionKey")
		if nextPK == "" {
			return rows, nil
		}
		// url.Values.Encode order, as the SDK sends it: $filter,
		// NextPartitionKey, NextRowKey.
		pageURL = w.r.tableURL + "()?" + filter + "&NextPartitionKey=" + escapeQueryValue(nextPK)
		if nextRK := resp.Header.Get("x-ms-continuation-NextRowKey"); nextRK != "" {
			pageURL += "&NextRowKey=" + escapeQueryValue(nextRK)
		}
	}
}

// writeBatch inserts the rows in one $batch request (an entity group
// transaction) and checks every operation's response.
func (tableTarget) writeBatch(ctx context.Context, w *worker, pk []byte, firstRow, count int64) error {
	bb := w.r.batch
	batchID, changesetID := newUUID(w.rng), newUUID(w.rng)
	body := make([]byte, 0, int(count)*(w.r.template.size+len(bb.requestLine)+200)+200)
	body = bb.begin(body, batchID, changesetID)
	for j := range count {
		w.rk = appendRowKey(w.rk[:0], firstRow+j)
		w.entity = w.r.template.appendEntity(w.entity[:0], pk, w.rk)
		body = bb.appendInsert(body, changesetID, j == 0, w.entity)
	}
	body = bb.end(body, batchID, changesetID)
	resp, err := w.send(ctx, http.MethodPost, w.r.batchURL, body, []string{batchContentType(batchID)}, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusAccepted {
		return newStatusError("batch", resp, w.resp.Bytes())
	}
	return checkBatchResponse(w.resp.Bytes(), int(count))
}
