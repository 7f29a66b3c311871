package migrate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Following a live source: after the bulk copy, passes copy what changed
// until the caller stops them, so the application's downtime at cutover is
// one last pass and a verify, not the whole copy.
//
// The Table service has no change feed, but it sets every entity's
// Timestamp on every write ("Understanding the Table service data model":
// the Timestamp is server-managed and advances on every change), and Azure,
// Azurite and tablebridge take a $filter on it (Cosmos DB's Table API
// blocks one, so its entities are filtered as they arrive: cosmosTable).
// So each pass, per table:
//
//  1. Reads, range by range, the entities whose Timestamp is at or after
//     the start of the previous pass minus Margin (the first pass: the
//     start of the bulk copy minus Margin), and upserts them. A write that
//     lands after the previous pass read its range has a Timestamp at or
//     after that pass's start, unless the source's clock is behind ours or
//     the write was in flight (Timestamp assigned, not yet visible) when
//     the pass began; Margin covers both. An entity written several times
//     ends with its last version, because passes run one after another and
//     the last write's Timestamp is inside the window of the pass after it.
//     Entities inside the margin are copied again, which upserts make
//     harmless.
//  2. Every SweepEvery passes, and always in the final pass, finds what the
//     source deleted, which leaves no Timestamp: a key comparison (Verify,
//     which works in any order with bounded memory) lists what only the
//     destination has, and each is deleted there (If-Match: *). An entity
//     deleted and inserted again while the comparison runs ends present:
//     the insert's Timestamp is later than the start of this pass, which is
//     where the next pass reads from, so the next pass copies it back.
//  3. Records the pass's start as the table's follow position in the
//     checkpoint, so a stopped follow resumes from there.
//
// The lag after a pass is the time since it began: writes committed since
// may not be in the destination yet. Deletes lag by the time since the last
// comparison began.

// FollowOptions configure a follow (Options.Follow).
type FollowOptions struct {
	// Stop, when closed, ends the follow cleanly: a pass under way is
	// cut short and a final pass with a key comparison runs. Closed
	// during the bulk copy, it interrupts the copy as a cancelled context
	// does. Cancelling Migrate's context instead stops at once, without a
	// final pass; the checkpoint keeps the position either way.
	Stop <-chan struct{}
	// Interval is the pause between passes (default 5 s).
	Interval time.Duration
	// Margin widens each pass's Timestamp window back in time, for clock
	// skew between the source and this machine and for writes in flight
	// on the source (default 1 minute; see DefaultMargin).
	Margin time.Duration
	// SweepEvery is how many passes run between key comparisons that
	// find deletes (default 10); the final pass always compares.
	SweepEvery int
	// UntilIdle stops the follow after a pass that copied nothing, that
	// is once the source has seen no write for Margin plus a pass: the
	// final pass follows at once.
	UntilIdle bool
	// Report receives every completed pass.
	Report func(PassReport)
}

// DefaultMargin is FollowOptions.Margin's default. Azure caps a table
// operation's server timeout at 30 seconds ("Setting timeouts for Table
// service operations"), so a write cannot stay in flight longer than that,
// and NTP keeps clocks within well under a second; a minute covers both
// with room to spare.
const DefaultMargin = time.Minute

// PassReport describes one completed pass of a follow.
type PassReport struct {
	// Pass numbers the passes of this run from 1; Final marks the last.
	Pass  int
	Final bool
	// Started and Ended bound the pass, key comparisons included.
	Started, Ended time.Time
	// Copied counts entities upserted (those inside the margin again
	// included); Deleted those deleted after a key comparison.
	Copied, Deleted int64
	// Swept: the pass compared keys on at least one table.
	Swept bool
	// Lag is how far behind the source the destination may be for
	// inserts and updates when the pass ends: writes committed after the
	// pass began may be missing. DeleteLag is the same for deletes: the
	// time since the oldest table's last key comparison began.
	Lag, DeleteLag time.Duration
}

func (f *FollowOptions) validate(o *Options) error {
	if o.DryRun {
		return errors.New("migrate: a dry run cannot follow")
	}
	if _, ok := o.Dest.(Source); !ok {
		return errors.New("migrate: following needs a destination it can read, to find deletes")
	}
	if f.Interval < 0 || f.Margin < 0 || f.SweepEvery < 0 {
		return errors.New("migrate: follow interval, margin and sweep interval must not be negative")
	}
	if f.Interval == 0 {
		f.Interval = 5 * time.Second
	}
	if f.Margin == 0 {
		f.Margin = DefaultMargin
	}
	if f.SweepEvery == 0 {
		f.SweepEvery = 10
	}
	if f.Report == nil {
		f.Report = func(PassReport) {}
	}
	return nil
}

// stopRequested reports whether stop is closed.
func stopRequested(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// follow runs passes until Stop, UntilIdle or ctx ends, and returns how
// many completed.
func (m *migration) follow(ctx context.Context, plan []tablePlan, results []TableResult) (int, error) {
	f := m.opts.Follow
	passes := 0
	stopping := false
	for {
		final := stopping || stopRequested(f.Stop)
		passCtx, cancelPass := context.WithCancel(ctx)
		if !final {
			// Stop cuts a pass short: the final pass starts at once
			// rather than after this one.
			go func() {
				select {
				case <-f.Stop:
					cancelPass()
				case <-passCtx.Done():
				}
			}()
		}
		rep, err := m.pass(passCtx, plan, results, final)
		cancelPass()
		if ctx.Err() != nil {
			return passes, fmt.Errorf("migration interrupted while following: %w", context.Cause(ctx))
		}
		if err != nil && !final && stopRequested(f.Stop) {
			stopping = true
			continue
		}
		if err != nil {
			return passes, err
		}
		passes++
		rep.Pass, rep.Final = passes, final
		f.Report(rep)
		if final {
			return passes, nil
		}
		if f.UntilIdle && rep.Copied == 0 {
			stopping = true
			continue
		}
		t := time.NewTimer(f.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return passes, fmt.Errorf("migration interrupted while following: %w", context.Cause(ctx))
		case <-f.Stop:
			t.Stop()
			stopping = true
		case <-t.C:
		}
	}
}

// pass runs one pass over every table at once; the first failure cancels
// the others.
func (m *migration) pass(ctx context.Context, plan []tablePlan, results []TableResult, final bool) (PassReport, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rep := PassReport{Started: time.Now()}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		oldest   time.Time
		firstErr error
	)
	for i, p := range plan {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tp, err := m.followTable(ctx, p, final)
			mu.Lock()
			defer mu.Unlock()
			results[i].Followed += tp.copied
			results[i].Deleted += tp.deleted
			rep.Copied += tp.copied
			rep.Deleted += tp.deleted
			rep.Swept = rep.Swept || tp.swept
			if oldest.IsZero() || tp.sweptAt.Before(oldest) {
				oldest = tp.sweptAt
			}
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("table %s: %w", p.source, err)
				cancel(firstErr)
			}
		}()
	}
	wg.Wait()
	// A pass whose every table finished counts, even if Stop came just
	// after: its positions are in the checkpoint.
	if firstErr != nil {
		return rep, context.Cause(ctx)
	}
	rep.Ended = time.Now()
	rep.Lag = rep.Ended.Sub(rep.Started)
	rep.DeleteLag = rep.Ended.Sub(oldest)
	return rep, nil
}

// tablePass is one table's part of a pass.
type tablePass struct {
	copied, deleted int64
	swept           bool
	// sweptAt is when the table's last key comparison began (the start of
	// its bulk copy if none has yet).
	sweptAt time.Time
}

// followTable runs one pass over a table (see the top of this file) and
// moves its follow position to the pass's start.
func (m *migration) followTable(ctx context.Context, p tablePlan, final bool) (tablePass, error) {
	start := time.Now()
	var (
		tp     tablePass
		since  time.Time
		ranges []Range
		fs     FollowState
	)
	m.cp.read(func(cp *Checkpoint) {
		t := cp.table(p.source)
		since, tp.sweptAt = t.Started, t.Started
		if t.Follow != nil {
			fs = *t.Follow
			since = fs.Since
			if !fs.Swept.IsZero() {
				tp.sweptAt = fs.Swept
			}
		}
		for _, r := range t.Ranges {
			ranges = append(ranges, r.Range)
		}
	})
	if len(ranges) == 0 {
		ranges = []Range{{}}
	}
	if !since.IsZero() {
		// A zero since (a checkpoint from before follow recorded when
		// the bulk copy began) reads the whole table.
		since = since.Add(-m.opts.Follow.Margin)
	}
	copied, err := m.copySince(ctx, p, ranges, since)
	tp.copied = copied
	if err != nil {
		return tp, err
	}
	if final || fs.PassesSinceSweep+1 >= m.opts.Follow.SweepEvery {
		sweptAt := time.Now()
		tp.deleted, err = m.sweep(ctx, p)
		if err != nil {
			return tp, err
		}
		tp.swept, tp.sweptAt = true, sweptAt
	}
	m.cp.update(func(cp *Checkpoint) {
		t := cp.table(p.source)
		next := FollowState{Since: start, Passes: fs.Passes + 1, PassesSinceSweep: fs.PassesSinceSweep + 1, Swept: fs.Swept}
		if tp.swept {
			next.PassesSinceSweep, next.Swept = 0, tp.sweptAt
		}
		t.Follow = &next
	})
	// A pass is a unit: its position is on disk before the next begins,
	// so a kill -9 loses at most the pass under way.
	return tp, m.cp.Flush()
}

// copySince copies the entities of the ranges written at or after since
// (everything if since is zero), the ranges in parallel in scan slots.
func (m *migration) copySince(ctx context.Context, p tablePlan, ranges []Range, since time.Time) (int64, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg     sync.WaitGroup
		copied int64
		mu     sync.Mutex
	)
	for _, r := range ranges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := acquire(ctx, m.scans); err != nil {
				return
			}
			defer func() { <-m.scans }()
			req := PageRequest{Range: r, Top: m.opts.PageSize, Since: since}
			for {
				page, err := m.readPage(ctx, p.source, req)
				if err != nil {
					cancel(fmt.Errorf("reading %s: %w", rangeName(r), err))
					return
				}
				if err := m.writePage(ctx, p, page.Entities); err != nil {
					cancel(err)
					return
				}
				mu.Lock()
				copied += int64(len(page.Entities))
				mu.Unlock()
				if page.Next == nil {
					return
				}
				req.After = page.Next
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return copied, context.Cause(ctx)
	}
	return copied, nil
}

// sweep finds the entities only the destination has, by a key comparison
// of the whole table (Verify), and deletes them there.
func (m *migration) sweep(ctx context.Context, p tablePlan) (int64, error) {
	type key struct{ pk, rk string }
	var extra []key
	_, err := Verify(ctx, VerifyOptions{
		Source:        m.opts.Source,
		Dest:          m.opts.Dest.(Source), // checked by validate
		Tables:        []string{p.source},
		Rename:        map[string]string{p.source: p.dest},
		KeepTimestamp: m.opts.KeepTimestamp,
		PageSize:      m.opts.PageSize,
		Backoff:       m.opts.Backoff,
		Report: func(d Difference) {
			// Entities missing or different in the destination were
			// written since the pass began and are the next pass's.
			if d.Kind == ExtraInDest && !d.WholeTable {
				extra = append(extra, key{d.PartitionKey, d.RowKey})
			}
		},
	})
	if err != nil {
		return 0, fmt.Errorf("comparing keys: %w", err)
	}
	var deleted int64
	for _, k := range extra {
		err := m.opts.Backoff.do(ctx, func() error { return m.opts.Dest.Delete(ctx, p.dest, k.pk, k.rk) })
		if err != nil {
			return deleted, fmt.Errorf("deleting PartitionKey %q RowKey %q from %s: %w", k.pk, k.rk, p.dest, err)
		}
		deleted++
	}
	return deleted, nil
}
