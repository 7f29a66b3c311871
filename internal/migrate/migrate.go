package migrate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/tablebridge/tablebridge/shared/model"
)

// Options configure Migrate.
type Options struct {
	// Source is read; Dest is written. Dest may be nil with DryRun.
	Source Source
	Dest   Dest
	// Tables selects source tables by name (case-insensitive); empty means
	// every table of the source.
	Tables []string
	// Rename maps a source table name (case-insensitive) to its name in
	// the destination.
	Rename map[string]string
	// KeepTimestamp, when set, stores each entity's source Timestamp as an
	// extra Edm.DateTime property of that name, since the destination
	// assigns its own Timestamp on every write.
	KeepTimestamp string
	// DryRun reads and counts everything and writes nothing, not even the
	// checkpoint.
	DryRun bool

	// Checkpoint is the path of the checkpoint file; "" runs without one.
	// An existing file resumes the migration it describes.
	Checkpoint string
	// Restart ignores an existing checkpoint and starts over.
	Restart bool
	// CheckpointInterval is how often the checkpoint is written while the
	// migration runs (default 1 s); it is always written at the end.
	CheckpointInterval time.Duration

	// Parallel is how many scans run at once across all tables and
	// ranges (default 8).
	Parallel int
	// Writers is how many transactions are in flight at once (default 16).
	Writers int
	// Ranges is how many PartitionKey ranges a large table is split into
	// (default 4; 1 reads each table with a single scan).
	Ranges int
	// Rate limits the entities per second read and written (0: no limit).
	Rate float64
	// PageSize is the $top of each query (default and maximum 1000).
	PageSize int
	// Backoff retries writes and reads that failed transiently.
	Backoff Backoff

	// Progress receives progress per table; nil shows nothing.
	Progress Progress

	// Follow, when set, keeps the destination in step with the source
	// after the bulk copy, until stopped (follow.go).
	Follow *FollowOptions
}

func (o *Options) withDefaults() error {
	if o.Source == nil {
		return errors.New("migrate: no source")
	}
	if o.Dest == nil && !o.DryRun {
		return errors.New("migrate: no destination")
	}
	if err := ValidateKeepTimestamp(o.KeepTimestamp); err != nil {
		return err
	}
	if o.Follow != nil {
		if err := o.Follow.validate(o); err != nil {
			return err
		}
	}
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	if o.Writers <= 0 {
		o.Writers = 16
	}
	if o.Ranges <= 0 {
		o.Ranges = 4
	}
	if o.PageSize <= 0 || o.PageSize > MaxPageSize {
		o.PageSize = MaxPageSize
	}
	if o.CheckpointInterval <= 0 {
		o.CheckpointInterval = time.Second
	}
	if o.Progress == nil {
		o.Progress = NoProgress{}
	}
	return nil
}

// Result sums up a migration.
type Result struct {
	Tables []TableResult
	// Entities counts what this run wrote (or read, in a dry run), in
	// the bulk copy and the passes of a follow.
	Entities int64
	Elapsed  time.Duration
	// Passes counts a follow's completed passes.
	Passes int
}

// TableResult is one table's outcome.
type TableResult struct {
	Source, Dest string
	// Entities is what this run copied; Resumed what earlier runs had.
	Entities, Resumed int64
	// AlreadyDone: the checkpoint said the table was complete.
	AlreadyDone bool
	// Followed and Deleted are what a follow's passes copied and deleted.
	Followed, Deleted int64
}

// Migrate copies tables from opts.Source to opts.Dest. It returns when every
// table is copied, on the first error that retries could not cure, or when
// ctx ends; in the last two cases the checkpoint holds what was
// acknowledged, and running Migrate again with the same options continues
// from there.
//
// Per table: a discovery pass counts the entities and picks PartitionKey
// split points (see ranges.go); then each range is scanned page by page.
// Scans of every table and range share Parallel slots. Each scan fetches its
// next page while the current one is written: the page's entities are
// grouped by partition into transactions of at most 100, written by up to
// Writers at once, and the range's continuation moves past the page only
// once all of them are acknowledged.
func Migrate(ctx context.Context, opts Options) (*Result, error) {
	if err := opts.withDefaults(); err != nil {
		return nil, err
	}
	started := time.Now()
	m := &migration{
		opts:    opts,
		started: started,
		scans:   make(chan struct{}, opts.Parallel),
		writers: make(chan struct{}, opts.Writers),
		limit:   newLimiter(opts.Rate),
	}
	plan, err := planTables(ctx, opts.Source, opts.Tables, opts.Rename)
	if err != nil {
		return nil, err
	}
	cp, err := m.loadCheckpoint()
	if err != nil {
		return nil, err
	}
	path := opts.Checkpoint
	if opts.DryRun {
		path = ""
	}
	m.cp = newCheckpointFile(path, cp, opts.CheckpointInterval)
	for _, p := range plan {
		if err := m.claim(p); err != nil {
			m.cp.Close()
			return nil, err
		}
	}
	// Write the plan at once, so even a run killed during discovery
	// leaves a checkpoint naming its tables.
	if err := m.cp.Flush(); err != nil {
		m.cp.Close()
		return nil, err
	}

	runCtx := ctx
	if opts.Follow != nil {
		// Stop during the bulk copy interrupts it, as a cancelled ctx
		// does; the checkpoint resumes it.
		bulkCtx, stopBulk := context.WithCancel(ctx)
		defer stopBulk()
		if stopRequested(opts.Follow.Stop) {
			stopBulk()
		}
		go func() {
			select {
			case <-opts.Follow.Stop:
				stopBulk()
			case <-bulkCtx.Done():
			}
		}()
		ctx = bulkCtx
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	results := make([]TableResult, len(plan))
	var (
		wg     sync.WaitGroup
		failed atomic.Bool
	)
	for i, p := range plan {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := m.table(ctx, p)
			results[i] = res
			if err != nil {
				failed.Store(true)
				cancel(err)
			}
		}()
	}
	wg.Wait()
	// The first table error cancelled the rest and is the cause; without
	// one, a cause means the caller cancelled (SIGINT). A cancellation
	// after every table finished interrupted nothing.
	var runErr error
	if failed.Load() {
		runErr = context.Cause(ctx)
		if errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded) {
			runErr = fmt.Errorf("migration interrupted: %w", runErr)
		}
	}
	res := &Result{Tables: results}
	if runErr == nil && opts.Follow != nil {
		res.Passes, runErr = m.follow(runCtx, plan, results)
	}
	if cerr := m.cp.Close(); cerr != nil && runErr == nil {
		runErr = cerr
	}
	res.Elapsed = time.Since(started)
	for _, t := range results {
		res.Entities += t.Entities + t.Followed
	}
	return res, runErr
}

// tablePlan pairs a source table with its destination name.
type tablePlan struct{ source, dest string }

// SelectTables resolves a selection of table names against src's table
// list: names match case-insensitively and keep the source's case, a name
// given twice counts once, and an empty selection means every table. When
// the source cannot list its tables (a SAS without list permission) a given
// selection is used as it is.
func SelectTables(ctx context.Context, src Source, selected []string) ([]string, error) {
	names, listErr := src.Tables(ctx)
	if listErr != nil && len(selected) == 0 {
		var re *azcore.ResponseError
		if errors.As(listErr, &re) && re.StatusCode == http.StatusForbidden {
			return nil, fmt.Errorf("%w (name the tables with -tables if the credentials cannot list them)", listErr)
		}
		return nil, listErr
	}
	if listErr == nil && len(selected) > 0 {
		byFold := make(map[string]string, len(names))
		for _, n := range names {
			byFold[strings.ToLower(n)] = n
		}
		resolved := make([]string, 0, len(selected))
		for _, s := range selected {
			n, ok := byFold[strings.ToLower(s)]
			if !ok {
				return nil, fmt.Errorf("table %q is not in %s", s, src.Describe())
			}
			resolved = append(resolved, n)
		}
		names = resolved
	} else if listErr != nil {
		names = selected
	}
	var out []string
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		key := strings.ToLower(n)
		if !seen[key] {
			seen[key] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// planTables selects the tables (SelectTables) and pairs each with its
// destination name.
func planTables(ctx context.Context, src Source, selected []string, rename map[string]string) ([]tablePlan, error) {
	names, err := SelectTables(ctx, src, selected)
	if err != nil {
		return nil, err
	}
	renames := make(map[string]string, len(rename))
	for from, to := range rename {
		renames[strings.ToLower(from)] = to
	}
	var plan []tablePlan
	seenDest := map[string]string{}
	for _, n := range names {
		key := strings.ToLower(n)
		dest := n
		if to, ok := renames[key]; ok {
			dest = to
			delete(renames, key)
		}
		if err := model.ValidateTableName(dest); err != nil {
			return nil, fmt.Errorf("destination table name %q: %w", dest, err)
		}
		if other, dup := seenDest[strings.ToLower(dest)]; dup {
			return nil, fmt.Errorf("tables %q and %q would both be written to %q", other, n, dest)
		}
		seenDest[strings.ToLower(dest)] = n
		plan = append(plan, tablePlan{source: n, dest: dest})
	}
	for from := range renames {
		return nil, fmt.Errorf("-rename names table %q, which is not being migrated", from)
	}
	return plan, nil
}

// migration is one Migrate call's shared state.
type migration struct {
	opts    Options
	started time.Time // when this run began
	cp      *checkpointFile
	scans   chan struct{} // Parallel slots
	writers chan struct{} // Writers slots
	limit   *limiter
}

func (m *migration) describeDest() string {
	if m.opts.DryRun {
		return "dry run"
	}
	return m.opts.Dest.Describe()
}

// loadCheckpoint resumes or starts the checkpoint, refusing one that
// describes another migration.
func (m *migration) loadCheckpoint() (*Checkpoint, error) {
	fresh := &Checkpoint{Version: checkpointVersion, Source: m.opts.Source.Describe(), Dest: m.describeDest(), KeepTimestamp: m.opts.KeepTimestamp}
	if m.opts.Checkpoint == "" || m.opts.Restart {
		return fresh, nil
	}
	cp, err := LoadCheckpoint(m.opts.Checkpoint)
	if err != nil || cp == nil {
		return fresh, err
	}
	if m.opts.DryRun {
		// A dry run reads the checkpoint to skip nothing: it counts all.
		return fresh, nil
	}
	switch {
	case cp.Source != fresh.Source:
		return nil, fmt.Errorf("checkpoint %s is for source %s, not %s (use -restart to start over)", m.opts.Checkpoint, cp.Source, fresh.Source)
	case cp.Dest != fresh.Dest:
		return nil, fmt.Errorf("checkpoint %s is for destination %s, not %s (use -restart to start over)", m.opts.Checkpoint, cp.Dest, fresh.Dest)
	case cp.KeepTimestamp != fresh.KeepTimestamp:
		return nil, fmt.Errorf("checkpoint %s was made with -keep-timestamp %q, not %q (use -restart to start over)", m.opts.Checkpoint, cp.KeepTimestamp, fresh.KeepTimestamp)
	}
	return cp, nil
}

// claim adds a table to the checkpoint, or checks that the one there goes
// to the same destination.
func (m *migration) claim(p tablePlan) error {
	var err error
	m.cp.update(func(cp *Checkpoint) {
		t := cp.table(p.source)
		if t == nil {
			cp.Tables = append(cp.Tables, &TableState{Source: p.source, Dest: p.dest, Total: -1, Started: m.started})
			return
		}
		if !strings.EqualFold(t.Dest, p.dest) {
			err = fmt.Errorf("checkpoint %s copies table %s to %s, not %s (use -restart to start over)", m.opts.Checkpoint, p.source, t.Dest, p.dest)
		}
	})
	return err
}

func label(p tablePlan) string {
	if p.source == p.dest {
		return p.source
	}
	return p.source + " -> " + p.dest
}

// acquire takes a slot of sem, or gives up when ctx ends.
func acquire(ctx context.Context, sem chan struct{}) error {
	select {
	case sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// table migrates one table: discovery if the checkpoint has no ranges yet,
// then its ranges in parallel.
func (m *migration) table(ctx context.Context, p tablePlan) (TableResult, error) {
	res := TableResult{Source: p.source, Dest: p.dest}
	name := label(p)
	var (
		done   bool
		ranges []*RangeState
		total  int64
	)
	m.cp.read(func(cp *Checkpoint) {
		t := cp.table(p.source)
		done, total = t.Done, t.Total
		if len(t.Ranges) > 0 {
			ranges = t.Ranges
		}
		res.Resumed = t.Copied()
	})
	if done {
		res.AlreadyDone = true
		return res, nil
	}
	if ranges == nil {
		d, err := m.discover(ctx, p, name)
		if err != nil {
			return res, err
		}
		total = d.total
		for _, r := range rangesFrom(d.splits) {
			ranges = append(ranges, &RangeState{Range: r})
		}
		m.cp.update(func(cp *Checkpoint) {
			t := cp.table(p.source)
			t.Total, t.Ranges = total, ranges
		})
	}
	if !m.opts.DryRun {
		err := m.opts.Backoff.do(ctx, func() error { return m.opts.Dest.EnsureTable(ctx, p.dest) })
		if err != nil {
			m.opts.Progress.End(name, err)
			return res, err
		}
	}
	m.opts.Progress.Begin(name, m.phase(), total, res.Resumed)
	// A failing range stops its siblings at once rather than letting them
	// write on until the whole run is cancelled.
	rangeCtx, cancelRanges := context.WithCancel(ctx)
	defer cancelRanges()
	var (
		wg       sync.WaitGroup
		copied   atomic.Int64
		errOnce  sync.Once
		firstErr error
	)
	for i := range ranges {
		var rs RangeState
		m.cp.read(func(*Checkpoint) { rs = *ranges[i] })
		if rs.Done {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := acquire(rangeCtx, m.scans); err != nil {
				errOnce.Do(func() { firstErr = err })
				return
			}
			// The slot is released only after a failure has cancelled
			// the siblings, so none of them starts on it.
			defer func() { <-m.scans }()
			n, err := m.copyRange(rangeCtx, p, name, i, rs)
			copied.Add(n)
			if err != nil {
				errOnce.Do(func() {
					firstErr = err
					cancelRanges()
				})
			}
		}()
	}
	wg.Wait()
	res.Entities = copied.Load()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = context.Cause(ctx)
	}
	if firstErr != nil {
		m.opts.Progress.End(name, firstErr)
		return res, fmt.Errorf("table %s: %w", p.source, firstErr)
	}
	m.cp.update(func(cp *Checkpoint) { cp.table(p.source).Done = true })
	m.opts.Progress.End(name, nil)
	return res, nil
}

func (m *migration) phase() string {
	if m.opts.DryRun {
		return "reading"
	}
	return "copying"
}

// discover runs the discovery pass in a scan slot.
func (m *migration) discover(ctx context.Context, p tablePlan, name string) (discovery, error) {
	if err := acquire(ctx, m.scans); err != nil {
		return discovery{}, err
	}
	defer func() { <-m.scans }()
	m.opts.Progress.Begin(name, "counting", -1, 0)
	read := func(ctx context.Context, req PageRequest) (Page, error) {
		return m.readPage(ctx, p.source, req)
	}
	d, err := discover(ctx, m.opts.Source, m.opts.Ranges, m.opts.PageSize, read, func(n int) { m.opts.Progress.Add(name, int64(n)) })
	if err != nil {
		m.opts.Progress.End(name, err)
		return discovery{}, fmt.Errorf("table %s: counting: %w", p.source, err)
	}
	return d, nil
}

func (m *migration) readPage(ctx context.Context, table string, req PageRequest) (Page, error) {
	return m.opts.Backoff.readPage(ctx, m.opts.Source, table, req)
}
