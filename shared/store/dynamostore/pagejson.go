package dynamostore

import (
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

// Query and Scan pages go one step further when the store's reader asks
// for it (an entitySink, given to the call by withEntitySink): single-item
// entities are
// decoded from the response straight into model.Entity, without the
// attribute maps in between, and measured as they are read. Items that are
// not plain single-item entities (overflow items, chunked main items, or
// anything odd, which decodeItems then reports) come as attribute maps, so
// the pager treats them as before.

// pageItem is one item of a query page: a decoded entity with its item
// size, or the item's attributes.
type pageItem struct {
	entity *model.Entity
	size   int
	it     item
}

type entitySink struct {
	items   []pageItem
	decoded bool // items holds the page; otherwise the SDK's Items do
}

// withEntitySink is the option of one Query or Scan call that sends its
// page's items to sink. A client without itemProtocol (a test double)
// leaves the sink empty, and the page is the SDK's Items.
func withEntitySink(sink *entitySink) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		if p, ok := o.Protocol.(itemProtocol); ok {
			p.sink = sink
			o.Protocol = p
		}
	}
}

// pageItems returns the page's items: the sink's, or the SDK's.
func (s *entitySink) pageItems(items []item) []pageItem {
	if s.decoded {
		return s.items
	}
	out := make([]pageItem, len(items))
	for i, it := range items {
		out[i] = pageItem{it: it}
	}
	return out
}

// errNotEntity sends one item to the attribute-map path.
var errNotEntity = errors.New("dynamostore: not a single-item entity")

// pageList reads the Items array into page items.
func (d *itemDecoder) pageList() ([]pageItem, error) {
	items := []pageItem{}
	err := d.list(func() error {
		start := d.pos
		e, size, err := d.entity()
		if err == errNotEntity {
			d.pos = start
			it, err := d.item()
			items = append(items, pageItem{it: it})
			return err
		}
		items = append(items, pageItem{entity: e, size: size})
		return err
	})
	return items, err
}

// entity reads one item as a single-item entity, adding up its size as
// itemSize would. It fails with errNotEntity, or with errNotFast for JSON
// the attribute-map path would not take either.
func (d *itemDecoder) entity() (*model.Entity, int, error) {
	if !d.consume('{') {
		return nil, 0, errNotFast
	}
	r := entityReader{e: &model.Entity{Properties: make(map[string]edm.Value, 16)}}
	d.skipSpace()
	if d.consume('}') {
		return nil, 0, errNotEntity
	}
	for {
		d.skipSpace()
		attr, err := d.name()
		if err != nil {
			return nil, 0, err
		}
		d.skipSpace()
		if !d.consume(':') {
			return nil, 0, errNotFast
		}
		d.skipSpace()
		if !d.consume('{') {
			return nil, 0, errNotFast
		}
		d.skipSpace()
		kind, esc, err := d.rawString()
		if err != nil || esc {
			return nil, 0, errNotFast
		}
		d.skipSpace()
		if !d.consume(':') {
			return nil, 0, errNotFast
		}
		d.skipSpace()
		if err := r.attribute(d, attr, string(kind)); err != nil {
			return nil, 0, err
		}
		d.skipSpace()
		if !d.consume('}') {
			return nil, 0, errNotFast
		}
		d.skipSpace()
		if d.consume('}') {
			break
		}
		if !d.consume(',') {
			return nil, 0, errNotFast
		}
	}
	return r.finish()
}

// entityReader collects one entity's attributes.
type entityReader struct {
	e           *model.Entity
	pk, rk, ts  string
	size, props int
	// notEntity is set by an attribute that makes the item something
	// other than a plain single-item entity; reading goes on, so the JSON
	// is still checked, and the item then takes the attribute-map path.
	notEntity bool
}

func (r *entityReader) attribute(d *itemDecoder, attr, kind string) error {
	// A custom property: its name without typedSuffix, and whether it had it.
	name, typed := strings.CutSuffix(attr, typedSuffix)
	custom := !isSystemAttr(attr)
	var v edm.Value
	var err error
	switch kind {
	case "S":
		s, rerr := d.str()
		if rerr != nil {
			return rerr
		}
		r.size += len(attr) + len(s)
		switch attr {
		case attrPartitionKey:
			r.pk = s
			return nil
		case attrRowKey:
			r.rk = s
			return nil
		case attrTimestamp:
			r.ts = s
			return nil
		}
		if custom {
			v, err = decodeString(typed, s)
		}
	case "N":
		n, rerr := d.str()
		if rerr != nil {
			return rerr
		}
		r.size += len(attr) + len(n)/2 + 2
		if attr == attrCount || attr == attrShard {
			return nil
		}
		if custom {
			v, err = decodeNumber(typed, n)
		}
	case "B":
		b, rerr := d.binary()
		if rerr != nil {
			return rerr
		}
		r.size += len(attr) + len(b)
		if attr == attrOrder {
			return nil
		}
		custom = custom && !typed
		v = decodeBinary(b)
	case "BOOL":
		b, rerr := d.boolean()
		if rerr != nil {
			return rerr
		}
		r.size += len(attr) + 1
		custom = custom && !typed
		v = edm.NewBoolean(b)
	default:
		custom = false
		if err := d.skipAttributeValue(kind); err != nil {
			return err
		}
	}
	if !custom || err != nil {
		// A system attribute this reader does not handle, or a value
		// decodeItems refuses: the item takes the attribute-map path.
		r.notEntity = true
		return nil
	}
	r.e.Properties[name] = v
	r.props++
	return nil
}

func (r *entityReader) finish() (*model.Entity, int, error) {
	if r.notEntity || r.pk == "" || r.rk == "" || len(r.e.Properties) != r.props {
		return nil, 0, errNotEntity
	}
	if _, chunk := splitRowKey(r.rk); chunk > 0 {
		return nil, 0, errNotEntity
	}
	t, ok := parseStoredTime(r.ts)
	if !ok {
		return nil, 0, errNotEntity
	}
	r.e.PartitionKey, r.e.RowKey, r.e.Timestamp = decodeKey(r.pk), decodeKey(r.rk), t
	return r.e, r.size, nil
}
