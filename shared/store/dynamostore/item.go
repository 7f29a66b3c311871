package dynamostore

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

type item = map[string]types.AttributeValue

// Item size. A DynamoDB item holds at most 400 KB (409,600 bytes): the UTF-8
// lengths of its attribute names plus the sizes of its values. An entity that
// fits itemBudget is one item; a larger one (Azure allows 1 MiB) is split into
// a main item and up to maxChunks overflow items, written and replaced in one
// TransactWriteItems. The budget leaves room for the estimate's slack.
const (
	itemBudget = 400_000
	maxChunks  = 9 // overflow numbers '1'...'9' (see chunkRowKey)
)

// valueSize estimates an attribute value's size by DynamoDB's rules: strings
// and binaries by length, numbers about one byte per two digits plus one,
// booleans one byte, maps and lists 3 bytes plus one per element.
func valueSize(av types.AttributeValue) int {
	switch a := av.(type) {
	case *types.AttributeValueMemberS:
		return len(a.Value)
	case *types.AttributeValueMemberB:
		return len(a.Value)
	case *types.AttributeValueMemberN:
		return len(a.Value)/2 + 2
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberM:
		n := 3
		for k, v := range a.Value {
			n += len(k) + valueSize(v) + 1
		}
		return n
	}
	return 64 // not produced by this package; any stored value is small
}

func itemSize(it item) int {
	n := 0
	for k, v := range it {
		n += len(k) + valueSize(v)
	}
	return n
}

// entityItems is an entity as DynamoDB items.
type entityItems struct {
	main   item
	chunks []item // overflow items 1..n; nil for a single-item entity
}

// chunked reports whether the entity is stored with the chunked layout
// (attrChunks present), even when all of it fits the main item.
func (ei entityItems) chunked() bool { return ei.chunks != nil }

// keyItem returns the primary key of an item.
func keyItem(pk, rk string) item {
	return item{
		attrPartitionKey: &types.AttributeValueMemberS{Value: pk},
		attrRowKey:       &types.AttributeValueMemberS{Value: rk},
	}
}

type encodedProp struct {
	name string // the attribute name (see propertyAttr)
	av   types.AttributeValue
	size int
}

// buildItems encodes an entity. A single-item entity carries attrCount so a
// later merge can check the property count in its condition. A larger one
// is packed first-fit-decreasing into a main item and overflow items that
// share a fresh generation id.
func buildItems(loc *location, e *model.Entity) (entityItems, error) {
	pk, rk := loc.pk(e.PartitionKey), encodeKey(e.RowKey)
	if err := checkKey(e.PartitionKey, loc.maxPKBytes()); err != nil {
		return entityItems{}, err
	}
	if err := checkKey(e.RowKey, maxRangeKeyBytes); err != nil {
		return entityItems{}, err
	}
	props := make([]encodedProp, 0, len(e.Properties))
	total := 0
	for name, v := range e.Properties {
		if isSystemAttr(name) {
			return entityItems{}, fmt.Errorf("dynamostore: property name %q is reserved", name)
		}
		av, typed, err := encodeValue(v)
		if err != nil {
			return entityItems{}, err
		}
		attr := propertyAttr(name, typed)
		p := encodedProp{name: attr, av: av, size: len(attr) + valueSize(av)}
		props = append(props, p)
		total += p.size
	}
	main := make(item, len(props)+6)
	main[attrPartitionKey] = &types.AttributeValueMemberS{Value: pk}
	main[attrRowKey] = &types.AttributeValueMemberS{Value: rk}
	main[attrTimestamp] = &types.AttributeValueMemberS{Value: formatTime(e.Timestamp)}
	// The order index attributes, on main items only, so overflow items
	// stay out of the index.
	main[attrShard], main[attrOrder] = orderAttrs(loc, pk, rk)
	if len(props) > 0 {
		main[attrCount] = &types.AttributeValueMemberN{Value: strconv.Itoa(len(props))}
	}
	if itemSize(main)+total <= itemBudget {
		for _, p := range props {
			main[p.name] = p.av
		}
		return entityItems{main: main}, nil
	}

	// Chunked layout.
	if len(rk)+2 > maxRangeKeyBytes {
		return entityItems{}, errKeyTooLong(len(e.RowKey), maxRangeKeyBytes-2)
	}
	delete(main, attrCount)
	gen := newGen()
	main[attrGen] = &types.AttributeValueMemberS{Value: gen}
	main[attrChunks] = &types.AttributeValueMemberN{Value: strconv.Itoa(maxChunks)} // sized at its widest
	slices.SortFunc(props, func(a, b encodedProp) int {
		return cmp.Or(cmp.Compare(b.size, a.size), cmp.Compare(a.name, b.name))
	})
	bins := []item{main}
	room := []int{itemBudget - itemSize(main)}
	for _, p := range props {
		placed := false
		for i := range bins {
			if p.size <= room[i] {
				bins[i][p.name] = p.av
				room[i] -= p.size
				placed = true
				break
			}
		}
		if placed {
			continue
		}
		if len(bins) == 1+maxChunks {
			return entityItems{}, fmt.Errorf("dynamostore: entity needs more than %d DynamoDB items: %w", 1+maxChunks, store.ErrEntityTooLarge)
		}
		chunk := keyItem(pk, chunkRowKey(rk, len(bins)))
		chunk[attrGen] = &types.AttributeValueMemberS{Value: gen}
		free := itemBudget - itemSize(chunk) - p.size
		chunk[p.name] = p.av
		bins = append(bins, chunk)
		room = append(room, free)
	}
	main[attrChunks] = &types.AttributeValueMemberN{Value: strconv.Itoa(len(bins) - 1)}
	return entityItems{main: main, chunks: bins[1:]}, nil
}

func newGen() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// itemMeta is what the system attributes of a main item say.
type itemMeta struct {
	timestamp string // stored form
	chunks    int    // -1: single-item layout
	gen       string
}

func metaOf(it item) itemMeta {
	m := itemMeta{chunks: -1}
	if s, ok := it[attrTimestamp].(*types.AttributeValueMemberS); ok {
		m.timestamp = s.Value
	}
	if n, ok := it[attrChunks].(*types.AttributeValueMemberN); ok {
		if c, err := strconv.Atoi(n.Value); err == nil && c >= 0 && c <= maxChunks {
			m.chunks = c
		}
	}
	if s, ok := it[attrGen].(*types.AttributeValueMemberS); ok {
		m.gen = s.Value
	}
	return m
}

func stringAttr(it item, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// decodeItems rebuilds an entity from its main item and overflow items.
func decodeItems(loc *location, main item, chunks []item) (*model.Entity, error) {
	pk, rk := stringAttr(main, attrPartitionKey), stringAttr(main, attrRowKey)
	if pk == "" || rk == "" {
		return nil, fmt.Errorf("%w: missing keys", errCorrupt)
	}
	ts, err := parseTime(stringAttr(main, attrTimestamp))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	n := len(main)
	for _, c := range chunks {
		n += len(c)
	}
	e := &model.Entity{
		PartitionKey: loc.unpk(pk),
		RowKey:       decodeKey(rk),
		Timestamp:    ts,
		Properties:   make(map[string]edm.Value, n),
	}
	if err := decodeProps(e, main); err != nil {
		return nil, err
	}
	for _, c := range chunks {
		if err := decodeProps(e, c); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func decodeProps(e *model.Entity, it item) error {
	want := len(e.Properties)
	for attr, av := range it {
		if isSystemAttr(attr) {
			continue
		}
		name, v, err := decodeProperty(attr, av)
		if err != nil {
			return fmt.Errorf("property %q of (%q, %q): %w", attr, e.PartitionKey, e.RowKey, err)
		}
		e.Properties[name] = v
		want++
	}
	if len(e.Properties) != want {
		// A property under both "Name" and "Name@": no writer of this
		// package leaves that, and either reading would be a guess.
		return fmt.Errorf("%w: (%q, %q) holds a property under both of its names", errCorrupt, e.PartitionKey, e.RowKey)
	}
	return nil
}
