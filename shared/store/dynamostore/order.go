package dynamostore

import (
	"hash/fnv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/model"
)

// The order index (docs/dynamodb.md, "Ordered layout"): every entity's
// main item carries attrShard, one of orderShards values derived from its
// whole key, and attrOrder, its (PartitionKey, RowKey) encoded so that byte
// order is key order. A global secondary index on (attrShard, attrOrder)
// then holds each shard in key order, and a query merges the shards.
const (
	attrShard = "$s" // N: 0 ... orderShards-1; S in the shared table: prefix and number
	attrOrder = "$o" // B: orderKey, at most maxOrderBytes
	// orderIndex names the index; the shard count is part of the name, so a
	// different count would be a different index.
	orderIndex    = "order-20"
	orderShards   = 20
	maxOrderBytes = 1024 // DynamoDB's limit on a sort key
	// orderSep separates the keys in attrOrder. Stored keys never hold a
	// zero byte (Azure forbids control characters; the empty key is "\x01"),
	// so a PartitionKey that is a prefix of another sorts first, as it must.
	orderSep = '\x00'
)

// fullOrderKey is the untruncated order encoding of stored keys.
func fullOrderKey(pk, rk string) []byte {
	b := make([]byte, 0, len(pk)+1+len(rk))
	b = append(b, pk...)
	b = append(b, orderSep)
	return append(b, rk...)
}

// truncOrder cuts an encoding to the index's limit. A byte prefix keeps the
// order weakly: a < b implies trunc(a) <= trunc(b). Keys whose encodings
// share their first maxOrderBytes bytes tie in the index and are put in
// order by the reader (see merger.readShard).
func truncOrder(b []byte) []byte {
	if len(b) > maxOrderBytes {
		return b[:maxOrderBytes]
	}
	return b
}

// shardOf spreads entities over the shards by a hash of the whole key, so
// even a single hot partition writes to every index partition.
func shardOf(pk, rk string) int {
	h := fnv.New32a()
	h.Write([]byte(pk))
	h.Write([]byte{orderSep})
	h.Write([]byte(rk))
	return int(h.Sum32() % orderShards)
}

// orderAttrs returns the index attributes of the entity with stored keys pk
// and rk.
func orderAttrs(loc *location, pk, rk string) (shard, order types.AttributeValue) {
	return loc.shardValue(shardOf(pk, rk)),
		&types.AttributeValueMemberB{Value: truncOrder(fullOrderKey(pk, rk))}
}

// orderIndexDefinition is the index as CreateTable and UpdateTable take it.
func orderIndexDefinition() types.GlobalSecondaryIndex {
	return types.GlobalSecondaryIndex{
		IndexName: aws.String(orderIndex),
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrShard), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(attrOrder), KeyType: types.KeyTypeRange},
		},
		// ALL: a query reads whole entities from the index, so a filter on
		// any property costs no read of the table.
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
	}
}

// orderAttributeDefinitions types the shared table's index keys: the shard
// is a string there, the prefix and the number (a number in a placement,
// whose index an earlier release created).
func orderAttributeDefinitions() []types.AttributeDefinition {
	return []types.AttributeDefinition{
		{AttributeName: aws.String(attrShard), AttributeType: types.ScalarAttributeTypeS},
		{AttributeName: aws.String(attrOrder), AttributeType: types.ScalarAttributeTypeB},
	}
}

// orderBounds turns a query's PartitionKey bounds and cursor into inclusive
// bounds on attrOrder (nil: unbounded). Each bound may admit a few keys
// outside the query (truncated encodings, an exclusive bound's own key);
// the reader drops those. empty reports that no key can match.
func orderBounds(loc *location, pkb model.Bounds, after *cursorKeys) (lo, hi []byte, empty bool) {
	if l := pkb.Lower; l != nil {
		// PartitionKey >= v: every encoding starts with v and the separator
		// or with something larger. PartitionKey > v: past v's own
		// encodings, which all continue with the zero separator.
		b := []byte(loc.pk(l.Value))
		if !l.Inclusive {
			b = append(b, orderSep+1)
		}
		lo = truncOrder(b)
	}
	if after != nil {
		// Strictly after the cursor: the smallest longer string.
		b := truncOrder(append(fullOrderKey(after.pk, after.rk), 0))
		if lo == nil || string(b) > string(lo) {
			lo = b
		}
	}
	if u := pkb.Upper; u != nil {
		// PartitionKey < v: encodings below v. PartitionKey <= v: below
		// v followed by anything above the separator.
		b := []byte(loc.pk(u.Value))
		if u.Inclusive {
			b = append(b, orderSep+1)
		}
		hi = truncOrder(b)
	}
	if lo != nil && hi != nil && string(lo) > string(hi) {
		return nil, nil, true
	}
	return lo, hi, false
}

// cursorKeys is a cursor in stored form.
type cursorKeys struct{ pk, rk string }
