package dynamoproxy

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
)

// tableSchema is what the proxy needs to know of a table, from one
// DescribeTable: its key attributes, its global secondary indexes, its ARNs
// (throttling answers name the resource) and its billing mode (on-demand
// and provisioned tables throttle with different exceptions).
type tableSchema struct {
	name     string
	arn      string
	hash     string // the partition key attribute
	rng      string // the sort key attribute, "" for none
	onDemand bool
	indexes  []indexSchema // global secondary indexes
}

type indexSchema struct {
	name string
	arn  string
	hash string
	rng  string
}

// index returns the global secondary index called name, nil for none (a
// local secondary index shares the table's partition key).
func (t *tableSchema) index(name string) *indexSchema {
	for i := range t.indexes {
		if t.indexes[i].name == name {
			return &t.indexes[i]
		}
	}
	return nil
}

// hashAttr is the partition key attribute of the table (index "") or of
// one of its indexes.
func (t *tableSchema) hashAttr(index string) string {
	if ix := t.index(index); ix != nil {
		return ix.hash
	}
	return t.hash
}

// primaryKey returns the primary key attributes of an item.
func (t *tableSchema) primaryKey(it attrs) attrs { return it.only(t.hash, t.rng) }

// indexKeyAttr reports whether name is a key attribute of a global
// secondary index, so that a write naming it may move the item between
// index partitions.
func (t *tableSchema) indexKeyAttr(name string) bool {
	for _, ix := range t.indexes {
		if name == ix.hash || name == ix.rng {
			return true
		}
	}
	return false
}

// hashIn returns the index's partition key value in an item. An item is in
// a global secondary index only when it has all the index's key attributes
// (a sparse index leaves the others out).
func (ix *indexSchema) hashIn(it attrs) (string, bool) {
	if it == nil {
		return "", false
	}
	if _, ok := it[ix.rng]; ix.rng != "" && !ok {
		return "", false
	}
	raw, ok := it[ix.hash]
	if !ok {
		return "", false
	}
	return scalar(raw)
}

// schemas caches one tableSchema per DynamoDB Local namespace and table.
// A CreateTable, DeleteTable or UpdateTable passing through forgets the
// table, so a table re-created or given an index is described again.
type schemas struct {
	mu sync.Mutex
	m  map[schemaID]*tableSchema
}

type schemaID struct{ namespace, table string }

func (s *schemas) forget(ns, table string) {
	s.mu.Lock()
	delete(s.m, schemaID{ns, table})
	s.mu.Unlock()
}

// get returns the schema of table, calling DescribeTable upstream the first
// time. Two requests that miss at once may both describe; the later result
// wins, which is as good.
func (s *schemas) get(ctx context.Context, up *upstream, from http.Header, table string) (*tableSchema, error) {
	id := schemaID{namespace(from), table}
	s.mu.Lock()
	t := s.m[id]
	s.mu.Unlock()
	if t != nil {
		return t, nil
	}
	in := object{}
	in.set("TableName", table)
	out, err := up.callOK(ctx, from, "DescribeTable", in)
	if err != nil {
		return nil, err
	}
	t = parseDescription(out.object("Table"))
	s.mu.Lock()
	if s.m == nil {
		s.m = map[schemaID]*tableSchema{}
	}
	s.m[id] = t
	if t.name != table { // addressed by ARN
		s.m[schemaID{id.namespace, t.name}] = t
	}
	s.mu.Unlock()
	return t, nil
}

type keySchemaElement struct {
	AttributeName string
	KeyType       string
}

func keysOf(elems []keySchemaElement) (hash, rng string) {
	for _, e := range elems {
		switch e.KeyType {
		case "HASH":
			hash = e.AttributeName
		case "RANGE":
			rng = e.AttributeName
		}
	}
	return hash, rng
}

func parseDescription(desc object) *tableSchema {
	var d struct {
		TableName          string
		TableArn           string
		KeySchema          []keySchemaElement
		BillingModeSummary struct{ BillingMode string }
		// A table created on demand reports PAY_PER_REQUEST here; one
		// created with provisioned throughput reports PROVISIONED or
		// nothing.
		GlobalSecondaryIndexes []struct {
			IndexName string
			IndexArn  string
			KeySchema []keySchemaElement
		}
	}
	_ = json.Unmarshal(desc.encode(), &d)
	t := &tableSchema{name: d.TableName, arn: d.TableArn, onDemand: d.BillingModeSummary.BillingMode == "PAY_PER_REQUEST"}
	t.hash, t.rng = keysOf(d.KeySchema)
	for _, g := range d.GlobalSecondaryIndexes {
		ix := indexSchema{name: g.IndexName, arn: g.IndexArn}
		ix.hash, ix.rng = keysOf(g.KeySchema)
		t.indexes = append(t.indexes, ix)
	}
	return t
}
