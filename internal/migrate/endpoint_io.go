package migrate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

var (
	_ Source = (*Endpoint)(nil)
	_ Dest   = (*Endpoint)(nil)
)

// Tables lists the account's tables. A table SAS reaches one table, which it
// names (tn), so that one is the list.
func (e *Endpoint) Tables(ctx context.Context) ([]string, error) {
	if e.table != "" {
		return []string{e.table}, nil
	}
	var names []string
	pager := e.client.NewListTablesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list tables at %s: %w", e.url, err)
		}
		for _, t := range page.Tables {
			if t.Name != nil {
				names = append(names, *t.Name)
			}
		}
	}
	return names, nil
}

// SplitsRanges: an endpoint takes a $filter on PartitionKey.
func (e *Endpoint) SplitsRanges() bool { return true }

// ReadPage queries one page at full metadata, so that a service which
// annotates more than Azure does (Azurite, Cosmos DB) gives every type it
// knows, and decodes the raw body (see capturePolicy).
func (e *Endpoint) ReadPage(ctx context.Context, table string, req PageRequest) (Page, error) {
	top := req.Top
	if top <= 0 || top > MaxPageSize {
		top = MaxPageSize
	}
	opts := &aztables.ListEntitiesOptions{
		Top:    to.Ptr(int32(top)),
		Format: to.Ptr(aztables.MetadataFormatFull),
	}
	f := req.Range.Filter()
	serverSince := !req.Since.IsZero() && !cosmosTable(e.url)
	if serverSince {
		if f != "" {
			f += " and "
		}
		f += sinceFilter(req.Since)
	}
	if f != "" {
		opts.Filter = &f
	}
	if req.KeysOnly {
		// Keys are strings: no types to lose, so no metadata to pay for.
		opts.Select = to.Ptr("PartitionKey,RowKey")
		opts.Format = to.Ptr(aztables.MetadataFormatNone)
	}
	if req.After != nil {
		// The SDK sends a continuation only when it is a non-nil pointer,
		// and Azure may send NextPartitionKey without NextRowKey.
		if req.After.NextPartitionKey != "" {
			opts.NextPartitionKey = to.Ptr(req.After.NextPartitionKey)
		}
		if req.After.NextRowKey != "" {
			opts.NextRowKey = to.Ptr(req.After.NextRowKey)
		}
	}
	ctx, slot := withCapture(ctx)
	resp, err := e.client.NewClient(table).NewListEntitiesPager(opts).NextPage(ctx)
	if err != nil {
		return Page{}, endpointError(err, "query "+table)
	}
	if slot.body == nil {
		return Page{}, fmt.Errorf("query %s: the response body was not captured", table)
	}
	entities, err := decodePage(slot.body)
	if err != nil {
		return Page{}, fmt.Errorf("query %s: %w", table, err)
	}
	if !req.Since.IsZero() && !serverSince {
		entities = sinceOnly(entities, req.Since)
	}
	page := Page{Entities: entities}
	npk, nrk := deref(resp.NextPartitionKey), deref(resp.NextRowKey)
	if npk != "" || nrk != "" {
		page.Next = &Continuation{NextPartitionKey: npk, NextRowKey: nrk}
	}
	return page, nil
}

// cosmosTable reports whether the account URL is Cosmos DB's Table API
// (https://acct.table.cosmos.azure.com, formerly .table.cosmosdb.azure.com),
// which blocks queries on the Timestamp: "Azure Cosmos DB blocks the queries
// on timestamp properties" (Cosmos DB docs, "Tutorial: Query Azure Cosmos DB
// by using the API for Table"), and they return no data. A follow of it
// reads whole tables and keeps the Timestamps it asked for (sinceOnly).
func cosmosTable(accountURL string) bool {
	u, err := url.Parse(accountURL)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	return strings.HasSuffix(host, ".table.cosmos.azure.com") || strings.HasSuffix(host, ".table.cosmosdb.azure.com")
}

// sinceOnly keeps the entities a Timestamp ge query for since would return,
// with sinceFilter's rounding down to the second.
func sinceOnly(entities []*model.Entity, since time.Time) []*model.Entity {
	since = since.UTC().Truncate(time.Second)
	kept := entities[:0]
	for _, e := range entities {
		if !e.Timestamp.Before(since) {
			kept = append(kept, e)
		}
	}
	return kept
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// EnsureTable creates the table; one that exists already is fine.
func (e *Endpoint) EnsureTable(ctx context.Context, table string) error {
	_, err := e.client.CreateTable(ctx, table, nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.ErrorCode == string(aztables.TableAlreadyExists) {
		return nil
	}
	if err != nil {
		return endpointError(err, "create table "+table)
	}
	return nil
}

// Delete deletes one entity unconditionally (If-Match: *); one that is
// already gone is fine. Deletes go one by one: in a transaction, one entity
// that is already gone would fail them all ("Performing entity group
// transactions": a failed operation fails the whole change set).
func (e *Endpoint) Delete(ctx context.Context, table, partitionKey, rowKey string) error {
	if partitionKey == "" {
		ctx = withEmptyPartitionKey(ctx)
		partitionKey = emptyPartitionKeyPlaceholder
	}
	_, err := e.client.NewClient(table).DeleteEntity(ctx, partitionKey, rowKey, &aztables.DeleteEntityOptions{IfMatch: to.Ptr(azcore.ETagAny)})
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound && re.ErrorCode == string(aztables.ResourceNotFound) {
		return nil
	}
	if err != nil {
		return endpointError(err, "delete from "+table)
	}
	return nil
}

// maxTransactionBody keeps a transaction under Azure's 4 MiB payload limit
// ("Performing entity group transactions") with room for the multipart
// framing and the per-operation request lines and headers.
const maxTransactionBody = 3 << 20

// Upsert writes entities of one partition as Insert Or Replace operations
// in entity group transactions (aztables SubmitTransaction) of at most 100
// entities and about 3 MiB of JSON. Replaying them is harmless, which is
// what makes a resumed migration exact.
func (e *Endpoint) Upsert(ctx context.Context, table string, entities []*model.Entity) error {
	tc := e.client.NewClient(table)
	emptyPK := len(entities) > 0 && entities[0].PartitionKey == ""
	if emptyPK {
		ctx = withEmptyPartitionKey(ctx)
	}
	actions := make([]aztables.TransactionAction, 0, min(len(entities), MaxBatch))
	size := 0
	flush := func() error {
		if len(actions) == 0 {
			return nil
		}
		_, err := tc.SubmitTransaction(ctx, actions, nil)
		actions, size = actions[:0], 0
		if err != nil {
			return endpointError(err, "transaction on "+table)
		}
		return nil
	}
	for _, ent := range entities {
		body := appendEntityJSON(nil, transactionKeys(ent, emptyPK), false, annotateForSDK)
		if len(actions) == MaxBatch || (len(actions) > 0 && size+len(body) > maxTransactionBody) {
			if err := flush(); err != nil {
				return err
			}
		}
		actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: body})
		size += len(body)
	}
	return flush()
}

// transactionKeys works around aztables 1.4.1 building each operation's URL
// in a transaction, (PartitionKey='...',RowKey='...'), from the body's keys
// without doubling single quotes as OData string literals require (its
// single-entity calls do, through prepareKey). Doubling them in the body
// makes the URL right. tablebridge names the entity by the URL and ignores
// the body's keys (shared/model DecodeUpdate), so the body's doubled keys do
// not matter there; Azure and Azurite destinations are not what migrate
// writes to.
//
// An empty PartitionKey becomes the placeholder that capturePolicy turns
// back into "" (see emptyPartitionKeyKey).
func transactionKeys(e *model.Entity, emptyPK bool) *model.Entity {
	if !emptyPK && !strings.Contains(e.PartitionKey, "'") && !strings.Contains(e.RowKey, "'") {
		return e
	}
	c := *e
	c.PartitionKey = strings.ReplaceAll(e.PartitionKey, "'", "''")
	c.RowKey = strings.ReplaceAll(e.RowKey, "'", "''")
	if emptyPK {
		c.PartitionKey = emptyPartitionKeyPlaceholder
	}
	return &c
}

// MaxBatch is the most operations in one entity group transaction.
const MaxBatch = 100

// endpointError names the operation and maps a missing table to
// store.ErrTableNotFound.
func endpointError(err error, op string) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound &&
		(re.ErrorCode == string(aztables.TableNotFound) || re.ErrorCode == string(aztables.ResourceNotFound) || re.ErrorCode == "") {
		return fmt.Errorf("%s: %w (%v)", op, store.ErrTableNotFound, shortResponseError(re))
	}
	if re != nil {
		return fmt.Errorf("%s: %w", op, &responseError{re: re})
	}
	return fmt.Errorf("%s: %w", op, err)
}

// responseError shortens azcore's multi-line error text to one line while
// keeping the *azcore.ResponseError reachable with errors.As.
type responseError struct{ re *azcore.ResponseError }

func (e *responseError) Error() string { return shortResponseError(e.re) }
func (e *responseError) Unwrap() error { return e.re }

func shortResponseError(re *azcore.ResponseError) string {
	code := re.ErrorCode
	if code == "" {
		code = http.StatusText(re.StatusCode)
	}
	s := fmt.Sprintf("%d %s", re.StatusCode, code)
	if re.StatusCode == http.StatusAccepted {
		// A failed transaction: the code is inside the multipart body.
		if inner := innerFailure(re); inner != "" {
			s += ": " + inner
		}
	}
	return s
}
