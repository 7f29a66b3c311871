package migrate

import (
	"context"
	"fmt"
	"sync"

	"github.com/tablebridge/tablebridge/shared/model"
)

// copyRange scans one range from its checkpointed position to its end. A
// reader goroutine fetches the next page while this one writes the current
// page; the checkpoint advances a page at a time, after the page's writes
// are all acknowledged. It returns how many entities it copied. The caller
// holds a scan slot.
func (m *migration) copyRange(ctx context.Context, p tablePlan, name string, idx int, rs RangeState) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type fetched struct {
		page Page
		err  error
	}
	pages := make(chan fetched, 1)
	go func() {
		defer close(pages)
		after := rs.Next
		for {
			page, err := m.readPage(ctx, p.source, PageRequest{Range: rs.Range, After: after, Top: m.opts.PageSize})
			select {
			case pages <- fetched{page, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || page.Next == nil {
				return
			}
			after = page.Next
		}
	}()

	var copied int64
	for f := range pages {
		if f.err != nil {
			return copied, fmt.Errorf("reading %s: %w", rangeName(rs.Range), f.err)
		}
		if err := m.writePage(ctx, p, f.page.Entities); err != nil {
			return copied, err
		}
		n := int64(len(f.page.Entities))
		copied += n
		next := f.page.Next
		m.cp.update(func(cp *Checkpoint) {
			r := cp.table(p.source).Ranges[idx]
			r.Next, r.Copied = next, r.Copied+n
			r.Done = next == nil
		})
		m.opts.Progress.Add(name, n)
		if next == nil {
			return copied, nil
		}
	}
	// The reader stopped before the last page: the run is being cancelled.
	return copied, context.Cause(ctx)
}

func rangeName(r Range) string {
	if r.Whole() {
		return "the table"
	}
	return fmt.Sprintf("PartitionKey range [%q, %q)", r.Lower, r.Upper)
}

// writePage writes one page's entities: grouped by partition, in chunks of
// at most MaxBatch, up to Writers chunks at once, each retried on transient
// failures. It returns once every chunk is acknowledged or one has failed.
func (m *migration) writePage(ctx context.Context, p tablePlan, entities []*model.Entity) error {
	for _, e := range entities {
		if err := keepTimestamp(e, m.opts.KeepTimestamp); err != nil {
			return fmt.Errorf("table %s: %w", p.source, err)
		}
	}
	if m.opts.DryRun {
		return m.limit.Wait(ctx, len(entities))
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return firstErr != nil
	}
	for _, chunk := range partitionChunks(entities, MaxBatch) {
		if failed() {
			break
		}
		if err := acquire(ctx, m.writers); err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			break
		}
		if err := m.limit.Wait(ctx, len(chunk)); err != nil {
			<-m.writers
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-m.writers }()
			err := m.opts.Backoff.do(ctx, func() error { return m.opts.Dest.Upsert(ctx, p.dest, chunk) })
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("writing partition %q of %s: %w", chunk[0].PartitionKey, p.dest, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// partitionChunks groups entities by PartitionKey, keeping the order in
// which partitions first appear and the order within each, and cuts each
// group into chunks of at most size: one entity group transaction each.
func partitionChunks(entities []*model.Entity, size int) [][]*model.Entity {
	var order []string
	groups := make(map[string][]*model.Entity)
	for _, e := range entities {
		g, ok := groups[e.PartitionKey]
		if !ok {
			order = append(order, e.PartitionKey)
		}
		groups[e.PartitionKey] = append(g, e)
	}
	var chunks [][]*model.Entity
	for _, pk := range order {
		g := groups[pk]
		for len(g) > size {
			chunks = append(chunks, g[:size:size])
			g = g[size:]
		}
		chunks = append(chunks, g)
	}
	return chunks
}
