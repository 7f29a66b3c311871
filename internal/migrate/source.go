package migrate

import (
	"context"
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/model"
)

// Source is where entities come from: an Azure Table endpoint (Azure,
// Azurite, another tablebridge), a store, or export files. Implementations
// are safe for concurrent use.
type Source interface {
	// Tables lists the source's tables by their display names.
	Tables(ctx context.Context) ([]string, error)
	// ReadPage reads one page of a table: at most req.Top entities whose
	// PartitionKey lies in req.Range, resuming at req.After. Page.Next is nil
	// after the last page. A page may be short, even empty, and still have a
	// Next, as Azure's pages may. A missing table is an error wrapping
	// store.ErrTableNotFound.
	ReadPage(ctx context.Context, table string, req PageRequest) (Page, error)
	// SplitsRanges reports whether ReadPage honours Range, so one table can
	// be read by several scans at once. File sources cannot.
	SplitsRanges() bool
	// Describe names the source for logs and the checkpoint, without
	// credentials.
	Describe() string
}

// PageRequest asks for one page.
type PageRequest struct {
	// Range restricts the PartitionKey; the zero Range is the whole table.
	Range Range
	// After resumes a scan; nil starts at the beginning of Range.
	After *Continuation
	// Top is the most entities to return, 1 to 1000 (Azure's limit).
	Top int
	// KeysOnly asks for PartitionKey and RowKey alone ($select), for the
	// discovery pass. A source may return more.
	KeysOnly bool
	// Since, when not zero, asks only for entities whose Timestamp is at or
	// after it ($filter Timestamp ge), for the passes of a follow (see
	// follow.go). Sources that keep no Timestamps (files) refuse it.
	Since time.Time
}

// Page is one page of entities.
type Page struct {
	Entities []*model.Entity
	// Next resumes after this page; nil when the scan is complete.
	Next *Continuation
}

// Continuation is the position a scan resumes from, as the checkpoint stores
// it. For endpoints it is Azure's continuation token pair, opaque and valid
// only with the same query (the same Range). For stores it is the last key
// read; for files, the number of entities already read.
type Continuation struct {
	NextPartitionKey string `json:"nextPartitionKey,omitempty"`
	NextRowKey       string `json:"nextRowKey,omitempty"`
	Offset           int64  `json:"offset,omitempty"`
}

// Range is a slice of a table's PartitionKey space: Lower <= PartitionKey <
// Upper. An empty Upper is unbounded (no key sorts below "", so an empty
// upper bound would select nothing and never needs spelling). The zero
// Range is the whole table.
type Range struct {
	Lower string `json:"lower"`
	Upper string `json:"upper,omitempty"`
}

// Whole reports whether the range is the whole table.
func (r Range) Whole() bool { return r.Lower == "" && r.Upper == "" }

// Contains reports whether pk lies in the range, in ordinal order.
func (r Range) Contains(pk string) bool {
	return pk >= r.Lower && (r.Upper == "" || pk < r.Upper)
}

// Filter is the OData $filter selecting the range, or "" for the whole
// table: PartitionKey ge 'lower' and PartitionKey lt 'upper', with quotes
// doubled as string literals require.
func (r Range) Filter() string {
	var parts []string
	if r.Lower != "" {
		parts = append(parts, "PartitionKey ge "+quoteLiteral(r.Lower))
	}
	if r.Upper != "" {
		parts = append(parts, "PartitionKey lt "+quoteLiteral(r.Upper))
	}
	return strings.Join(parts, " and ")
}

// sinceFilter is the OData $filter for PageRequest.Since: Timestamp ge a
// datetime literal ("Querying tables and entities": datetime'yyyy-mm-
// ddThh:mm:ssZ'). The instant is rounded down to the second, which only
// widens the query, so every service parses it, whatever fraction digits it
// takes.
func sinceFilter(since time.Time) string {
	return "Timestamp ge datetime'" + since.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z") + "'"
}

// KeyRange is the range as a store query hint.
func (r Range) KeyRange() model.KeyRange {
	var kr model.KeyRange
	if r.Lower != "" {
		kr.PartitionKey.Lower = &model.Bound{Value: r.Lower, Inclusive: true}
	}
	if r.Upper != "" {
		kr.PartitionKey.Upper = &model.Bound{Value: r.Upper}
	}
	return kr
}

func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// MaxPageSize is Azure's largest page ($top).
const MaxPageSize = 1000
