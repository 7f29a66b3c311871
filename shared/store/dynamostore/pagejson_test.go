package dynamostore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/edm"
)

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

// TestPageDecoderMatchesAttributePath reads Query pages both ways: through
// the page decoder (entities straight from the JSON) and through attribute
// maps and decodeItems. Every entity and size must agree, and every item
// the page decoder leaves as attributes must be one it should leave: a
// chunked entity's items or an item decodeItems refuses.
func TestPageDecoderMatchesAttributePath(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for round := range 200 {
		var items []item
		for i := range 1 + rng.IntN(6) {
			p := map[string]edm.Value{}
			for j := range rng.IntN(12) {
				p["P"+strconv.Itoa(j)] = randomEdm(rng)
			}
			pk := []string{"", "p", "名前", "a b"}[rng.IntN(4)]
			ei, err := buildItems(entityWith(pk, "r"+strconv.Itoa(i), p))
			if err != nil {
				t.Fatal(err)
			}
			it := ei.main
			switch rng.IntN(12) {
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
			}
			items = append(items, it)
		}
		w := &jsonWriter{rng: rng}
		w.b.WriteString(`{"Count":` + strconv.Itoa(len(items)) + `,"Items":[`)
		for i, it := range items {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.space()
			w.item(it)
		}
		w.b.WriteString(`],"ScannedCount":3}`)
		body := []byte(w.b.String())

		if diff := pageDecodedBothWays(body, true); diff != "" {
			t.Fatalf("round %d: %s\n%s", round, diff, body)
		}
	}
}

// pageDecodedBothWays compares the page decoder with the attribute path on
// one response body. Both must accept or both refuse it (when mustDecode,
// both must accept); every entity and size must agree, and every item the
// page decoder leaves as attributes must be one it should leave: a chunked
// entity's items or an item decodeItems refuses.
func pageDecodedBothWays(body []byte, mustDecode bool) string {
	var sink entitySink
	_, _, _, sinkErr := cutItems(body, "Items", &sink)
	_, plain, _, err := cutItems(body, "Items", nil)
	switch {
	case (sinkErr == nil) != (err == nil):
		return fmt.Sprintf("page decoder error %v; attribute path error %v", sinkErr, err)
	case err != nil && mustDecode:
		return fmt.Sprintf("refused: %v", err)
	case err != nil:
		return ""
	case len(sink.items) != len(plain):
		return fmt.Sprintf("%d page items; want %d", len(sink.items), len(plain))
	}
	for i, pi := range sink.items {
		want, wantErr := decodeItems(plain[i], nil)
		_, chunk := splitRowKey(stringAttr(plain[i], attrRowKey))
		chunked := chunk > 0 || metaOf(plain[i]).chunks >= 0
		switch {
		case pi.entity != nil && (wantErr != nil || chunked):
			return fmt.Sprintf("item %d: decoded %v; decodeItems says %v, chunked %v", i, pi.entity, wantErr, chunked)
		case pi.entity != nil && entityDiff(pi.entity, want) != "":
			return fmt.Sprintf("item %d: %s", i, entityDiff(pi.entity, want))
		case pi.entity != nil && pi.size != itemSize(plain[i]):
			return fmt.Sprintf("item %d: size %d; itemSize says %d", i, pi.size, itemSize(plain[i]))
		case pi.entity == nil && !reflect.DeepEqual(pi.it, plain[i]):
			return fmt.Sprintf("item %d: attributes differ", i)
		case pi.entity == nil && wantErr == nil && !chunked:
			return fmt.Sprintf("item %d: a plain entity left undecoded: %v", i, plain[i])
		}
	}
	return ""
}

// FuzzPageDecoder: for any response body, the page decoder and the
// attribute path agree.
func FuzzPageDecoder(f *testing.F) {
	f.Add([]byte(`{"Items":[{"PartitionKey":{"S":"p"},"RowKey":{"S":"r"},"Timestamp":{"S":"2024-05-06T07:08:09.1234567Z"},"$n":{"N":"3"},"A":{"S":"x"},"B@":{"N":"1"},"C":{"B":"AAE="},"D":{"BOOL":true}}]}`))
	f.Add([]byte(`{"Items":[{"PartitionKey":{"S":"p"},"RowKey":{"S":"r\u0001\u0031"},"$gen":{"S":"g"},"A@":{"S":"NaN"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if diff := pageDecodedBothWays(body, false); diff != "" {
			t.Fatal(diff)
		}
	})
}

// TestPageDecoderRejectsWhatTheSDKRejects: malformed JSON inside an item
// fails the fast path as a whole, so the SDK decides.
func TestPageDecoderRejectsWhatTheSDKRejects(t *testing.T) {
	for _, body := range []string{
		`{"Items":[{"PartitionKey":{"S":"p"},"A":{"S":"x"}]}`,
		`{"Items":[{"PartitionKey":{"S":"p"},"A":{"S":"x",}}]}`,
		`{"Items":[{"PartitionKey":{"S":"p"},"A":{"B":"@@"}}]}`,
		`{"Items":[{"PartitionKey":{"S":"p"},"A":{"X":"x"}}]}`,
		`{"Items":[{"PartitionKey":{"S":"p"},"A":{"M":{"x":{"S":1}}}}]}`,
	} {
		var sink entitySink
		if _, _, _, err := cutItems([]byte(body), "Items", &sink); err == nil {
			t.Errorf("%s: accepted; want the SDK to decide", body)
		}
	}
}

// TestEntitySinkPerCall: withEntitySink reaches the protocol of the one
// call it is given to, through a client tuneClient built, and no other
// call; a client without itemProtocol leaves the sink empty.
func TestEntitySinkPerCall(t *testing.T) {
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
