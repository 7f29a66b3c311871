package dynamostore

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/tablebridge/tablebridge/shared/edm"
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

// pageBothWays runs Query and Scan on a canned response, once through the
// SDK alone (the reference: its attribute values, then decodeItems) and once
// through pageProtocol with an entity sink, and reports the first
// difference. The page decoder must give the same entities and sizes and
// the SDK the same rest of the output, or leave the response to the SDK,
// which must then give exactly the reference's output. When strict, a page
// whose items decodeItems all takes as single-item entities must be decoded.
func pageBothWays(status int, body []byte, strict bool) string {
	plain, tuned := cannedClient(status, body), tuneClient(cannedClient(status, body))
	ctx := context.Background()
	table := aws.String("t")
	calls := map[string]func(API, ...func(*dynamodb.Options)) (any, []item, error){
		"Query": func(c API, o ...func(*dynamodb.Options)) (any, []item, error) {
			out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: table}, o...)
			if out == nil {
				return nil, nil, err
			}
			items := out.Items
			out.Items, out.ResultMetadata = nil, middleware.Metadata{}
			return out, items, err
		},
		"Scan": func(c API, o ...func(*dynamodb.Options)) (any, []item, error) {
			out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: table}, o...)
			if out == nil {
				return nil, nil, err
			}
			items := out.Items
			out.Items, out.ResultMetadata = nil, middleware.Metadata{}
			return out, items, err
		},
	}
	for name, call := range calls {
		want, wantItems, wantErr := call(plain)
		var sink entitySink
		got, gotItems, gotErr := call(tuned, withEntitySink(&sink))
		if (wantErr == nil) != (gotErr == nil) {
			return fmt.Sprintf("%s: error %v; the SDK's %v", name, gotErr, wantErr)
		}
		if wantErr != nil {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("%s: output\n%#v\nthe SDK's\n%#v", name, got, want)
		}
		if !sink.decoded {
			if !reflect.DeepEqual(gotItems, wantItems) {
				return fmt.Sprintf("%s: items left to the SDK differ", name)
			}
			if strict && allPlainEntities(wantItems) {
				return fmt.Sprintf("%s: a page of plain entities left to the SDK", name)
			}
			continue
		}
		if len(gotItems) != 0 || len(sink.items) != len(wantItems) {
			return fmt.Sprintf("%s: %d decoded and %d SDK items; want %d", name, len(sink.items), len(gotItems), len(wantItems))
		}
		for i, pi := range sink.items {
			want, err := decodeItems(testLoc, wantItems[i], nil)
			switch {
			case err != nil || !plainEntity(wantItems[i]):
				return fmt.Sprintf("%s: item %d decoded as %v; decodeItems says %v", name, i, pi.entity, err)
			case entityDiff(pi.entity, want) != "":
				return fmt.Sprintf("%s: item %d: %s", name, i, entityDiff(pi.entity, want))
			case pi.size != itemSize(wantItems[i]):
				return fmt.Sprintf("%s: item %d: size %d; itemSize says %d", name, i, pi.size, itemSize(wantItems[i]))
			}
		}
	}
	return ""
}

// plainEntity reports whether the pager would read an item as a
// single-item entity: neither a chunked entity's item nor one decodeItems
// refuses.
func plainEntity(it item) bool {
	_, chunk := splitRowKey(stringAttr(it, attrRowKey))
	_, err := decodeItems(testLoc, it, nil)
	return err == nil && chunk == 0 && metaOf(it).chunks < 0
}

func allPlainEntities(items []item) bool {
	for _, it := range items {
		if !plainEntity(it) {
			return false
		}
	}
	return true
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

// randomEdm draws a value of every Edm type, edge values included.
func randomEdm(rng *rand.Rand) edm.Value {
	switch rng.IntN(12) {
	case 0:
		return edm.NewString([]string{"", "héllo", "名前😀", `q"b\`, "2024-05-01T12:34:56.1234567Z", "NaN"}[rng.IntN(6)])
	case 1:
		return edm.NewBinary([]byte{0, 1, 255}[:rng.IntN(4)])
	case 2:
		return edm.NewBoolean(rng.IntN(2) == 0)
	case 3:
		return edm.NewInt32([]int32{0, -7, math.MaxInt32, math.MinInt32}[rng.IntN(4)])
	case 4:
		return edm.NewInt64([]int64{0, 7, math.MaxInt64, math.MinInt64}[rng.IntN(4)])
	case 5:
		return edm.NewDouble([]float64{2.5, 3, 0, math.NaN(), math.Inf(-1), math.Copysign(0, -1), 5e-324, math.MaxFloat64, 1e20, 3e6}[rng.IntN(10)])
	case 6:
		return edm.NewDateTime(time.Date(1601+rng.IntN(8000), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, rng.IntN(60), rng.IntN(1e7)*100, time.UTC))
	case 7:
		return edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833")
	default:
		return edm.NewString(strconv.Itoa(rng.IntN(1000)))
	}
}

// randomEntityItem is the item of an entity of random properties and keys,
// or now and then one the page decoder must leave to the SDK.
func randomEntityItem(t testing.TB, rng *rand.Rand, i int) item {
	p := map[string]edm.Value{}
	for j := range rng.IntN(12) {
		p["P"+strconv.Itoa(j)] = randomEdm(rng)
	}
	pk := []string{"", "p", "名前", "a b"}[rng.IntN(4)]
	ei, err := buildItems(testLoc, entityWith(pk, "r"+strconv.Itoa(i), p))
	if err != nil {
		t.Fatal(err)
	}
	it := ei.main
	switch rng.IntN(30) {
	case 0: // a chunked layout's main item
		it[attrChunks] = &types.AttributeValueMemberN{Value: "1"}
		it[attrGen] = str("0123456789abcdef")
	case 1: // an overflow item
		it[attrRowKey] = str(chunkRowKey(stringAttr(it, attrRowKey), 1))
	case 2: // another tool's attribute types
		it["M"] = &types.AttributeValueMemberM{Value: item{"x": str("y")}}
		it["L"] = &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberNULL{Value: true}}}
	case 3: // a property under both names
		it["Dup"] = str("a")
		it["Dup@"] = &types.AttributeValueMemberN{Value: "1"}
	case 4:
		delete(it, attrTimestamp)
	case 5:
		it["Bad@"] = str("not a double")
	case 6:
		it["Flag@"] = &types.AttributeValueMemberBOOL{Value: true}
	case 7: // anything at all
		return randomItem(rng, 0, rng.IntN(12))
	}
	return it
}

// TestPageDecoderMatchesSDK reads random Query and Scan pages both ways:
// entities of every Edm type with edge values, now and then an item the
// page decoder must leave to the SDK, escapes, Unicode and odd whitespace,
// next to the other members (Count, LastEvaluatedKey, ConsumedCapacity).
func TestPageDecoderMatchesSDK(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		w := &jsonWriter{rng: rng}
		items := make([]item, rng.IntN(6))
		for i := range items {
			items[i] = randomEntityItem(t, rng, i)
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
		w.b.WriteByte(']')
		if rng.IntN(2) == 0 {
			w.b.WriteString(`,"LastEvaluatedKey":`)
			w.item(keyItem("p", "r"))
		}
		w.b.WriteString(`,"ScannedCount":7}`)
		if diff := pageBothWays(200, []byte(w.b.String()), true); diff != "" {
			t.Fatalf("round %d: %s\nbody: %s", round, diff, w.b.String())
		}
	}
}

const sampleEntityJSON = `{"PartitionKey":{"S":"p"},"RowKey":{"S":"r"},"Timestamp":{"S":"2024-05-06T07:08:09.1234567Z"},"$n":{"N":"3"},"A":{"S":"x"},"B@":{"N":"1"},"C":{"B":"AAE="},"D":{"BOOL":true}}`

func TestPageDecoderEdges(t *testing.T) {
	t.Parallel()
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
		"Entity":           {200, `{"Count":1,"Items":[` + sampleEntityJSON + `]}`},
		"EntityTwice":      {200, `{"Items":[` + sampleEntityJSON + `,` + sampleEntityJSON + `]}`},
		"KeyTwice":         {200, `{"Items":[{"PartitionKey":{"S":"p"},"PartitionKey":{"S":"q"},"RowKey":{"S":"r"},"Timestamp":{"S":"2024-05-06T07:08:09.1234567Z"}}]}`},
		"BadEntityJSON":    {200, `{"Items":[{"PartitionKey":{"S":"p"},"A":{"S":"x",}}]}`},
		"NestedBadJSON":    {200, `{"Items":[{"PartitionKey":{"S":"p"},"A":{"M":{"x":{"S":1}}}}]}`},
		"ConditionalError": {400, `{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"no table"}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := pageBothWays(c.status, []byte(c.body), false); diff != "" {
				t.Error(diff)
			}
		})
	}
}

// FuzzPageDecoder: for any response body, the page decoder gives what the
// SDK and decodeItems give, or leaves the body to the SDK.
func FuzzPageDecoder(f *testing.F) {
	f.Add([]byte(`{"Items":[` + sampleEntityJSON + `]}`))
	f.Add([]byte(`{"Items":[{"PartitionKey":{"S":"p"},"RowKey":{"S":"r\u0001\u0031"},"$gen":{"S":"g"},"A@":{"S":"NaN"}}]}`))
	f.Add([]byte(`{"Count":1,"Items":[{"PartitionKey":{"S":"p"},"n":{"N":"1"},"b":{"B":"AAE="},"m":{"M":{"x":{"L":[{"NULL":true},{"BOOL":false}]}}}}],"ScannedCount":1}`))
	f.Add([]byte(`{"Items":[{"a\u00e9":{"S":"\ud83d\ude00"}}],"LastEvaluatedKey":{"k":{"S":"v"}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) && len(body) > 64 {
			return // long binary noise exercises nothing new
		}
		if diff := pageBothWays(200, body, false); diff != "" {
			t.Fatal(diff)
		}
	})
}

// TestEntitySinkPerCall: withEntitySink reaches the protocol of the one
// call it is given to, through a client tuneClient built, and no other
// call; a client without itemProtocol leaves the sink empty.
func TestEntitySinkPerCall(t *testing.T) {
	t.Parallel()
	body := []byte(`{"Count":1,"Items":[{"PartitionKey":{"S":"p"},"RowKey":{"S":"r"},"Timestamp":{"S":"2024-01-01T00:00:00.0000000Z"},"N":{"N":"1"}}],"ScannedCount":1}`)
	ctx := context.Background()
	tuned := tuneClient(cannedClient(200, body))
	var sink entitySink
	out, err := tuned.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("t")}, withEntitySink(&sink))
	if err != nil {
		t.Fatal(err)
	}
	if !sink.decoded || len(sink.items) != 1 || sink.items[0].entity == nil || len(out.Items) != 0 {
		t.Fatalf("sink %+v, SDK items %d: want the entity in the sink", sink, len(out.Items))
	}
	if out, err := tuned.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("t")}); err != nil || len(out.Items) != 1 || len(sink.items) != 1 {
		t.Fatalf("a call without the option: %v, %d SDK items", err, len(out.Items))
	}
	var plain entitySink
	if out, err := cannedClient(200, body).Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("t")}, withEntitySink(&plain)); err != nil || plain.decoded || len(out.Items) != 1 {
		t.Fatalf("untuned client: %v, sink %+v, %d SDK items", err, plain, len(out.Items))
	}
}

// BenchmarkDecodeQueryPage decodes a 1000-entity Query page of the bench's
// entity into entities, through the SDK and decodeItems and through the
// page decoder.
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
	for _, client := range []struct {
		name string
		api  API
	}{{"SDK", cannedClient(200, body)}, {"PageDecoder", tuneClient(cannedClient(200, body))}} {
		b.Run(client.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var sink entitySink
				out, err := client.api.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("t")}, withEntitySink(&sink))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for _, pi := range sink.pageItems(out.Items) {
					if pi.entity == nil {
						if pi.entity, err = decodeItems(testLoc, pi.it, nil); err != nil {
							b.Fatal(err)
						}
						pi.size = itemSize(pi.it)
					}
					n++
				}
				if n != 1000 {
					b.Fatalf("%d entities", n)
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

// TestPageProtocolBodyReadError: a body that fails while being read fails
// the call, as the SDK's own decoder does.
func TestPageProtocolBodyReadError(t *testing.T) {
	t.Parallel()
	client := tuneClient(dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1"),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""),
		HTTPClient:  brokenHTTP{}, RetryMaxAttempts: 1,
	}))
	var sink entitySink
	_, err := client.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("t")}, withEntitySink(&sink))
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("Query = %v; want the read error", err)
	}
}
