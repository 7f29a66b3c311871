package dynamostore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

// Every item the store reads goes through the SDK's attribute values and
// decodeItems (codec.go), with one exception that a whole-request benchmark
// pays for: a Query or Scan page whose items are all plain single-item
// entities is decoded from the response JSON straight into model.Entity,
// measured as it is read, which spares the SDK's token-by-token decoder and
// decodeItems (figures: docs/performance.md, "DynamoDB overhead"). A page
// with any other item (an overflow or chunked item, an attribute type or
// value decodeItems would refuse, malformed JSON) goes to the SDK whole,
// and the pager reads its attribute values as for any other response.
// Point reads showed no measurable gain from it, so they take the
// SDK's path. The Edm rules stay in codec.go: this reader calls its scalar
// decoders.
//
// It plugs in through dynamodb.Options.Protocol, the SDK's documented hook
// for the wire protocol (see tuneClient), and only for a call given an
// entitySink (withEntitySink); the rest of the response (Count,
// LastEvaluatedKey, ...) still goes to the SDK with the items cut out. The
// body it reads is the SDK's own, so closing it still runs DynamoDB's CRC32
// check of the response.

// withPageProtocol installs pageProtocol in a client's options.
func withPageProtocol(o *dynamodb.Options) {
	if _, done := o.Protocol.(pageProtocol); !done && o.Protocol != nil {
		o.Protocol = pageProtocol{ClientProtocol: o.Protocol}
	}
}

type pageProtocol struct {
	smithyhttp.ClientProtocol
	// sink, set for one Query or Scan call by withEntitySink, receives the
	// page's entities.
	sink *entitySink
}

// pageItem is one item of a query page: a decoded entity with its item
// size, or the item's attributes.
type pageItem struct {
	entity *model.Entity
	size   int
	it     item
}

type entitySink struct {
	// loc is the table read: the decoder reads stored keys, and a key
	// prefix of the shared layout is taken off here.
	loc     *location
	items   []pageItem
	decoded bool // items holds the page; otherwise the SDK's Items do
}

// withEntitySink is the option of one Query or Scan call that sends its
// page's entities to sink. A client without pageProtocol (a test double)
// leaves the sink empty, and the page is the SDK's Items.
func withEntitySink(sink *entitySink) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		if p, ok := o.Protocol.(pageProtocol); ok {
			p.sink = sink
			o.Protocol = p
		}
	}
}

// pageItems returns the page's items: the sink's, or the SDK's.
func (s *entitySink) pageItems(items []item) []pageItem {
	if s.decoded {
		if s.loc != nil && s.loc.shared() {
			for _, pi := range s.items {
				// decodeKey left a prefixed key as it was: only "\x01"
				// alone is the empty key.
				pi.entity.PartitionKey = s.loc.unpk(pi.entity.PartitionKey)
			}
		}
		return s.items
	}
	out := make([]pageItem, len(items))
	for i, it := range items {
		out[i] = pageItem{it: it}
	}
	return out
}

var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// errNotFast sends a response to the SDK's own decoder.
var errNotFast = errors.New("dynamostore: response left to the SDK decoder")

func (p pageProtocol) DeserializeResponse(ctx context.Context, schema *smithy.OperationSchema, registry *smithy.TypeRegistry, resp *smithyhttp.Response, out smithy.Deserializable) error {
	sink := p.sink
	switch out.(type) {
	case *dynamodb.QueryOutput, *dynamodb.ScanOutput:
	default:
		sink = nil
	}
	if sink == nil || resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return p.ClientProtocol.DeserializeResponse(ctx, schema, registry, resp, out)
	}
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 8<<20 {
			buf.Reset()
			bodyBuffers.Put(buf)
		}
	}()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return &smithy.DeserializationError{Err: err}
	}
	body := buf.Bytes()
	rest, items, err := cutItems(body)
	if err != nil {
		rest, items = body, nil // the SDK decodes (or rejects) the response as sent
	}
	// The SDK reads what is left; closing still closes (and checks the
	// CRC32 of) the body as received.
	resp.Body = struct {
		io.Reader
		io.Closer
	}{bytes.NewReader(rest), resp.Body}
	if err := p.ClientProtocol.DeserializeResponse(ctx, schema, registry, resp, out); err != nil {
		return err
	}
	// nil items: the SDK decoded them, or the member was absent.
	sink.items, sink.decoded = items, items != nil
	return nil
}

// cutItems parses a Query or Scan response, decodes the entities of its
// top-level "Items" and returns the response with that member's value
// replaced by []. Without the member, rest is the body itself and items is
// nil.
func cutItems(body []byte) (rest []byte, items []pageItem, err error) {
	d := itemDecoder{data: body}
	d.skipSpace()
	if !d.consume('{') {
		return nil, nil, errNotFast
	}
	start, end := -1, -1
	for first := true; ; first = false {
		d.skipSpace()
		if d.consume('}') {
			break
		}
		if !first {
			if !d.consume(',') {
				return nil, nil, errNotFast
			}
			d.skipSpace()
		}
		key, esc, err := d.rawString()
		if err != nil {
			return nil, nil, err
		}
		d.skipSpace()
		if !d.consume(':') {
			return nil, nil, errNotFast
		}
		if esc {
			return nil, nil, errNotFast // perhaps the member, spelled with escapes
		}
		d.skipSpace()
		if string(key) == "Items" {
			if start >= 0 {
				return nil, nil, errNotFast // a duplicate member: let the SDK decide
			}
			start = d.pos
			items, err = d.pageList()
			end = d.pos
		} else {
			err = d.skipValue()
		}
		if err != nil {
			return nil, nil, err
		}
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, nil, errNotFast
	}
	if start < 0 {
		return body, nil, nil
	}
	rest = make([]byte, 0, len(body)-(end-start)+2)
	rest = append(append(append(rest, body[:start]...), "[]"...), body[end:]...)
	return rest, items, nil
}

// itemDecoder reads DynamoDB's JSON. Every method fails with errNotFast on
// anything outside strict JSON or a plain single-item entity, and the
// response then goes to the SDK.
type itemDecoder struct {
	data []byte
	pos  int
	// names interns attribute names: the items of a page share them.
	names map[string]string
}

// pageList reads the Items array as entities.
func (d *itemDecoder) pageList() ([]pageItem, error) {
	items := []pageItem{}
	err := d.list(func() error {
		e, size, err := d.entity()
		items = append(items, pageItem{entity: e, size: size})
		return err
	})
	return items, err
}

// entity reads one item as a single-item entity, adding up its size as
// itemSize would.
func (d *itemDecoder) entity() (*model.Entity, int, error) {
	if !d.consume('{') {
		return nil, 0, errNotFast
	}
	r := entityReader{e: &model.Entity{Properties: make(map[string]edm.Value, 16)}}
	for first := true; ; first = false {
		d.skipSpace()
		if d.consume('}') {
			return r.finish()
		}
		if !first {
			if !d.consume(',') {
				return nil, 0, errNotFast
			}
			d.skipSpace()
		}
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
	}
}

// entityReader collects one entity's attributes.
type entityReader struct {
	e           *model.Entity
	pk, rk, ts  string
	size, props int
}

// attribute reads one attribute value, of the given DynamoDB type, as
// decodeItems would. Anything else than a key, the Timestamp, the index
// and count attributes or a property decodeItems accepts fails with
// errNotFast.
func (r *entityReader) attribute(d *itemDecoder, attr, kind string) error {
	// A custom property: its name without typedSuffix, and whether it had it.
	name, typed := strings.CutSuffix(attr, typedSuffix)
	var v edm.Value
	var bad error // a value decodeItems refuses
	switch kind {
	case "S":
		s, err := d.str()
		if err != nil {
			return err
		}
		r.size += len(attr) + len(s)
		switch attr {
		case attrPartitionKey:
			return setOnce(&r.pk, s)
		case attrRowKey:
			return setOnce(&r.rk, s)
		case attrTimestamp:
			return setOnce(&r.ts, s)
		case attrShard: // the shared table's shard: prefix and number
			return nil
		}
		v, bad = decodeString(typed, s)
	case "N":
		n, err := d.str()
		if err != nil {
			return err
		}
		r.size += len(attr) + len(n)/2 + 2
		if attr == attrCount || attr == attrShard {
			return nil
		}
		v, bad = decodeNumber(typed, n)
	case "B":
		b, err := d.binary()
		if err != nil {
			return err
		}
		r.size += len(attr) + len(b)
		if attr == attrOrder {
			return nil
		}
		if typed {
			return errNotFast
		}
		v = decodeBinary(b)
	case "BOOL":
		b, err := d.boolean()
		if err != nil {
			return err
		}
		r.size += len(attr) + 1
		if typed {
			return errNotFast
		}
		v = edm.NewBoolean(b)
	default:
		return errNotFast
	}
	if bad != nil || isSystemAttr(attr) {
		// A system attribute other than the ones read above ($chunks and
		// $gen mark a chunked entity's item), or a value to report.
		return errNotFast
	}
	r.e.Properties[name] = v
	r.props++
	return nil
}

// setOnce sets a key attribute; an item with it twice goes to the SDK.
func setOnce(dst *string, s string) error {
	if *dst != "" {
		return errNotFast
	}
	*dst = s
	return nil
}

func (r *entityReader) finish() (*model.Entity, int, error) {
	if r.pk == "" || r.rk == "" || len(r.e.Properties) != r.props {
		return nil, 0, errNotFast
	}
	if _, chunk := splitRowKey(r.rk); chunk > 0 {
		return nil, 0, errNotFast
	}
	t, ok := parseStoredTime(r.ts)
	if !ok {
		return nil, 0, errNotFast
	}
	r.e.PartitionKey, r.e.RowKey, r.e.Timestamp = decodeKey(r.pk), decodeKey(r.rk), t
	return r.e, r.size, nil
}

func (d *itemDecoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *itemDecoder) consume(c byte) bool {
	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

// rawString reads a JSON string and returns its bytes between the quotes,
// and whether they hold an escape.
func (d *itemDecoder) rawString() ([]byte, bool, error) {
	if !d.consume('"') {
		return nil, false, errNotFast
	}
	start, esc := d.pos, false
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			raw := d.data[start:d.pos]
			d.pos++
			return raw, esc, nil
		case c == '\\':
			esc = true
			d.pos += 2
		case c < 0x20:
			return nil, false, errNotFast
		default:
			d.pos++
		}
	}
	return nil, false, errNotFast
}

// str reads a JSON string value as the SDK does. Invalid UTF-8, which
// DynamoDB never sends, is left to the SDK.
func (d *itemDecoder) str() (string, error) {
	start := d.pos
	raw, esc, err := d.rawString()
	if err != nil {
		return "", err
	}
	if !utf8.Valid(raw) {
		return "", errNotFast
	}
	if !esc {
		return string(raw), nil
	}
	var s string
	if err := json.Unmarshal(d.data[start:d.pos], &s); err != nil {
		return "", errNotFast
	}
	return s, nil
}

// name reads an attribute name, interned.
func (d *itemDecoder) name() (string, error) {
	start := d.pos
	raw, esc, err := d.rawString()
	if err != nil {
		return "", err
	}
	if esc || !utf8.Valid(raw) {
		d.pos = start
		return d.str()
	}
	// Looked up without allocating; stored once per distinct name.
	if s, ok := d.names[string(raw)]; ok {
		return s, nil
	}
	if d.names == nil {
		d.names = make(map[string]string, 16)
	}
	s := string(raw)
	d.names[s] = s
	return s, nil
}

func (d *itemDecoder) literal(word string) bool {
	if bytes.HasPrefix(d.data[d.pos:], []byte(word)) {
		d.pos += len(word)
		return true
	}
	return false
}

func (d *itemDecoder) boolean() (bool, error) {
	switch {
	case d.literal("true"):
		return true, nil
	case d.literal("false"):
		return false, nil
	}
	return false, errNotFast
}

// list calls each for every element of a JSON array.
func (d *itemDecoder) list(each func() error) error {
	if !d.consume('[') {
		return errNotFast
	}
	d.skipSpace()
	if d.consume(']') {
		return nil
	}
	for {
		d.skipSpace()
		if err := each(); err != nil {
			return err
		}
		d.skipSpace()
		if d.consume(']') {
			return nil
		}
		if !d.consume(',') {
			return errNotFast
		}
	}
}

// binary reads a base64 (standard, padded) string, as the SDK does.
func (d *itemDecoder) binary() ([]byte, error) {
	start := d.pos
	raw, esc, err := d.rawString()
	if err != nil {
		return nil, err
	}
	if esc { // JSON may escape '/'
		d.pos = start
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		raw = []byte(s)
	}
	b := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
	n, err := base64.StdEncoding.Decode(b, raw)
	if err != nil {
		return nil, errNotFast
	}
	return b[:n], nil
}

// skipValue steps over any JSON value, checking its syntax.
func (d *itemDecoder) skipValue() error {
	if d.pos >= len(d.data) {
		return errNotFast
	}
	switch c := d.data[d.pos]; {
	case c == '"':
		_, err := d.str()
		return err
	case c == '{':
		d.pos++
		d.skipSpace()
		if d.consume('}') {
			return nil
		}
		for {
			d.skipSpace()
			if _, err := d.str(); err != nil {
				return err
			}
			d.skipSpace()
			if !d.consume(':') {
				return errNotFast
			}
			d.skipSpace()
			if err := d.skipValue(); err != nil {
				return err
			}
			d.skipSpace()
			if d.consume('}') {
				return nil
			}
			if !d.consume(',') {
				return errNotFast
			}
		}
	case c == '[':
		return d.list(d.skipValue)
	case c == 't' || c == 'f':
		_, err := d.boolean()
		return err
	case c == 'n':
		if d.literal("null") {
			return nil
		}
		return errNotFast
	case c == '-' || c >= '0' && c <= '9':
		start := d.pos
		for d.pos < len(d.data) && bytes.IndexByte([]byte("+-.eE0123456789"), d.data[d.pos]) >= 0 {
			d.pos++
		}
		if !json.Valid(d.data[start:d.pos]) {
			return errNotFast
		}
		return nil
	}
	return errNotFast
}
