package dynamoproxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
)

// itemOps are the operations the proxy accounts, throttles and faults.
// Everything else (the control plane, PartiQL) passes through, counted in
// Stats.Ops only.
var itemOps = map[string]bool{
	"GetItem": true, "Query": true, "Scan": true, "BatchGetItem": true, "TransactGetItems": true,
	"PutItem": true, "UpdateItem": true, "DeleteItem": true, "BatchWriteItem": true, "TransactWriteItems": true,
}

func writeOp(op string) bool {
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
		return true
	}
	return false
}

// access is one item (or, for a Query or Scan, one key range) a request
// reads or writes.
type access struct {
	table *tableSchema
	index string // the global secondary index a Query or Scan reads
	hash  string // the partition key value; "" for a Scan
	scan  bool
	key   attrs // the primary key, to read the item before or after a write
	// old and new are the item before and after a write, each nil when
	// absent or not known; known says which of them the proxy learnt.
	old, new           attrs
	oldKnown, newKnown bool
	update             bool // an Update: the new item is known only afterwards
	movesIndexKey      bool // an Update naming an index key attribute
	check              bool // a ConditionCheck, which writes no index
	readSize           int  // bytes a read returned, to weigh the items of one answer
	throttled          bool // answered as unprocessed in a batch
	raw                json.RawMessage
	batchTable         string // the RequestItems member a batch entry came from
}

// tableKey is the partition key the access reads or writes on its table
// (or, for a Query or Scan of an index, on the index).
func (ac *access) tableKey() Key { return Key{Table: ac.table.name, Index: ac.index, Hash: ac.hash} }

// analysis is what the proxy makes of one item request.
type analysis struct {
	op       string
	write    bool
	accesses []*access
	token    string // a TransactWriteItems' ClientRequestToken
	body     object // the request as it will be forwarded
	// What the proxy added to the request, to take out of the answer: the
	// client's own ReturnConsumedCapacity, and whether ReturnValues (single
	// writes on tables with indexes) and ReturnValuesOnConditionCheckFailure
	// were the proxy's.
	wantCapacity       string
	stripAttributes    bool
	stripConditionItem bool
	returnValues       string
	// A batch's RequestItems as the client sent them, and whether some of
	// its items were throttled and go back unprocessed.
	requestItems object
	unprocessed  bool
	// multi: a batch or transaction writing several items, whose old and
	// new items the proxy reads to weigh them.
	multi bool
}

var errNotUnderstood = errors.New("dynamoproxy: request not understood")

// analyze works out which keys a request touches and asks DynamoDB Local to
// report what it takes: ReturnConsumedCapacity INDEXES on every request,
// the replaced or new item on single writes to tables with indexes, and the
// stored item when a single write's condition fails. It reads the items a
// batch or transaction replaces when it writes several or writes to a
// table with indexes, and the item an update naming an index key replaces:
// the request alone shows neither their sizes nor their index keys. An
// error means the request is passed through untouched, for DynamoDB Local
// to answer.
func (p *Proxy) analyze(ctx context.Context, r *http.Request, op string, body []byte) (*analysis, error) {
	in, ok := decodeObject(body)
	if !ok {
		return nil, errNotUnderstood
	}
	a := &analysis{op: op, write: writeOp(op), body: in, wantCapacity: in.str("ReturnConsumedCapacity"),
		requestItems: in.object("RequestItems")}
	in.set("ReturnConsumedCapacity", "INDEXES")
	schema := func(name string) (*tableSchema, error) { return p.schemas.get(ctx, p.up, r.Header, name) }
	var err error
	switch op {
	case "GetItem", "PutItem", "UpdateItem", "DeleteItem":
		err = a.single(in, schema)
	case "Query", "Scan":
		err = a.keyRange(in, schema)
	case "BatchGetItem":
		err = a.batchGet(in, schema)
	case "TransactGetItems":
		err = a.transaction(in, schema)
	case "BatchWriteItem":
		err = a.batchWrite(in, schema)
	case "TransactWriteItems":
		a.token = in.str("ClientRequestToken")
		err = a.transaction(in, schema)
	}
	if err != nil {
		return nil, err
	}
	// The items a write replaces show which index entries it removes; and
	// where one request writes several items, their sizes split the units
	// DynamoDB Local reports per table (see charge).
	batch := op == "BatchWriteItem" || op == "TransactWriteItems"
	a.multi = batch && len(a.accesses) > 1
	var before []*access
	for _, ac := range a.accesses {
		indexed := len(ac.table.indexes) > 0 && (batch || ac.movesIndexKey)
		if a.write && !ac.check && (a.multi || indexed) {
			before = append(before, ac)
		}
	}
	p.readItems(ctx, r.Header, before, func(ac *access, it attrs) { ac.old, ac.oldKnown = it, true })
	return a, nil
}

type schemaFunc func(table string) (*tableSchema, error)

func hashOf(it attrs, attr string) string {
	s, _ := scalar(it[attr])
	return s
}

func (a *analysis) single(in object, schema schemaFunc) error {
	t, err := schema(in.str("TableName"))
	if err != nil {
		return err
	}
	ac := &access{table: t}
	switch a.op {
	case "PutItem":
		ac.new, ac.newKnown = in.attrs("Item"), true
		ac.key = t.primaryKey(ac.new)
	default:
		ac.key = in.attrs("Key")
	}
	ac.hash = hashOf(ac.key, t.hash)
	a.accesses = append(a.accesses, ac)
	if !a.write {
		return nil
	}
	if a.op == "UpdateItem" {
		ac.update = true
		ac.movesIndexKey = namesIndexKey(in, t)
	}
	a.returnValues = in.str("ReturnValues")
	if len(t.indexes) > 0 && (a.returnValues == "" || a.returnValues == "NONE") {
		// The item replaced (or, for an update, the item written) tells
		// which index partitions the write moved entries out of and into.
		a.returnValues = "ALL_OLD"
		if a.op == "UpdateItem" {
			a.returnValues = "ALL_NEW"
		}
		in.set("ReturnValues", a.returnValues)
		a.stripAttributes = true
	}
	// A failed condition still costs write units, by the size of the stored
	// item ("Capacity unit consumption for write operations"), which the
	// failure answer carries when asked for.
	if rv := in.str("ReturnValuesOnConditionCheckFailure"); rv == "" || rv == "NONE" {
		in.set("ReturnValuesOnConditionCheckFailure", "ALL_OLD")
		a.stripConditionItem = true
	}
	return nil
}

func (a *analysis) keyRange(in object, schema schemaFunc) error {
	t, err := schema(in.str("TableName"))
	if err != nil {
		return err
	}
	ac := &access{table: t, scan: a.op == "Scan"}
	if ix := t.index(in.str("IndexName")); ix != nil {
		ac.index = ix.name
	}
	if !ac.scan {
		ac.hash = queryHash(in, t.hashAttr(ac.index))
	}
	a.accesses = append(a.accesses, ac)
	return nil
}

func (a *analysis) batchGet(in object, schema schemaFunc) error {
	for table, raw := range in.object("RequestItems") {
		t, err := schema(table)
		if err != nil {
			return err
		}
		ka, _ := decodeObject(raw)
		var keys []json.RawMessage
		_ = json.Unmarshal(ka["Keys"], &keys)
		for _, k := range keys {
			var key attrs
			_ = json.Unmarshal(k, &key)
			a.accesses = append(a.accesses, &access{table: t, key: key, hash: hashOf(key, t.hash), raw: k, batchTable: table})
		}
	}
	return nil
}

func (a *analysis) batchWrite(in object, schema schemaFunc) error {
	for table, raw := range in.object("RequestItems") {
		t, err := schema(table)
		if err != nil {
			return err
		}
		var entries []json.RawMessage
		_ = json.Unmarshal(raw, &entries)
		for _, e := range entries {
			wr, _ := decodeObject(e)
			ac := &access{table: t, raw: e, batchTable: table}
			if put := wr.object("PutRequest"); put != nil {
				ac.new, ac.newKnown = put.attrs("Item"), true
				ac.key = t.primaryKey(ac.new)
			} else {
				ac.key = wr.object("DeleteRequest").attrs("Key")
				ac.newKnown = true // none
			}
			ac.hash = hashOf(ac.key, t.hash)
			a.accesses = append(a.accesses, ac)
		}
	}
	return nil
}

// transaction reads TransactGetItems' Get entries and TransactWriteItems'
// Put, Update, Delete and ConditionCheck entries, in order.
func (a *analysis) transaction(in object, schema schemaFunc) error {
	for _, ti := range in.objects("TransactItems") {
		for _, kind := range []string{"Get", "Put", "Update", "Delete", "ConditionCheck"} {
			e := ti.object(kind)
			if e == nil {
				continue
			}
			t, err := schema(e.str("TableName"))
			if err != nil {
				return err
			}
			ac := &access{table: t, key: e.attrs("Key")}
			switch kind {
			case "Put":
				ac.new, ac.newKnown = e.attrs("Item"), true
				ac.key = t.primaryKey(ac.new)
			case "Delete":
				ac.newKnown = true // none
			case "Update":
				ac.update = true
				ac.movesIndexKey = namesIndexKey(e, t)
			case "ConditionCheck":
				ac.check = true
			}
			ac.hash = hashOf(ac.key, t.hash)
			a.accesses = append(a.accesses, ac)
		}
	}
	if len(a.accesses) == 0 {
		return errNotUnderstood
	}
	return nil
}

// readItems reads the stored items of accesses (strongly consistent,
// BatchGetItem, at most 100 keys a call) and hands each found or missing
// item to found. It is the proxy's own read: neither counted nor charged.
// A failure leaves the items unknown, which only narrows what is charged.
func (p *Proxy) readItems(ctx context.Context, from http.Header, accesses []*access, found func(*access, attrs)) {
	for len(accesses) > 0 {
		chunk := accesses[:min(100, len(accesses))]
		accesses = accesses[len(chunk):]
		byKey := map[string][]*access{}
		tables := map[string]*tableSchema{}
		request := map[string]map[string]any{}
		for _, ac := range chunk {
			tables[ac.table.name] = ac.table
			id := ac.table.name + "\x00" + ac.key.canonical()
			if byKey[id] == nil {
				ka := request[ac.table.name]
				if ka == nil {
					ka = map[string]any{"ConsistentRead": true, "Keys": []attrs{}}
					request[ac.table.name] = ka
				}
				ka["Keys"] = append(ka["Keys"].([]attrs), ac.key)
			}
			byKey[id] = append(byKey[id], ac)
		}
		in := object{}
		in.set("RequestItems", request)
		out, err := p.up.callOK(ctx, from, "BatchGetItem", in)
		if err != nil || len(out.object("UnprocessedKeys")) > 0 {
			continue
		}
		seen := map[string]attrs{}
		for table, raw := range out.object("Responses") {
			t := tables[table]
			if t == nil {
				continue
			}
			var items []attrs
			_ = json.Unmarshal(raw, &items)
			for _, it := range items {
				seen[table+"\x00"+t.primaryKey(it).canonical()] = it
			}
		}
		for id, acs := range byKey {
			for _, ac := range acs {
				found(ac, seen[id])
			}
		}
	}
}
