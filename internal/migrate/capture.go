package migrate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"

	"github.com/tablebridge/tablebridge/shared/model"
)

// capturePolicy hands the raw body of a query response to the caller that
// asked for it through the request context, and gives the SDK an empty page
// in its place.
//
// aztables decodes a query page into []map[string]any and encodes every
// entity again with encoding/json before ListEntitiesResponse.Entities sees
// it. That loses the Edm type of an integral Double: Azure writes 1.0 or
// -0.0 without an annotation (a finite Double needs none), and the
// re-encoded "1" or "-0" then reads as an Int32. Reading the bytes the
// service sent keeps every type. The SDK still does the rest: signing,
// retries with back-off, status handling and the continuation headers,
// which the empty body leaves untouched. Replacing the body also spares the
// SDK decoding and re-encoding a page nobody reads.
//
// The policy sits among the per-call policies, outside the retry loop, so it
// sees only the final answer, already read into memory by azcore.
type capturePolicy struct{}

type captureKey struct{}

// captured receives one response body.
type captured struct {
	body []byte
}

// emptyPage is what the SDK decodes instead of the captured page.
const emptyPage = `{"value":[]}`

func (capturePolicy) Do(req *policy.Request) (*http.Response, error) {
	ctx := req.Raw().Context()
	if _, ok := ctx.Value(emptyPartitionKeyKey{}).(bool); ok {
		if err := restoreEmptyPartitionKey(req); err != nil {
			return nil, err
		}
	}
	resp, err := req.Next()
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	slot, ok := ctx.Value(captureKey{}).(*captured)
	if !ok {
		return resp, nil
	}
	body, err := runtime.Payload(resp)
	if err != nil {
		return resp, err
	}
	slot.body = body
	resp.Body = io.NopCloser(strings.NewReader(emptyPage))
	resp.ContentLength = int64(len(emptyPage))
	return resp, nil
}

// The empty PartitionKey. Azure allows it ("Understanding the Table service
// data model": PartitionKey and RowKey may be empty strings), but aztables
// 1.4.1 refuses to build an update URL for it ("parameter partitionKey
// cannot be empty"), so it can neither upsert such an entity nor put one in
// a transaction. Upsert therefore gives the SDK a placeholder key, unique to
// this process, and this policy puts the empty key back into the request
// before it is signed and sent: in the operation URLs,
// (PartitionKey='placeholder',...), and in the entity bodies,
// "PartitionKey":"placeholder".
type emptyPartitionKeyKey struct{}

var emptyPartitionKeyPlaceholder = func() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "tablebridge-empty-partitionkey-" + hex.EncodeToString(b[:])
}()

func withEmptyPartitionKey(ctx context.Context) context.Context {
	return context.WithValue(ctx, emptyPartitionKeyKey{}, true)
}

var (
	placeholderInURL  = []byte("PartitionKey='" + emptyPartitionKeyPlaceholder + "'")
	emptyInURL        = []byte("PartitionKey=''")
	placeholderInBody = []byte(`"PartitionKey":"` + emptyPartitionKeyPlaceholder + `"`)
	emptyInBody       = []byte(`"PartitionKey":""`)
)

func restoreEmptyPartitionKey(req *policy.Request) error {
	raw := req.Raw()
	if strings.Contains(raw.URL.Path, emptyPartitionKeyPlaceholder) {
		raw.URL.Path = strings.ReplaceAll(raw.URL.Path, string(placeholderInURL), string(emptyInURL))
		raw.URL.RawPath = strings.ReplaceAll(raw.URL.RawPath, string(placeholderInURL), string(emptyInURL))
	}
	body := req.Body()
	if body == nil {
		return nil
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	data = restoreEmptyPartitionKeyInBody(data)
	return req.SetBody(streaming.NopCloser(bytes.NewReader(data)), raw.Header.Get("Content-Type"))
}

// restoreEmptyPartitionKeyInBody puts the empty key back into a request
// body: a single entity's JSON, or a transaction's multipart body. In a
// transaction each operation declares the length of its body
// (Content-Length), and a server must refuse an operation whose declared
// length is not its body's, so an operation whose body loses the
// placeholder declares its new length.
func restoreEmptyPartitionKeyInBody(data []byte) []byte {
	var out []byte
	for {
		header := bytes.Index(data, contentLengthLine)
		if header < 0 {
			break
		}
		valueStart := header + len(contentLengthLine)
		valueEnd := valueStart + bytes.IndexByte(data[valueStart:], '\r')
		bodyStart := bytes.Index(data[valueStart:], headerEnd)
		if valueEnd < valueStart || bodyStart < 0 {
			break
		}
		bodyStart += valueStart + len(headerEnd)
		bodyEnd := bodyStart + bytes.Index(data[bodyStart:], partDelimiter)
		if bodyEnd < bodyStart {
			bodyEnd = len(data)
		}
		declared, err := strconv.Atoi(string(bytes.TrimSpace(data[valueStart:valueEnd])))
		if err != nil {
			break
		}
		shrink := bytes.Count(data[bodyStart:bodyEnd], placeholderInBody) * (len(placeholderInBody) - len(emptyInBody))
		out = append(out, replacePlaceholders(data[:valueStart])...)
		out = append(out, ' ')
		out = strconv.AppendInt(out, int64(declared-shrink), 10)
		out = append(out, replacePlaceholders(data[valueEnd:bodyEnd])...)
		data = data[bodyEnd:]
	}
	return append(out, replacePlaceholders(data)...)
}

var (
	contentLengthLine = []byte("\r\nContent-Length:")
	headerEnd         = []byte("\r\n\r\n")
	partDelimiter     = []byte("\r\n--")
)

func replacePlaceholders(data []byte) []byte {
	data = bytes.ReplaceAll(data, placeholderInURL, emptyInURL)
	return bytes.ReplaceAll(data, placeholderInBody, emptyInBody)
}

// withCapture returns a context under which the policy stores the query
// response body into the returned slot.
func withCapture(ctx context.Context) (context.Context, *captured) {
	slot := &captured{}
	return context.WithValue(ctx, captureKey{}, slot), slot
}

// decodePage decodes the entities of a Query Entities response body, at any
// JSON metadata level: {"odata.metadata": ..., "value": [ {entity}, ... ]}.
// splitValue finds each entity's bytes and DecodeEntity decodes them.
func decodePage(body []byte) ([]*model.Entity, error) {
	raws, err := splitValue(body)
	if err != nil {
		return nil, fmt.Errorf("query response: %w", err)
	}
	entities := make([]*model.Entity, len(raws))
	for i, raw := range raws {
		e, err := DecodeEntity(raw)
		if err != nil {
			return nil, fmt.Errorf("query response entity %d: %w", i, err)
		}
		entities[i] = e
	}
	return entities, nil
}

// splitValue returns the elements of the top-level "value" array of a JSON
// object, as slices of body. It checks structure only (strings, nesting,
// commas); edm.DecodeObject checks each element fully. One pass without
// copies, where encoding/json with json.RawMessage would decode every
// element twice and copy it.
func splitValue(body []byte) ([][]byte, error) {
	sc := jsonScanner{b: body}
	sc.space()
	if !sc.consume('{') {
		return nil, sc.fail("expected an object")
	}
	var out [][]byte
	found := false
	sc.space()
	if sc.consume('}') {
		return nil, sc.fail(`no "value" member`)
	}
	for {
		sc.space()
		start := sc.i
		if err := sc.skipString(); err != nil {
			return nil, err
		}
		name := body[start:sc.i]
		sc.space()
		if !sc.consume(':') {
			return nil, sc.fail("expected ':'")
		}
		sc.space()
		if string(name) == `"value"` {
			if found {
				return nil, sc.fail(`"value" given twice`)
			}
			found = true
			if !sc.consume('[') {
				return nil, sc.fail(`"value" is not an array`)
			}
			sc.space()
			if !sc.consume(']') {
				for {
					sc.space()
					start := sc.i
					if err := sc.skipValue(0); err != nil {
						return nil, err
					}
					out = append(out, body[start:sc.i])
					sc.space()
					if sc.consume(']') {
						break
					}
					if !sc.consume(',') {
						return nil, sc.fail("expected ',' or ']'")
					}
				}
			}
		} else if err := sc.skipValue(0); err != nil {
			return nil, err
		}
		sc.space()
		if sc.consume('}') {
			break
		}
		if !sc.consume(',') {
			return nil, sc.fail("expected ',' or '}'")
		}
	}
	sc.space()
	if sc.i != len(body) {
		return nil, sc.fail("data after the object")
	}
	if !found {
		return nil, sc.fail(`no "value" member`)
	}
	return out, nil
}

type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) fail(msg string) error {
	return fmt.Errorf("malformed JSON at byte %d: %s", s.i, msg)
}

func (s *jsonScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScanner) consume(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// skipString moves past a string starting at s.i.
func (s *jsonScanner) skipString() error {
	if !s.consume('"') {
		return s.fail("expected a string")
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			s.i++
			return nil
		case '\\':
			s.i += 2
		default:
			s.i++
		}
	}
	return s.fail("unterminated string")
}

// maxDepth bounds nesting; entities are flat, so anything deep is garbage.
const maxDepth = 64

// skipValue moves past any JSON value starting at s.i.
func (s *jsonScanner) skipValue(depth int) error {
	if depth > maxDepth {
		return s.fail("nested too deeply")
	}
	if s.i >= len(s.b) {
		return s.fail("expected a value")
	}
	switch c := s.b[s.i]; c {
	case '"':
		return s.skipString()
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		s.i++
		s.space()
		if s.consume(closer) {
			return nil
		}
		for {
			s.space()
			if c == '{' {
				if err := s.skipString(); err != nil {
					return err
				}
				s.space()
				if !s.consume(':') {
					return s.fail("expected ':'")
				}
				s.space()
			}
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
			s.space()
			if s.consume(closer) {
				return nil
			}
			if !s.consume(',') {
				return s.fail("expected ',' or a closing bracket")
			}
		}
	default:
		// A number or a literal: up to the next delimiter.
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if s.i == start {
					return s.fail("expected a value")
				}
				return nil
			}
			s.i++
		}
		if s.i == start {
			return s.fail("expected a value")
		}
		return nil
	}
}
