package dynamoproxy

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// How the proxy counts units: it asks DynamoDB Local for ConsumedCapacity
// (INDEXES: the table's units and each global secondary index's) on every
// request and takes its figures, which follow DynamoDB's rules: 4 KB a read
// unit, rounded up per item for GetItem and BatchGetItem and on the total
// for Query and Scan, half for eventually consistent reads; 1 KB a write
// unit on the larger of the old and new item; twice for transactions; index
// writes on the index. What DynamoDB Local reports per table, the proxy
// splits among the keys the request touched in that table or index, by the
// units each item would cost alone (see weight). A write whose condition
// fails costs the write units of the larger of the stored and the new item;
// DynamoDB Local reports nothing for it, so the proxy prices it from the
// stored item the failure answer carries.

// consumed is one table's entry of ConsumedCapacity: units on the table
// (with its local secondary indexes, which share its partitions) and on
// each global secondary index.
type consumed struct {
	table   float64
	indexes map[string]float64
}

func consumedOf(out object) map[string]consumed {
	type units struct{ CapacityUnits float64 }
	type entry struct {
		TableName              string
		CapacityUnits          float64
		Table                  *units
		LocalSecondaryIndexes  map[string]units
		GlobalSecondaryIndexes map[string]units
	}
	var list []entry
	raw := out["ConsumedCapacity"]
	if json.Unmarshal(raw, &list) != nil {
		var one entry
		if json.Unmarshal(raw, &one) == nil {
			list = []entry{one}
		}
	}
	m := map[string]consumed{}
	for _, e := range list {
		c := consumed{indexes: map[string]float64{}}
		onIndexes := 0.0
		for name, u := range e.GlobalSecondaryIndexes {
			c.indexes[name] = u.CapacityUnits
			onIndexes += u.CapacityUnits
		}
		if e.Table != nil {
			c.table = e.Table.CapacityUnits
			for _, u := range e.LocalSecondaryIndexes {
				c.table += u.CapacityUnits
			}
		} else {
			c.table = e.CapacityUnits - onIndexes
		}
		m[e.TableName] = c
	}
	return m
}

// account learns from the answer what the request did (the items replaced
// and written; for an update that did not return its new item, when it may
// have moved index keys or is one of several writes, a read of it), then
// counts and charges it.
func (p *Proxy) account(ctx context.Context, r *http.Request, a *analysis, ans *answer) {
	out, _ := decodeObject(ans.body)
	if strings.HasSuffix(out.str("__type"), "#ResourceNotFoundException") {
		for _, ac := range a.accesses { // deleted behind the proxy's back
			p.schemas.forget(namespace(r.Header), ac.table.name)
		}
	}
	if ans.status == http.StatusOK {
		a.learn(out)
		var after []*access
		for _, ac := range a.accesses {
			if !ac.throttled && ac.update && !ac.newKnown && (ac.movesIndexKey || a.multi) {
				after = append(after, ac)
			}
		}
		p.readItems(ctx, r.Header, after, func(ac *access, it attrs) { ac.new, ac.newKnown = it, true })
	}
	usage := map[Key]*Usage{}
	at := func(k Key) *Usage {
		if usage[k] == nil {
			usage[k] = &Usage{Requests: 1}
		}
		return usage[k]
	}
	for _, k := range a.keys() {
		at(k)
	}
	add := func(k Key, units float64) {
		if a.write {
			at(k).WriteUnits += units
		} else {
			at(k).ReadUnits += units
		}
	}
	switch {
	case ans.status == http.StatusOK:
		a.charge(consumedOf(out), add)
	case failedCondition(out) && len(a.accesses) == 1:
		ac := a.accesses[0]
		add(ac.tableKey(), writeUnitsOf(max(itemSize(out.attrs("Item")), itemSize(ac.new))))
	}
	p.statsMu.Lock()
	p.stats.Requests++
	for k, u := range usage {
		cur := p.stats.Keys[k]
		cur.add(*u)
		p.stats.Keys[k] = cur
	}
	p.statsMu.Unlock()
	for k, u := range usage {
		p.buckets.take(bucketID{key: k, write: true}, u.WriteUnits)
		p.buckets.take(bucketID{key: k, write: false}, u.ReadUnits)
	}
}

// count adds u to k's usage.
func (p *Proxy) count(k Key, u Usage) {
	p.statsMu.Lock()
	cur := p.stats.Keys[k]
	cur.add(u)
	p.stats.Keys[k] = cur
	p.statsMu.Unlock()
}

func failedCondition(out object) bool {
	return strings.HasSuffix(out.str("__type"), "#ConditionalCheckFailedException")
}

// learn reads the old or new item a single write returned, and the sizes of
// the items a batch or transaction read.
func (a *analysis) learn(out object) {
	switch a.op {
	case "PutItem", "UpdateItem", "DeleteItem":
		ac := a.accesses[0]
		switch a.returnValues {
		case "ALL_OLD":
			ac.old, ac.oldKnown = out.attrs("Attributes"), true
		case "ALL_NEW":
			ac.new, ac.newKnown = out.attrs("Attributes"), true
		}
	case "BatchGetItem":
		for table, raw := range out.object("Responses") {
			var items []attrs
			_ = json.Unmarshal(raw, &items)
			for _, it := range items {
				for _, ac := range a.accesses {
					if ac.batchTable == table && ac.table.primaryKey(it).canonical() == ac.key.canonical() {
						ac.readSize = itemSize(it)
					}
				}
			}
		}
	case "TransactGetItems":
		for i, resp := range out.objects("Responses") {
			if i < len(a.accesses) {
				a.accesses[i].readSize = itemSize(resp.attrs("Item"))
			}
		}
	}
}

// weight is what an access would cost alone, in the units of its kind: it
// splits the units DynamoDB reports for a table or index among the keys of
// one request.
func (a *analysis) weight(ac *access) float64 {
	if a.write {
		return writeUnitsOf(max(itemSize(ac.old), itemSize(ac.new)))
	}
	return readUnitsOf(ac.readSize)
}

// charge splits each table's and each index's reported units among the
// keys the request touched there.
func (a *analysis) charge(byTable map[string]consumed, add func(Key, float64)) {
	type share struct {
		key    Key
		weight float64
	}
	split := func(units float64, shares []share) {
		total := 0.0
		for _, s := range shares {
			total += s.weight
		}
		for _, s := range shares {
			if total > 0 {
				add(s.key, units*s.weight/total)
			}
		}
	}
	for table, c := range byTable {
		var onTable []share
		onIndex := map[string][]share{}
		for _, ac := range a.accesses {
			if ac.throttled || ac.table.name != table {
				continue
			}
			w := a.weight(ac)
			if ac.index == "" {
				onTable = append(onTable, share{ac.tableKey(), w})
			} else {
				onIndex[ac.index] = append(onIndex[ac.index], share{ac.tableKey(), w})
			}
			if !a.write {
				continue
			}
			for i := range ac.table.indexes {
				ix := &ac.table.indexes[i]
				for _, h := range ac.indexHashes(ix) {
					onIndex[ix.name] = append(onIndex[ix.name], share{Key{Table: table, Index: ix.name, Hash: h}, w})
				}
			}
		}
		split(c.table, onTable)
		for index, units := range c.indexes {
			split(units, onIndex[index])
		}
	}
}

// clientAnswer is the answer as the client asked for it: without what the
// proxy asked for on its own (ReturnValues, the failed condition's item,
// ConsumedCapacity beyond what the client requested), with the items a
// batch could not process because of throttling.
func (a *analysis) clientAnswer(ans *answer) *answer {
	out, ok := decodeObject(ans.body)
	if !ok {
		return ans
	}
	switch {
	case ans.status == http.StatusOK:
		if a.stripAttributes {
			delete(out, "Attributes")
		}
		reshapeCapacity(out, a.wantCapacity)
		if a.unprocessed {
			a.mergeUnprocessed(out)
		}
	case a.stripConditionItem && failedCondition(out):
		delete(out, "Item")
	default:
		return ans
	}
	return &answer{status: ans.status, header: ans.header, body: out.encode()}
}

// reshapeCapacity leaves ConsumedCapacity as the client's
// ReturnConsumedCapacity asks: none, TOTAL (table name and units), INDEXES
// (everything).
func reshapeCapacity(out object, want string) {
	raw, ok := out["ConsumedCapacity"]
	switch {
	case !ok || want == "INDEXES":
	case want == "TOTAL":
		trim := func(e object) object {
			return object{"TableName": e["TableName"], "CapacityUnits": e["CapacityUnits"]}
		}
		if e, ok := decodeObject(raw); ok {
			out["ConsumedCapacity"] = trim(e).encode()
			return
		}
		var list []object
		_ = json.Unmarshal(raw, &list)
		for i := range list {
			list[i] = trim(list[i])
		}
		out.set("ConsumedCapacity", list)
	default:
		delete(out, "ConsumedCapacity")
	}
}
