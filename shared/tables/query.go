package tables

import (
	"context"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// QueryInput is a Query Entities request.
type QueryInput struct {
	Table  string
	Filter string // $filter; "" for all
	Top    int    // $top; 0 for the default page of 1000, NoEntities for $top=0
	After  *Continuation
}

// Continuation is where a Query Entities page resumes: strictly after the
// entity named by the previous page's NextPartitionKey and NextRowKey.
type Continuation struct {
	PartitionKey string
	RowKey       string
}

// EntityPage is one page of a Query Entities answer. It is the service's
// own type, not the store's, so the REST layer knows the Table service and
// no storage. Next is nil when no entity remains; otherwise the answer's
// x-ms-continuation-NextPartitionKey and NextRowKey name it, and the client
// sends it back as QueryInput.After. A page may hold fewer entities than
// $top, even none, and still have a Next: Azure "may return fewer than the
// requested number of entities" along with a continuation ("Query timeout
// and pagination").
type EntityPage struct {
	Entities []*model.Entity
	Next     *Continuation
	// ItemsRead is how many stored items the store read for the page, the
	// measure of its cost that the request log carries.
	ItemsRead int
}

// NoEntities is the Top of "$top=0", which Azure Storage Explorer sends for
// its first page and Azure accepts: the query is checked (table, filter)
// and answers an empty page without a continuation.
const NoEntities = -1

// QueryEntities returns one page of entities in (PartitionKey, RowKey) order.
// The page may be short, even empty, and still carry a continuation.
func (s *Service) QueryEntities(ctx context.Context, sc Scope, in QueryInput) (EntityPage, error) {
	if err := tableNameForLookup(in.Table); err != nil {
		return EntityPage{}, err
	}
	top, err := pageSize(in.Top)
	if err != nil {
		return EntityPage{}, err
	}
	q := store.Query{Top: top, After: (*store.Cursor)(in.After)}
	var match func(*model.Entity) bool
	if in.Filter != "" {
		f, err := parseFilter(in.Filter)
		if err != nil {
			return EntityPage{}, err
		}
		q.Keys = f.KeyRange()
		match = f.Match
	}
	if sc.Keys != nil {
		q.Keys = q.Keys.Intersect(*sc.Keys)
	}
	if top == 0 || q.Keys.PartitionKey.Empty() || q.Keys.RowKey.Empty() {
		// A contradiction such as PartitionKey lt '', or a filter outside
		// the token's key range, matches nothing; no store needs to look.
		return EntityPage{}, s.checkTable(ctx, sc, in.Table)
	}
	switch {
	case sc.EntityAllowed != nil && match != nil:
		q.Match = func(e *model.Entity) bool { return sc.EntityAllowed(e.PartitionKey, e.RowKey) && match(e) }
	case sc.EntityAllowed != nil:
		q.Match = func(e *model.Entity) bool { return sc.EntityAllowed(e.PartitionKey, e.RowKey) }
	default:
		q.Match = match
	}
	page, err := s.store.QueryEntities(ctx, sc.Account, in.Table, q)
	if err != nil {
		return EntityPage{}, storeError(err)
	}
	// A store resumes strictly after its cursor, as the service resumes
	// after a Continuation: the two are one position in (PartitionKey,
	// RowKey) order, and the conversion stops compiling if they part.
	return EntityPage{Entities: page.Entities, Next: (*Continuation)(page.Next), ItemsRead: page.ItemsRead}, nil
}

// ParseSelect parses $select: a comma-separated list of property names.
// "" and "*" select everything (nil).
func ParseSelect(sel string) ([]string, error) {
	sel = strings.TrimSpace(sel)
	if sel == "" || sel == "*" {
		return nil, nil
	}
	names := strings.Split(sel, ",")
	for i, n := range names {
		n = strings.TrimSpace(n)
		switch n {
		case "PartitionKey", "RowKey", "Timestamp":
		default:
			if err := model.ValidatePropertyName(n); err != nil {
				return nil, apierr.Newf(apierr.InvalidInput, "$select names an invalid property %q.", n)
			}
		}
		names[i] = n
	}
	return names, nil
}

// checkTable answers TableNotFound for a missing table, so a query that
// matches nothing still reports a missing table as Azure does.
func (s *Service) checkTable(ctx context.Context, sc Scope, table string) error {
	_, err := s.store.GetTable(ctx, sc.Account, table)
	return storeError(err)
}
