package dynamolocal

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// RestoreCopy stands in for DynamoDB's RestoreTableToPointInTime, which
// DynamoDB Local does not implement (it answers UnknownOperationException):
// it creates the table to with from's keys and, with indexes, its global
// secondary indexes (a restore keeps them unless told otherwise), and
// copies every item of from into it, as they are now. Like a restore, it
// copies no TTL, streams, tags or point-in-time recovery setting.
func RestoreCopy(ctx context.Context, client *dynamodb.Client, from, to string, indexes bool) error {
	desc, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(from)})
	if err != nil {
		return fmt.Errorf("restore %s: %w", from, err)
	}
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(to),
		KeySchema:            desc.Table.KeySchema,
		AttributeDefinitions: desc.Table.AttributeDefinitions,
		BillingMode:          types.BillingModePayPerRequest,
	}
	if indexes {
		for _, gsi := range desc.Table.GlobalSecondaryIndexes {
			in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
				IndexName: gsi.IndexName, KeySchema: gsi.KeySchema, Projection: gsi.Projection})
		}
	} else {
		// Only key attributes may be defined without an index using them.
		in.AttributeDefinitions = nil
		for _, ad := range desc.Table.AttributeDefinitions {
			for _, k := range desc.Table.KeySchema {
				if aws.ToString(k.AttributeName) == aws.ToString(ad.AttributeName) {
					in.AttributeDefinitions = append(in.AttributeDefinitions, ad)
				}
			}
		}
	}
	if _, err := client.CreateTable(ctx, in); err != nil {
		return fmt.Errorf("restore %s into %s: %w", from, to, err)
	}
	scan := &dynamodb.ScanInput{TableName: aws.String(from), ConsistentRead: aws.Bool(true)}
	for {
		page, err := client.Scan(ctx, scan)
		if err != nil {
			return fmt.Errorf("restore %s: %w", from, err)
		}
		for items := page.Items; len(items) > 0; {
			batch := items[:min(len(items), 25)]
			items = items[len(batch):]
			reqs := make([]types.WriteRequest, len(batch))
			for i, it := range batch {
				reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
			}
			out, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{to: reqs}})
			if err == nil && len(out.UnprocessedItems) > 0 {
				err = fmt.Errorf("%d items unprocessed", len(out.UnprocessedItems[to])) // DynamoDB Local does not throttle
			}
			if err != nil {
				return fmt.Errorf("restore %s into %s: %w", from, to, err)
			}
		}
		if page.LastEvaluatedKey == nil {
			return nil
		}
		scan.ExclusiveStartKey = page.LastEvaluatedKey
	}
}
