package dynamostore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Reading items is most of the store's CPU on queries: aws-sdk-go-v2 decodes
// a response through its schema-driven, token-by-token JSON reader, which
// for a 1000-entity Query page costs more than everything else tablebridge
// does with the page. itemProtocol decodes the items of GetItem, Query and
// Scan responses with a one-pass parser straight into the SDK's own
// types.AttributeValue members, and leaves everything else to the SDK: the
// rest of the response (Count, LastEvaluatedKey, ConsumedCapacity, ...) is
// handed to the SDK's protocol with the items cut out, and any response the
// parser does not fully understand (an error status, an attribute type it
// does not know, malformed JSON) goes to the SDK untouched. The result is
// the same output the SDK builds (a differential test and a fuzz target
// compare the two), at a fraction of the cost.
//
// It plugs in through dynamodb.Options.Protocol, the SDK's documented hook
// for the wire protocol (see tuneClient). The body it reads is the SDK's
// own, so closing it still runs DynamoDB's CRC32 check of the response.

// withItemProtocol installs itemProtocol in a client's options.
func withItemProtocol(o *dynamodb.Options) {
	if _, done := o.Protocol.(itemProtocol); !done && o.Protocol != nil {
		o.Protocol = itemProtocol{ClientProtocol: o.Protocol}
	}
}

type itemProtocol struct {
	smithyhttp.ClientProtocol
	// sink, set for one Query or Scan call by withEntitySink, receives the
	// page's items as entities.
	sink *entitySink
}

var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// errNotFast sends a response to the SDK's own decoder.
var errNotFast = errors.New("dynamostore: response left to the SDK decoder")

func (p itemProtocol) DeserializeResponse(ctx context.Context, schema *smithy.OperationSchema, registry *smithy.TypeRegistry, resp *smithyhttp.Response, out smithy.Deserializable) error {
	var member string
	switch out.(type) {
	case *dynamodb.GetItemOutput:
		member = "Item"
	case *dynamodb.QueryOutput, *dynamodb.ScanOutput:
		member = "Items"
	}
	if member == "" || resp.StatusCode < 200 || resp.StatusCode >= 300 {
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
	sink := p.sink
	if sink != nil {
		sink.items, sink.decoded = nil, false
	}
	rest, items, single, err := cutItems(body, member, sink)
	fast := err == nil
	if !fast {
		rest = body // the SDK decodes (or rejects) the response as sent
	}
	// The SDK reads what is left; closing still closes (and checks the
	// CRC32 of) the body as received.
	resp.Body = struct {
		io.Reader
		io.Closer
	}{bytes.NewReader(rest), resp.Body}
	if err := p.ClientProtocol.DeserializeResponse(ctx, schema, registry, resp, out); err != nil || !fast {
		return err
	}
	switch o := out.(type) {
	case *dynamodb.GetItemOutput:
		o.Item = single
	case *dynamodb.QueryOutput:
		o.Items = items
	case *dynamodb.ScanOutput:
		o.Items = items
	}
	// With a sink, cutItems put any Items there (nil: the member was absent).
	if sink != nil && sink.items != nil {
		sink.decoded = true
	}
	return nil
}

// cutItems parses a response object, decodes the value of its top-level
// member ("Items", a list of items, or "Item", one item) and returns the
// response with that value replaced by an empty one. Without the member,
// rest is the body itself and both results are nil. With a sink, the items
// of "Items" go to the sink as page items instead.
func cutItems(body []byte, member string, sink *entitySink) (rest []byte, items []map[string]types.AttributeValue, single map[string]types.AttributeValue, err error) {
	d := itemDecoder{data: body}
	d.skipSpace()
	if !d.consume('{') {
		return nil, nil, nil, errNotFast
	}
	start, end := -1, -1
	for first := true; ; first = false {
		d.skipSpace()
		if d.consume('}') {
			break
		}
		if !first {
			if !d.consume(',') {
				return nil, nil, nil, errNotFast
			}
			d.skipSpace()
		}
		key, esc, err := d.rawString()
		if err != nil {
			return nil, nil, nil, err
		}
		d.skipSpace()
		if !d.consume(':') {
			return nil, nil, nil, errNotFast
		}
		if esc {
			return nil, nil, nil, errNotFast // perhaps the member, spelled with escapes
		}
		d.skipSpace()
		if string(key) == member {
			if start >= 0 {
				return nil, nil, nil, errNotFast // a duplicate member: let the SDK decide
			}
			start = d.pos
			switch {
			case member == "Item":
				single, err = d.item()
			case sink != nil:
				sink.items, err = d.pageList()
			default:
				items, err = d.itemList()
			}
			end = d.pos
		} else {
			err = d.skipValue()
		}
		if err != nil {
			return nil, nil, nil, err
		}
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, nil, nil, errNotFast
	}
	if start < 0 {
		return body, nil, nil, nil
	}
	empty := "[]"
	if member == "Item" {
		empty = "{}"
	}
	rest = make([]byte, 0, len(body)-(end-start)+2)
	rest = append(append(append(rest, body[:start]...), empty...), body[end:]...)
	return rest, items, single, nil
}

// itemDecoder reads DynamoDB's JSON attribute values. Every method fails
// with errNotFast on anything outside strict JSON or DynamoDB's value
// shapes, and the response then goes to the SDK.
type itemDecoder struct {
	data []byte
	pos  int
	// names interns attribute names: the items of a page share them.
	names map[string]string
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

func (d *itemDecoder) itemList() ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	err := d.list(func() error {
		it, err := d.item()
		items = append(items, it)
		return err
	})
	if items == nil && err == nil {
		items = []map[string]types.AttributeValue{}
	}
	return items, err
}

// item reads a JSON object of attribute values.
func (d *itemDecoder) item() (map[string]types.AttributeValue, error) {
	if !d.consume('{') {
		return nil, errNotFast
	}
	it := make(map[string]types.AttributeValue, 16)
	d.skipSpace()
	if d.consume('}') {
		return it, nil
	}
	for {
		d.skipSpace()
		name, err := d.name()
		if err != nil {
			return nil, err
		}
		if _, dup := it[name]; dup {
			return nil, errNotFast
		}
		d.skipSpace()
		if !d.consume(':') {
			return nil, errNotFast
		}
		d.skipSpace()
		av, err := d.value()
		if err != nil {
			return nil, err
		}
		it[name] = av
		d.skipSpace()
		if d.consume('}') {
			return it, nil
		}
		if !d.consume(',') {
			return nil, errNotFast
		}
	}
}

// value reads one attribute value: an object with exactly one member, named
// by its DynamoDB type.
func (d *itemDecoder) value() (types.AttributeValue, error) {
	if !d.consume('{') {
		return nil, errNotFast
	}
	d.skipSpace()
	kind, esc, err := d.rawString()
	if err != nil || esc {
		return nil, errNotFast
	}
	d.skipSpace()
	if !d.consume(':') {
		return nil, errNotFast
	}
	d.skipSpace()
	var av types.AttributeValue
	switch string(kind) {
	case "S":
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		av = &types.AttributeValueMemberS{Value: s}
	case "N":
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		av = &types.AttributeValueMemberN{Value: s}
	case "B":
		b, err := d.binary()
		if err != nil {
			return nil, err
		}
		av = &types.AttributeValueMemberB{Value: b}
	case "BOOL":
		b, err := d.boolean()
		if err != nil {
			return nil, err
		}
		av = &types.AttributeValueMemberBOOL{Value: b}
	case "NULL":
		b, err := d.boolean()
		if err != nil {
			return nil, err
		}
		av = &types.AttributeValueMemberNULL{Value: b}
	case "M":
		m, err := d.item()
		if err != nil {
			return nil, err
		}
		av = &types.AttributeValueMemberM{Value: m}
	case "L":
		l := []types.AttributeValue{}
		if err := d.list(func() error {
			v, err := d.value()
			l = append(l, v)
			return err
		}); err != nil {
			return nil, err
		}
		av = &types.AttributeValueMemberL{Value: l}
	case "SS", "NS":
		set := []string{}
		if err := d.list(func() error {
			s, err := d.str()
			set = append(set, s)
			return err
		}); err != nil {
			return nil, err
		}
		if string(kind) == "SS" {
			av = &types.AttributeValueMemberSS{Value: set}
		} else {
			av = &types.AttributeValueMemberNS{Value: set}
		}
	case "BS":
		set := [][]byte{}
		if err := d.list(func() error {
			b, err := d.binary()
			set = append(set, b)
			return err
		}); err != nil {
			return nil, err
		}
		av = &types.AttributeValueMemberBS{Value: set}
	default:
		return nil, errNotFast
	}
	d.skipSpace()
	if !d.consume('}') {
		return nil, errNotFast
	}
	return av, nil
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

// skipAttributeValue steps over the payload of an attribute value of the
// given kind, checking it as value() would.
func (d *itemDecoder) skipAttributeValue(kind string) error {
	switch kind {
	case "NULL":
		_, err := d.boolean()
		return err
	case "M":
		_, err := d.item()
		return err
	case "L":
		return d.list(func() error { _, err := d.value(); return err })
	case "SS", "NS":
		return d.list(func() error { _, err := d.str(); return err })
	case "BS":
		return d.list(func() error { _, err := d.binary(); return err })
	}
	return errNotFast
}
