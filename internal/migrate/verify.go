package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// Verifying a migration: are the two sides equal, and if not, where?
//
// The obvious way is to stream both sides in key order and merge them, but
// not every side has a key order to offer: a DynamoDB-backed tablebridge
// (like Cosmos DB) returns a table's partitions in hash order. Comparing per
// partition would fix that at the price of one query per partition, and
// sorting needs memory or disk in proportion to the table. Verify instead
// hashes into buckets, which works in any order with bounded memory:
//
//  1. Stream each side once. Every entity goes to one of Buckets buckets by
//     a hash of its keys, where the bucket adds up a count, the entity's
//     size and a 128-bit digest of its canonical encoding (canonical.go:
//     keys, property names, Edm types and exact values; Timestamp
//     excluded). Sums are order-independent. When every bucket agrees the
//     table matches, after one read of each side. A difference could only
//     hide in a digest collision (2^-64 for a pair).
//  2. Buckets that disagree are read again. Where one side of a bucket is
//     empty, every entity the other side has there is missing or extra and
//     is reported as the stream passes. Where both hold entities, the
//     source's entities of those buckets are kept in memory (rounds of at
//     most MemoryBudget bytes, as model.EntitySize counts) while the
//     destination streams past them, and each destination entity is
//     matched, compared property by property, or reported extra; what stays
//     unmatched is missing.
//
// Memory is the bucket table (Buckets x 2 x 32 bytes) plus one round of
// disagreeing entities; time is one read of each side when the tables
// match, and two or a few more when they do not.

// DiffKind classifies a difference.
type DiffKind uint8

// The kinds of difference.
const (
	// MissingInDest: the source has the entity (or table); the destination
	// does not.
	MissingInDest DiffKind = iota + 1
	// ExtraInDest: the destination has an entity (or table) the source does
	// not.
	ExtraInDest
	// PropertyDiffers: both have the entity, and one property differs in
	// type or value, or only one side has it.
	PropertyDiffers
)

func (k DiffKind) String() string {
	switch k {
	case MissingInDest:
		return "missing in dest"
	case ExtraInDest:
		return "extra in dest"
	case PropertyDiffers:
		return "differs"
	}
	return fmt.Sprintf("DiffKind(%d)", uint8(k))
}

// Difference is one difference between source and destination.
type Difference struct {
	Kind DiffKind
	// Table is the source table; DestTable its destination name.
	Table, DestTable string
	// WholeTable: the table itself is missing or extra, and the keys are
	// empty.
	WholeTable bool
	// Entities is the whole table's entity count when WholeTable.
	Entities     int64
	PartitionKey string
	RowKey       string
	// Property names the property for PropertyDiffers; Source and Dest are
	// its values, nil where absent.
	Property     string
	Source, Dest *edm.Value
}

// String formats the difference as one line.
func (d Difference) String() string {
	table := d.Table
	if d.DestTable != "" && d.DestTable != d.Table {
		table += " -> " + d.DestTable
	}
	if d.WholeTable {
		if d.Kind == ExtraInDest {
			return fmt.Sprintf("%s: table extra in dest (%d entities)", d.DestTable, d.Entities)
		}
		return fmt.Sprintf("%s: table %s (%d entities)", table, d.Kind, d.Entities)
	}
	s := fmt.Sprintf("%s: %s PartitionKey=%s RowKey=%s", table, d.Kind, quoteLiteral(d.PartitionKey), quoteLiteral(d.RowKey))
	if d.Kind == PropertyDiffers {
		s += fmt.Sprintf(": property %s: source %s, dest %s", d.Property, describeValue(d.Source), describeValue(d.Dest))
	}
	return s
}

func describeValue(v *edm.Value) string {
	if v == nil {
		return "absent"
	}
	text := string(edm.AppendValue(nil, *v))
	if len(text) > 80 {
		text = text[:77] + "..."
	}
	return v.Type.String() + " " + text
}

// VerifyOptions configure Verify.
type VerifyOptions struct {
	Source, Dest Source
	// Tables, Rename and KeepTimestamp mean what they mean to Migrate: the
	// destination is expected to hold what Migrate with the same options
	// would have written.
	Tables        []string
	Rename        map[string]string
	KeepTimestamp string
	// CompareTimestamps compares the entities' Timestamps too, as a
	// property named Timestamp: for a copy that keeps them
	// (StoreIO.KeepTimestamps).
	CompareTimestamps bool
	// Parallel is how many tables are verified at once (default 4).
	Parallel int
	// PageSize is the $top of each query (default 1000).
	PageSize int
	// MaxDiffs caps the differences reported per table (0: all); the count
	// in the result is always complete.
	MaxDiffs int
	// MemoryBudget bounds the entity bytes held per detail round (default
	// 256 MiB).
	MemoryBudget int64
	// Buckets is the number of hash buckets (default 65536).
	Buckets int
	Backoff Backoff
	// Progress receives entities read per table.
	Progress Progress
	// Report receives every difference, a table's in key order, from one
	// goroutine at a time.
	Report func(Difference)
}

// VerifyResult sums up a verification.
type VerifyResult struct {
	Tables      []TableVerify
	Differences int64
}

// TableVerify is one table's outcome. A table only the destination has
// (OnlyInDest) has no Source and counts as one difference.
type TableVerify struct {
	Source, Dest                 string
	SourceEntities, DestEntities int64
	Differences                  int64
	OnlyInDest                   bool
}

// Verify compares the destination with the source table by table and
// reports every difference. The error is for failures to read, not for
// differences: those are counted in the result.
func Verify(ctx context.Context, opts VerifyOptions) (*VerifyResult, error) {
	if opts.Source == nil || opts.Dest == nil {
		return nil, errors.New("verify: needs a source and a destination")
	}
	if err := ValidateKeepTimestamp(opts.KeepTimestamp); err != nil {
		return nil, err
	}
	if opts.Parallel <= 0 {
		opts.Parallel = 4
	}
	if opts.PageSize <= 0 || opts.PageSize > MaxPageSize {
		opts.PageSize = MaxPageSize
	}
	if opts.MemoryBudget <= 0 {
		opts.MemoryBudget = 256 << 20
	}
	if opts.Buckets <= 0 {
		opts.Buckets = 1 << 16
	}
	if opts.Progress == nil {
		opts.Progress = NoProgress{}
	}
	if opts.Report == nil {
		opts.Report = func(Difference) {}
	}
	plan, err := planTables(ctx, opts.Source, opts.Tables, opts.Rename)
	if err != nil {
		return nil, err
	}
	v := &verifier{opts: opts}
	res := &VerifyResult{Tables: make([]TableVerify, len(plan))}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	for i, p := range plan {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := acquire(ctx, sem); err != nil {
				return
			}
			defer func() { <-sem }()
			tv, diffs, err := v.table(ctx, p)
			if err != nil {
				cancel(fmt.Errorf("verify %s: %w", p.source, err))
				return
			}
			res.Tables[i] = tv
			v.report(diffs)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if len(opts.Tables) == 0 {
		extra, err := v.extraTables(ctx, plan)
		if err != nil {
			return nil, err
		}
		v.report(extra)
		for _, d := range extra {
			res.Tables = append(res.Tables, TableVerify{Dest: d.DestTable, DestEntities: d.Entities, Differences: 1, OnlyInDest: true})
		}
	}
	for _, t := range res.Tables {
		res.Differences += t.Differences
	}
	return res, nil
}

type verifier struct {
	opts     VerifyOptions
	reportMu sync.Mutex
}

func (v *verifier) report(diffs []Difference) {
	v.reportMu.Lock()
	defer v.reportMu.Unlock()
	for _, d := range diffs {
		v.opts.Report(d)
	}
}

// extraTables lists destination tables no source table maps to.
func (v *verifier) extraTables(ctx context.Context, plan []tablePlan) ([]Difference, error) {
	names, err := v.opts.Dest.Tables(ctx)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	mapped := map[string]bool{}
	for _, p := range plan {
		mapped[strings.ToLower(p.dest)] = true
	}
	var out []Difference
	for _, n := range names {
		if !mapped[strings.ToLower(n)] {
			count, err := countEntities(ctx, v.opts.Dest, n, v.opts.Backoff, NoProgress{}, n, true)
			if err != nil {
				return nil, fmt.Errorf("verify: %w", err)
			}
			out = append(out, Difference{Kind: ExtraInDest, WholeTable: true, DestTable: n, Entities: count})
		}
	}
	return out, nil
}

// bucketSums is one side's pass-1 summary of a bucket.
type bucketSums struct {
	count int64
	bytes int64
	sum   digest
}

// side is one side of a table comparison.
type side struct {
	src     Source
	table   string
	isSrc   bool
	missing bool // the table does not exist on this side
	count   int64
	buckets []bucketSums
}

// scan streams every entity of the table through fn.
func (v *verifier) scan(ctx context.Context, s *side, name string, fn func(e *model.Entity) error) error {
	req := PageRequest{Top: v.opts.PageSize}
	for {
		page, err := v.opts.Backoff.readPage(ctx, s.src, s.table, req)
		if err != nil {
			return err
		}
		for _, e := range page.Entities {
			if s.isSrc {
				if err := keepTimestamp(e, v.opts.KeepTimestamp); err != nil {
					return err
				}
			}
			if v.opts.CompareTimestamps {
				// No custom property may be named Timestamp, so this one
				// is the system property's, on both sides.
				if e.Properties == nil {
					e.Properties = map[string]edm.Value{}
				}
				e.Properties[model.TimestampName] = edm.NewDateTime(e.Timestamp)
			}
			if err := fn(e); err != nil {
				return err
			}
		}
		v.opts.Progress.Add(name, int64(len(page.Entities)))
		if page.Next == nil {
			return nil
		}
		req.After = page.Next
	}
}

// summarize is pass 1 for one side.
func (v *verifier) summarize(ctx context.Context, s *side, name string) error {
	s.buckets = make([]bucketSums, v.opts.Buckets)
	var buf []byte
	err := v.scan(ctx, s, name, func(e *model.Entity) error {
		var d digest
		d, buf = entityDigest(e, buf)
		b := &s.buckets[keyBucket(e.PartitionKey, e.RowKey, v.opts.Buckets)]
		b.count++
		b.bytes += int64(model.EntitySize(e))
		b.sum = b.sum.add(d)
		s.count++
		return nil
	})
	if errors.Is(err, store.ErrTableNotFound) && !s.isSrc {
		s.missing = true
		return nil
	}
	return err
}

// table verifies one table and returns its differences in key order.
func (v *verifier) table(ctx context.Context, p tablePlan) (TableVerify, []Difference, error) {
	tv := TableVerify{Source: p.source, Dest: p.dest}
	name := label(p)
	// Both sides are counted first (keys only), so that the line shows a
	// total and an ETA while they are read in full; with no progress shown
	// there is no count (-1: no total).
	var wg sync.WaitGroup
	var srcErr, dstErr error
	total := int64(-1)
	if _, quiet := v.opts.Progress.(NoProgress); !quiet {
		var srcN, dstN int64
		wg.Add(2)
		go func() {
			defer wg.Done()
			srcN, srcErr = countEntities(ctx, v.opts.Source, p.source, v.opts.Backoff, v.opts.Progress, name, false)
		}()
		go func() {
			defer wg.Done()
			dstN, dstErr = countEntities(ctx, v.opts.Dest, p.dest, v.opts.Backoff, v.opts.Progress, name, true)
		}()
		wg.Wait()
		if err := errors.Join(srcErr, dstErr); err != nil {
			v.opts.Progress.End(name, err)
			return tv, nil, err
		}
		total = srcN + dstN
	}
	v.opts.Progress.Begin(name, "verifying", total, 0)
	src := &side{src: v.opts.Source, table: p.source, isSrc: true}
	dst := &side{src: v.opts.Dest, table: p.dest}
	wg.Add(2)
	go func() { defer wg.Done(); srcErr = v.summarize(ctx, src, name) }()
	go func() { defer wg.Done(); dstErr = v.summarize(ctx, dst, name) }()
	wg.Wait()
	if err := errors.Join(srcErr, dstErr); err != nil {
		v.opts.Progress.End(name, err)
		return tv, nil, err
	}
	tv.SourceEntities, tv.DestEntities = src.count, dst.count
	if dst.missing {
		v.opts.Progress.End(name, nil)
		tv.Differences = 1
		return tv, []Difference{{Kind: MissingInDest, WholeTable: true, Table: p.source, DestTable: p.dest, Entities: src.count}}, nil
	}
	c := newCollector(p, v.opts.MaxDiffs)
	if err := v.details(ctx, p, name, src, dst, c); err != nil {
		v.opts.Progress.End(name, err)
		return tv, nil, err
	}
	v.opts.Progress.End(name, nil)
	tv.Differences = c.count
	return tv, c.sorted(), nil
}

// bucketRole says what the detail pass does with a bucket.
type bucketRole uint8

const (
	bucketEqual      bucketRole = iota
	bucketSourceOnly            // every source entity there is missing
	bucketDestOnly              // every dest entity there is extra
	bucketHeld                  // compared entity by entity in some round
)

// details is pass 2: re-read what disagrees, in rounds.
func (v *verifier) details(ctx context.Context, p tablePlan, name string, src, dst *side, c *collector) error {
	roles := make([]bucketRole, v.opts.Buckets)
	round := make([]int, v.opts.Buckets) // the round of a held bucket
	rounds := 0
	var roundBytes int64
	oneSided := false
	for i := range roles {
		s, d := src.buckets[i], dst.buckets[i]
		if s.count == d.count && s.sum == d.sum {
			continue
		}
		switch {
		case d.count == 0:
			roles[i], oneSided = bucketSourceOnly, true
		case s.count == 0:
			roles[i], oneSided = bucketDestOnly, true
		default:
			roles[i] = bucketHeld
			if rounds == 0 || (roundBytes > 0 && roundBytes+s.bytes > v.opts.MemoryBudget) {
				rounds++
				roundBytes = 0
			}
			round[i] = rounds - 1
			roundBytes += s.bytes
		}
	}
	if rounds == 0 && oneSided {
		rounds = 1
	}
	for r := 0; r < rounds; r++ {
		// Each round reads both sides in full again.
		v.opts.Progress.Begin(name, fmt.Sprintf("rechecking (%d/%d)", r+1, rounds), src.count+dst.count, 0)
		held := map[string]*model.Entity{}
		err := v.scan(ctx, src, name, func(e *model.Entity) error {
			b := keyBucket(e.PartitionKey, e.RowKey, v.opts.Buckets)
			switch {
			case roles[b] == bucketSourceOnly && r == 0:
				c.add(Difference{Kind: MissingInDest, PartitionKey: e.PartitionKey, RowKey: e.RowKey})
			case roles[b] == bucketHeld && round[b] == r:
				held[entityKey(e)] = e
			}
			return nil
		})
		if err != nil {
			return err
		}
		err = v.scan(ctx, dst, name, func(e *model.Entity) error {
			b := keyBucket(e.PartitionKey, e.RowKey, v.opts.Buckets)
			switch {
			case roles[b] == bucketDestOnly && r == 0:
				c.add(Difference{Kind: ExtraInDest, PartitionKey: e.PartitionKey, RowKey: e.RowKey})
			case roles[b] == bucketHeld && round[b] == r:
				k := entityKey(e)
				s, ok := held[k]
				if !ok {
					c.add(Difference{Kind: ExtraInDest, PartitionKey: e.PartitionKey, RowKey: e.RowKey})
					return nil
				}
				delete(held, k)
				compareProperties(s, e, c)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, e := range held {
			c.add(Difference{Kind: MissingInDest, PartitionKey: e.PartitionKey, RowKey: e.RowKey})
		}
	}
	return nil
}

func entityKey(e *model.Entity) string { return e.PartitionKey + "\x00" + e.RowKey }

// compareProperties reports each property that differs between the source
// entity s and the destination entity d.
func compareProperties(s, d *model.Entity, c *collector) {
	for _, n := range sortedNames(s) {
		sv := s.Properties[n]
		dv, ok := d.Properties[n]
		switch {
		case !ok:
			c.add(Difference{Kind: PropertyDiffers, PartitionKey: s.PartitionKey, RowKey: s.RowKey, Property: n, Source: &sv})
		case !sv.Equal(dv):
			c.add(Difference{Kind: PropertyDiffers, PartitionKey: s.PartitionKey, RowKey: s.RowKey, Property: n, Source: &sv, Dest: &dv})
		}
	}
	for _, n := range sortedNames(d) {
		if _, ok := s.Properties[n]; !ok {
			dv := d.Properties[n]
			c.add(Difference{Kind: PropertyDiffers, PartitionKey: s.PartitionKey, RowKey: s.RowKey, Property: n, Dest: &dv})
		}
	}
}

// collector gathers a table's differences, keeping at most max of them.
type collector struct {
	p     tablePlan
	max   int
	count int64
	diffs []Difference
}

func newCollector(p tablePlan, max int) *collector { return &collector{p: p, max: max} }

func (c *collector) add(d Difference) {
	c.count++
	if c.max > 0 && len(c.diffs) >= c.max {
		return
	}
	d.Table, d.DestTable = c.p.source, c.p.dest
	c.diffs = append(c.diffs, d)
}

// sorted returns the differences in key order, then kind, then property.
func (c *collector) sorted() []Difference {
	slices.SortFunc(c.diffs, func(a, b Difference) int {
		if n := strings.Compare(a.PartitionKey, b.PartitionKey); n != 0 {
			return n
		}
		if n := strings.Compare(a.RowKey, b.RowKey); n != 0 {
			return n
		}
		if a.Kind != b.Kind {
			return int(a.Kind) - int(b.Kind)
		}
		return strings.Compare(a.Property, b.Property)
	})
	return c.diffs
}
