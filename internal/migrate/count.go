package migrate

import (
	"context"
	"errors"

	"github.com/tablebridge/tablebridge/shared/store"
)

// countEntities counts a table with a keys-only scan, shown as the
// "counting" phase of the progress line name, so that the phase after it
// (exporting, verifying) shows a total and an ETA, as migrate's copy does
// after its discovery pass. A table that does not exist counts 0 when
// missingOK.
func countEntities(ctx context.Context, src Source, table string, b Backoff, progress Progress, name string, missingOK bool) (int64, error) {
	progress.Begin(name, "counting", -1, 0)
	read := func(ctx context.Context, req PageRequest) (Page, error) {
		return b.readPage(ctx, src, table, req)
	}
	d, err := discover(ctx, src, 1, MaxPageSize, read, func(n int) { progress.Add(name, int64(n)) })
	if err != nil && missingOK && errors.Is(err, store.ErrTableNotFound) {
		return 0, nil
	}
	return d.total, err
}
