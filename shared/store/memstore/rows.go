package memstore

import (
	"slices"
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store/record"
)

// key is an entity's position in Azure's order: PartitionKey, then RowKey,
// each compared by UTF-8 bytes (as strings.Compare does).
type key struct{ pk, rk string }

func compareKeys(a, b key) int {
	if c := strings.Compare(a.pk, b.pk); c != 0 {
		return c
	}
	return strings.Compare(a.rk, b.rk)
}

// row is one stored entity, encoded (package record): reads decode a fresh
// entity, and writes store a new row.
type row struct {
	key
	ts   time.Time // the record's Timestamp, for conditions without decoding
	rec  string    // the record: Timestamp and properties
	size int       // model.EntitySize of the entity, for the page byte budget
}

// entity decodes the row into a new entity.
func (r *row) entity() (*model.Entity, error) {
	e, err := record.DecodeEntity(r.rec)
	if err != nil {
		return nil, err
	}
	e.PartitionKey, e.RowKey = r.pk, r.rk
	return e, nil
}

// match returns the row's entity when it passes match (every row passes a
// nil one), else nil. It decodes into scratch to test the filter, so rows
// that fail it cost no allocation, and copies only a match.
func (r *row) match(match func(*model.Entity) bool, scratch *model.Entity) (*model.Entity, error) {
	if match == nil {
		return r.entity()
	}
	if err := record.DecodeEntityInto(scratch, r.rec); err != nil {
		return nil, err
	}
	scratch.PartitionKey, scratch.RowKey = r.pk, r.rk
	if !match(scratch) {
		return nil, nil
	}
	return scratch.Clone(), nil
}

// maxChunk bounds a chunk's length: a chunk that grows past it splits in
// two. Inserting into a sorted slice of n rows moves up to n pointers; with
// chunks an insert moves at most maxChunk, and a lookup is two binary
// searches, so a table of millions of rows still takes writes in
// microseconds.
const maxChunk = 512

// rows is an ordered set of rows: sorted, non-empty chunks, every key of a
// chunk below every key of the next, and a map of the same rows by key for
// point look-ups (a read, and the check before each write), which a binary
// search would pay for with a cache miss per probe in a large table.
type rows struct {
	chunks [][]*row
	byKey  map[key]*row
}

// pos is a position in rows; it stays valid until the next change.
type pos struct{ chunk, i int }

// seek returns the position of the first row at or after k (past the end
// when there is none), and whether that row's key is k.
func (r *rows) seek(k key) (pos, bool) {
	ci, _ := slices.BinarySearchFunc(r.chunks, k, func(c []*row, k key) int {
		return compareKeys(c[len(c)-1].key, k)
	})
	if ci == len(r.chunks) {
		return pos{chunk: ci}, false
	}
	i, found := slices.BinarySearchFunc(r.chunks[ci], k, func(x *row, k key) int {
		return compareKeys(x.key, k)
	})
	return pos{chunk: ci, i: i}, found
}

// at returns the row at p, or nil past the end.
func (r *rows) at(p pos) *row {
	if p.chunk >= len(r.chunks) {
		return nil
	}
	return r.chunks[p.chunk][p.i]
}

// next returns the position after p.
func (r *rows) next(p pos) pos {
	p.i++
	if p.i == len(r.chunks[p.chunk]) {
		return pos{chunk: p.chunk + 1}
	}
	return p
}

// get returns the row of k, or nil.
func (r *rows) get(k key) *row { return r.byKey[k] }

// put stores x in place of the row of its key, or inserts it.
func (r *rows) put(x *row) {
	if r.byKey == nil {
		r.byKey = map[key]*row{}
	}
	r.byKey[x.key] = x
	p, found := r.seek(x.key)
	if found {
		r.chunks[p.chunk][p.i] = x
		return
	}
	if len(r.chunks) == 0 {
		r.chunks = [][]*row{{x}}
		return
	}
	if p.chunk == len(r.chunks) {
		// Past every key: append to the last chunk.
		p = pos{chunk: p.chunk - 1, i: len(r.chunks[p.chunk-1])}
	}
	c := slices.Insert(r.chunks[p.chunk], p.i, x)
	if len(c) <= maxChunk {
		r.chunks[p.chunk] = c
		return
	}
	// Split in halves; each half gets its own array so that appending to
	// the first never overwrites the second.
	half := len(c) / 2
	r.chunks[p.chunk] = slices.Clip(c[:half])
	r.chunks = slices.Insert(r.chunks, p.chunk+1, slices.Clone(c[half:]))
}

// remove deletes the row of k, reporting whether there was one.
func (r *rows) remove(k key) bool {
	p, found := r.seek(k)
	if !found {
		return false
	}
	delete(r.byKey, k)
	c := slices.Delete(r.chunks[p.chunk], p.i, p.i+1)
	if len(c) == 0 {
		r.chunks = slices.Delete(r.chunks, p.chunk, p.chunk+1)
	} else {
		r.chunks[p.chunk] = c
	}
	return true
}
