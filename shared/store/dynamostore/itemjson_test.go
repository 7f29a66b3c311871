package dynamostore

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// cannedHTTP answers every request with one status and body, without a
// network.
type cannedHTTP struct {
	status int
	body   []byte
}

func (c cannedHTTP) Do(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: c.status,
		Header:     http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:       io.NopCloser(bytes.NewReader(c.body)),
		Request:    r,
	}, nil
}

func cannedClient(status int, body []byte) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String("http://127.0.0.1:1"),
		Credentials:      credentials.NewStaticCredentialsProvider("k", "s", ""),
		HTTPClient:       cannedHTTP{status: status, body: body},
		RetryMaxAttempts: 1,
	})
}

// decodedBothWays runs GetItem, Query and Scan on a canned response, once
// through the SDK's decoder and once through itemProtocol, and reports the
// first difference in output or error.
func decodedBothWays(status int, body []byte) string {
	client := cannedClient(status, body)
	ctx := context.Background()
	table := aws.String("t")
	type call func(...func(*dynamodb.Options)) (any, error)
	calls := map[string]call{
		"GetItem": func(o ...func(*dynamodb.Options)) (any, error) {
			out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: keyItem("p", "r")}, o...)
			if out != nil {
				out.ResultMetadata = middleware.Metadata{}
			}
			return out, err
		},
		"Query": func(o ...func(*dynamodb.Options)) (any, error) {
			out, err := client.Query(ctx, &dynamodb.QueryInput{TableName: table}, o...)
			if out != nil {
				out.ResultMetadata = middleware.Metadata{}
			}
			return out, err
		},
		"Scan": func(o ...func(*dynamodb.Options)) (any, error) {
			out, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: table}, o...)
			if out != nil {
				out.ResultMetadata = middleware.Metadata{}
			}
			return out, err
		},
	}
	for name, c := range calls {
		want, wantErr := c()
		got, gotErr := c(withItemProtocol)
		if (wantErr == nil) != (gotErr == nil) {
			return fmt.Sprintf("%s: error %v; the SDK's %v", name, gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("%s: output\n%#v\nthe SDK's\n%#v", name, got, want)
		}
	}
	return ""
}

// jsonWriter renders attribute values as DynamoDB's JSON, with random
// whitespace and randomly escaped strings, to exercise every path of the
// parser.
type jsonWriter struct {
	rng *rand.Rand
	b   strings.Builder
}

func (w *jsonWriter) space() {
	if w.rng.IntN(4) == 0 {
		w.b.WriteString([]string{" ", "\n", "\t ", "\r\n  "}[w.rng.IntN(4)])
	}
}

func (w *jsonWriter) str(s string) {
	w.b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			w.b.WriteString(`\` + string(r))
		case r < 0x20:
			fmt.Fprintf(&w.b, `\u%04x`, r)
		case r == '/' && w.rng.IntN(2) == 0:
			w.b.WriteString(`\/`)
		case r > 0x7f && w.rng.IntN(3) == 0:
			if r > 0xffff {
				r1, r2 := utf16Pair(r)
				fmt.Fprintf(&w.b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(&w.b, `\u%04X`, r)
			}
		default:
			w.b.WriteRune(r)
		}
	}
	w.b.WriteByte('"')
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

func (w *jsonWriter) value(av types.AttributeValue) {
	w.b.WriteByte('{')
	w.space()
	member := func(kind string) {
		w.str(kind)
		w.space()
		w.b.WriteByte(':')
		w.space()
	}
	list := func(n int, each func(int)) {
		w.b.WriteByte('[')
		for i := range n {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.space()
			each(i)
			w.space()
		}
		w.b.WriteByte(']')
	}
	switch a := av.(type) {
	case *types.AttributeValueMemberS:
		member("S")
		w.str(a.Value)
	case *types.AttributeValueMemberN:
		member("N")
		w.str(a.Value)
	case *types.AttributeValueMemberB:
		member("B")
		w.str(base64.StdEncoding.EncodeToString(a.Value))
	case *types.AttributeValueMemberBOOL:
		member("BOOL")
		w.b.WriteString(strconv.FormatBool(a.Value))
	case *types.AttributeValueMemberNULL:
		member("NULL")
		w.b.WriteString(strconv.FormatBool(a.Value))
	case *types.AttributeValueMemberM:
		member("M")
		w.item(a.Value)
	case *types.AttributeValueMemberL:
		member("L")
		list(len(a.Value), func(i int) { w.value(a.Value[i]) })
	case *types.AttributeValueMemberSS:
		member("SS")
		list(len(a.Value), func(i int) { w.str(a.Value[i]) })
	case *types.AttributeValueMemberNS:
		member("NS")
		list(len(a.Value), func(i int) { w.str(a.Value[i]) })
	case *types.AttributeValueMemberBS:
		member("BS")
		list(len(a.Value), func(i int) { w.str(base64.StdEncoding.EncodeToString(a.Value[i])) })
	}
	w.space()
	w.b.WriteByte('}')
}

func (w *jsonWriter) item(it item) {
	w.b.WriteByte('{')
	first := true
	for name, av := range it {
		if !first {
			w.b.WriteByte(',')
		}
		first = false
		w.space()
		w.str(name)
		w.space()
		w.b.WriteByte(':')
		w.space()
		w.value(av)
		w.space()
	}
	w.b.WriteByte('}')
}

var sampleStrings = []string{"", "a", "héllo", "名前", "😀x", "quote\"back\\slash", "ctl\x01\n\t", "/path/", "\u2028", "x@", "Edm.Int64"}

func randomValue(rng *rand.Rand, depth int) types.AttributeValue {
	pick := func() string { return sampleStrings[rng.IntN(len(sampleStrings))] + strconv.Itoa(rng.IntN(100)) }
	blob := func() []byte {
		b := make([]byte, rng.IntN(8))
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return b
	}
	kinds := 10
	if depth > 2 {
		kinds = 5 // no nesting below three levels
	}
	switch rng.IntN(kinds) {
	case 0:
		return &types.AttributeValueMemberS{Value: pick()}
	case 1:
		return &types.AttributeValueMemberN{Value: strconv.FormatFloat(rng.NormFloat64()*1e6, 'g', -1, 64)}
	case 2:
		return &types.AttributeValueMemberB{Value: blob()}
	case 3:
		return &types.AttributeValueMemberBOOL{Value: rng.IntN(2) == 0}
	case 4:
		return &types.AttributeValueMemberNULL{Value: true}
	case 5:
		return &types.AttributeValueMemberM{Value: randomItem(rng, depth+1, rng.IntN(4))}
	case 6:
		l := make([]types.AttributeValue, rng.IntN(4))
		for i := range l {
			l[i] = randomValue(rng, depth+1)
		}
		return &types.AttributeValueMemberL{Value: l}
	case 7:
		return &types.AttributeValueMemberSS{Value: []string{pick(), pick() + "2"}}
	case 8:
		return &types.AttributeValueMemberNS{Value: []string{"1", "-2.5", "3E+10"}}
	default:
		return &types.AttributeValueMemberBS{Value: [][]byte{blob(), {1, 2, 3}}}
	}
}

func randomItem(rng *rand.Rand, depth, n int) item {
	it := item{}
	for i := range n {
		it[sampleStrings[rng.IntN(len(sampleStrings))]+strconv.Itoa(i)] = randomValue(rng, depth)
	}
	return it
}

// TestItemProtocolMatchesSDK decodes random responses both ways: items with
// every attribute type, nesting, escapes, Unicode and odd whitespace, next
// to the other members (Count, LastEvaluatedKey, ConsumedCapacity).
func TestItemProtocolMatchesSDK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		w := &jsonWriter{rng: rng}
		items := make([]item, rng.IntN(5))
		for i := range items {
			items[i] = randomItem(rng, 0, rng.IntN(12))
		}
		w.b.WriteByte('{')
		w.space()
		if rng.IntN(2) == 0 {
			w.b.WriteString(`"ConsumedCapacity":{"TableName":"t","CapacityUnits":2.5},`)
			w.space()
		}
		w.b.WriteString(`"Count":` + strconv.Itoa(len(items)) + `,"Items":`)
		w.space()
		w.b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.space()
			w.item(it)
		}
		w.b.WriteString(`],"Item":`)
		if len(items) > 0 {
			w.item(items[0])
		} else {
			w.b.WriteString("{}")
		}
		if rng.IntN(2) == 0 {
			w.b.WriteString(`,"LastEvaluatedKey":`)
			w.item(keyItem("p", "r"))
		}
		w.b.WriteString(`,"ScannedCount":7}`)
		if diff := decodedBothWays(200, []byte(w.b.String())); diff != "" {
			t.Fatalf("round %d: %s\nbody: %s", round, diff, w.b.String())
		}
	}
}

func TestItemProtocolEdges(t *testing.T) {
	cases := map[string]struct {
		status int
		body   string
	}{
		"Empty":            {200, `{}`},
		"EmptyBody":        {200, ``},
		"NoItem":           {200, `{"ConsumedCapacity":{"TableName":"t"}}`},
		"EmptyItems":       {200, `{"Count":0,"Items":[],"ScannedCount":0}`},
		"NullItems":        {200, `{"Items":null,"Item":null}`},
		"EscapedMember":    {200, `{"\u0049tems":[{"a":{"S":"x"}}],"Item":{"a":{"S":"y"}}}`},
		"DuplicateMember":  {200, `{"Items":[{"a":{"S":"x"}}],"Items":[]}`},
		"DuplicateAttr":    {200, `{"Items":[{"a":{"S":"x"},"a":{"N":"1"}}]}`},
		"UnknownType":      {200, `{"Items":[{"a":{"X":"x"}}],"Item":{"a":{"X":"x"}}}`},
		"TwoTypes":         {200, `{"Items":[{"a":{"S":"x","N":"1"}}]}`},
		"BadBase64":        {200, `{"Items":[{"a":{"B":"@@"}}],"Item":{"a":{"B":"@@"}}}`},
		"InvalidUTF8":      {200, "{\"Items\":[{\"a\":{\"S\":\"\xff\xfe\"}}],\"Item\":{\"a\xff\":{\"S\":\"\xc3\"}}}"},
		"LoneSurrogate":    {200, `{"Items":[{"a":{"S":"\ud800x"}}]}`},
		"TrailingGarbage":  {200, `{"Items":[]} x`},
		"TrailingComma":    {200, `{"Items":[{"a":{"S":"x"}},]}`},
		"Truncated":        {200, `{"Items":[{"a":{"S":"x"}}`},
		"NumberMembers":    {200, `{"Count":-1.5e3,"ScannedCount":2,"Items":[]}`},
		"ServerError":      {500, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"boom"}`},
		"ConditionalError": {400, `{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"no table"}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := decodedBothWays(c.status, []byte(c.body)); diff != "" {
				t.Error(diff)
			}
		})
	}
}

// FuzzItemProtocol: for any response body, the fast decoder gives what the
// SDK gives, or leaves the body to the SDK.
func FuzzItemProtocol(f *testing.F) {
	f.Add([]byte(`{"Count":1,"Items":[{"PartitionKey":{"S":"p"},"n":{"N":"1"},"b":{"B":"AAE="},"m":{"M":{"x":{"L":[{"NULL":true},{"BOOL":false}]}}}}],"ScannedCount":1}`))
	f.Add([]byte(`{"Item":{"s":{"SS":["a","b"]},"ns":{"NS":["1"]},"bs":{"BS":["AA=="]}}}`))
	f.Add([]byte(`{"Items":[{"a\u00e9":{"S":"\ud83d\ude00"}}],"LastEvaluatedKey":{"k":{"S":"v"}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) && len(body) > 64 {
			return // long binary noise exercises nothing new
		}
		if diff := decodedBothWays(200, body); diff != "" {
			t.Fatal(diff)
		}
	})
}

// BenchmarkDecodeQueryPage decodes a 1000-item Query page of the bench's
// entity, through the SDK and through itemProtocol.
func BenchmarkDecodeQueryPage(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	w := &jsonWriter{rng: rand.New(rand.NewPCG(0, 0))}
	w.b.WriteString(`{"Count":1000,"Items":[`)
	for i := range 1000 {
		if i > 0 {
			w.b.WriteByte(',')
		}
		it := item{
			"PartitionKey": str("q-000001"), "RowKey": str(fmt.Sprintf("%010d", i)), "Timestamp": str("2024-05-01T12:34:56.1234567Z"),
			"$n": &types.AttributeValueMemberN{Value: "10"}, "Name": str("bench"), "City": str("c123"),
			"Active": &types.AttributeValueMemberBOOL{Value: true}, "Count": &types.AttributeValueMemberN{Value: strconv.Itoa(rng.IntN(1 << 30))},
			"Total@": &types.AttributeValueMemberN{Value: "1234567890123456789"}, "Price": &types.AttributeValueMemberN{Value: "1234.25"},
			"Created@": str("2024-05-01T12:34:56.1234567Z"), "Ref@": str("0f8fad5b-d9cb-469f-a165-70867728950e"),
			"Blob": &types.AttributeValueMemberB{Value: []byte("abcdef")}, "Payload": str(strings.Repeat("x", 150)),
		}
		w.item(it)
	}
	w.b.WriteString(`],"ScannedCount":1000}`)
	body := []byte(w.b.String())
	client := cannedClient(200, body)
	for _, mode := range []struct {
		name string
		opts []func(*dynamodb.Options)
	}{{"SDK", nil}, {"ItemProtocol", []func(*dynamodb.Options){withItemProtocol}}} {
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				out, err := client.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("t")}, mode.opts...)
				if err != nil || len(out.Items) != 1000 {
					b.Fatalf("Query: %v, %d items", err, len(out.Items))
				}
			}
		})
	}
}

// brokenBody fails partway through, as a dropped connection does.
type brokenBody struct{ io.Reader }

func (brokenBody) Close() error { return nil }

type brokenHTTP struct{}

func (brokenHTTP) Do(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:       brokenBody{io.MultiReader(strings.NewReader(`{"Items":[`), iotestErrReader{})},
		Request:    r,
	}, nil
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// TestItemProtocolBodyReadError: a body that fails while being read fails
// the call, as the SDK's own decoder does.
func TestItemProtocolBodyReadError(t *testing.T) {
	client := tuneClient(dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1"),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""),
		HTTPClient:  brokenHTTP{}, RetryMaxAttempts: 1,
	})).(*dynamodb.Client)
	_, err := client.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("t")})
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("Query = %v; want the read error", err)
	}
}
