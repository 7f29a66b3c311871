package dynamoproxy

import (
	"encoding/json"
	"net/http"
	"slices"
)

// indexHashes returns the index partition keys an access touches in ix, as
// far as known: the entry the write removes (the old item's) and the one it
// adds (the new item's). An update that names no index key attribute
// leaves the item's index keys as they were, so either item tells them.
func (ac *access) indexHashes(ix *indexSchema) []string {
	var out []string
	add := func(it attrs, known bool) {
		if h, ok := ix.hashIn(it); known && ok && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	if ac.check {
		return nil
	}
	add(ac.old, ac.oldKnown)
	add(ac.new, ac.newKnown)
	return out
}

// buckets returns the buckets an access draws on: reads on the key they
// read, writes on their table key and on every index key they touch.
func (a *analysis) bucketsOf(ac *access) []bucketID {
	if ac.scan {
		return nil // a Scan reads every partition; the model holds keys
	}
	ids := []bucketID{{key: ac.tableKey(), write: a.write}}
	if !a.write {
		return ids
	}
	for i := range ac.table.indexes {
		ix := &ac.table.indexes[i]
		for _, h := range ac.indexHashes(ix) {
			ids = append(ids, bucketID{key: Key{Table: ac.table.name, Index: ix.name, Hash: h}, write: true})
		}
	}
	return ids
}

// keys lists the distinct keys the request touches, as far as known.
func (a *analysis) keys() []Key {
	var out []Key
	for _, ac := range a.accesses {
		if ac.throttled {
			continue
		}
		if ac.scan {
			out = append(out, ac.tableKey())
		}
		for _, id := range a.bucketsOf(ac) {
			if !slices.Contains(out, id.key) {
				out = append(out, id.key)
			}
		}
	}
	return out
}

// admit applies the capacity model before forwarding: an access that needs
// an empty bucket is throttled. A batch forwards the rest and hands the
// throttled items back unprocessed, unless all of them are throttled
// ("Batch operations and error handling", Developer Guide: the batch fails
// only when no item could be processed); a transaction is cancelled; any
// other request answered throttled. It reports whether to forward.
func (p *Proxy) admit(w http.ResponseWriter, a *analysis) bool {
	causes := make([]*throttleCause, len(a.accesses))
	some, all := false, true
	for i, ac := range a.accesses {
		empty := p.buckets.empty(a.bucketsOf(ac))
		if len(empty) == 0 {
			all = false
			continue
		}
		some = true
		ac.throttled = true
		causes[i] = &throttleCause{table: ac.table, index: empty[0].key.Index, write: empty[0].write}
		for _, id := range empty {
			p.count(id.key, Usage{Throttles: 1})
		}
	}
	if !some {
		return true
	}
	if (a.op == "BatchWriteItem" || a.op == "BatchGetItem") && !all {
		a.dropThrottled()
		return true
	}
	sendThrottled(w, a, causes)
	return false
}

// throttleAll answers a Throttle fault: every access throttled on its own
// key.
func (p *Proxy) throttleAll(w http.ResponseWriter, a *analysis) {
	causes := make([]*throttleCause, len(a.accesses))
	var counted []Key
	for i, ac := range a.accesses {
		causes[i] = &throttleCause{table: ac.table, index: ac.index, write: a.write}
		if k := ac.tableKey(); !slices.Contains(counted, k) {
			counted = append(counted, k)
			p.count(k, Usage{Throttles: 1})
		}
	}
	sendThrottled(w, a, causes)
}

// dropThrottled takes the throttled items out of a batch request. What is
// dropped goes back to the client as UnprocessedItems or UnprocessedKeys
// (see unprocessed).
func (a *analysis) dropThrottled() {
	items := a.body.object("RequestItems")
	for table, raw := range items {
		var kept []json.RawMessage
		for _, ac := range a.accesses {
			if ac.batchTable == table && !ac.throttled {
				kept = append(kept, ac.raw)
			}
		}
		switch {
		case len(kept) == 0:
			delete(items, table)
		case a.op == "BatchWriteItem":
			items.set(table, kept)
		default:
			ka, _ := decodeObject(raw)
			ka.set("Keys", kept)
			items[table] = ka.encode()
		}
	}
	a.body.set("RequestItems", items)
	a.unprocessed = true
}

// mergeUnprocessed adds the throttled items of a batch to the answer's
// UnprocessedItems (BatchWriteItem: the write requests as sent) or
// UnprocessedKeys (BatchGetItem: the keys, with the table's other request
// members, ConsistentRead and projection, as sent).
func (a *analysis) mergeUnprocessed(out object) {
	member := "UnprocessedKeys"
	if a.op == "BatchWriteItem" {
		member = "UnprocessedItems"
	}
	merged := out.object(member)
	if merged == nil {
		merged = object{}
	}
	for _, ac := range a.accesses {
		if !ac.throttled {
			continue
		}
		if a.op == "BatchWriteItem" {
			var list []json.RawMessage
			_ = json.Unmarshal(merged[ac.batchTable], &list)
			merged.set(ac.batchTable, append(list, ac.raw))
			continue
		}
		ka, ok := decodeObject(merged[ac.batchTable])
		if !ok {
			ka, _ = decodeObject(a.requestItems[ac.batchTable])
			ka.set("Keys", []json.RawMessage{})
		}
		var keys []json.RawMessage
		_ = json.Unmarshal(ka["Keys"], &keys)
		ka.set("Keys", append(keys, ac.raw))
		merged[ac.batchTable] = ka.encode()
	}
	out.set(member, merged)
}
