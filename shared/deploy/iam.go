package deploy

import (
	"slices"

	"github.com/tablebridge/tablebridge/shared/operation"
)

// DynamoDB IAM actions by store method, split by the table they touch: the
// catalog table, or the data tables (the shared table and its index, and
// the account's per-table tables of earlier releases). They follow
// shared/store/dynamostore in the shared layout, which template.yaml
// deploys: the catalog holds table names, ids, states, ACLs, service
// properties and purge items; entity operations look their table up in it;
// transactions (TransactWriteItems, TransactGetItems) are authorized by the
// PutItem, UpdateItem, DeleteItem and GetItem of each item ("Using IAM with
// DynamoDB transactions"), and the store uses no ConditionCheck. Nothing a
// request does creates, deletes or updates a DynamoDB table: the purge
// function (PurgeActions) deletes what Delete Table leaves.
var storeActions = map[operation.StoreMethod]struct{ catalog, data []string }{
	operation.StoreGetTable:             {catalog: []string{"dynamodb:GetItem"}},
	operation.StoreGetServiceProperties: {catalog: []string{"dynamodb:GetItem"}},
	operation.StoreQueryTables:          {catalog: []string{"dynamodb:Query"}},
	operation.StoreSetTableACL:          {catalog: []string{"dynamodb:UpdateItem"}},
	operation.StoreSetServiceProperties: {catalog: []string{"dynamodb:PutItem"}},
	// One conditional PutItem of the entry; a name a per-table create or
	// delete left half way goes to the purge in a TransactWriteItems of
	// two PutItems.
	operation.StoreCreateTable: {catalog: []string{"dynamodb:PutItem"}},
	// Read the entry, then one TransactWriteItems: mark it deleted
	// (UpdateItem) and add the purge item (PutItem).
	operation.StoreDeleteTable: {catalog: []string{"dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem"}},
	// The table's look-up (catalog GetItem), then GetItem, plus
	// TransactGetItems for an entity split over items.
	operation.StoreGetEntity: {catalog: []string{"dynamodb:GetItem"}, data: []string{"dynamodb:GetItem"}},
	// Query (one partition, or the order index's shards), Scan on a
	// per-table table without the index, and a GetItem that tells a missing
	// per-table table from an empty result.
	operation.StoreQueryEntities: {catalog: []string{"dynamodb:GetItem"}, data: []string{"dynamodb:Query", "dynamodb:Scan", "dynamodb:GetItem"}},
	// PutItem, UpdateItem, DeleteItem, or TransactWriteItems of those; the
	// slow path of large entities reads the stored version first (GetItem,
	// TransactGetItems).
	operation.StoreWrite: {catalog: []string{"dynamodb:GetItem"}, data: []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:GetItem"}},
}

// PurgeActions are the purge function's DynamoDB actions: on the catalog,
// find due purges (Query), lease them (UpdateItem) and end them
// (DeleteItem); on the shared table, read a deleted table's shards from the
// order index (Query) and delete its items (BatchWriteItem); on the
// per-table tables, delete a deleted one's DynamoDB table after lifting its
// deletion protection (UpdateTable, DescribeTable, DeleteTable).
func PurgeActions() (catalog, shared, perTable []string) {
	return []string{"dynamodb:DeleteItem", "dynamodb:DescribeTable", "dynamodb:Query", "dynamodb:UpdateItem"},
		[]string{"dynamodb:BatchWriteItem", "dynamodb:Query"},
		[]string{"dynamodb:DeleteTable", "dynamodb:DescribeTable", "dynamodb:UpdateTable"}
}

// initCatalogActions are what every function needs at init:
// dynamostore.New checks that the catalog table exists and is ACTIVE (or
// UPDATING, which still serves data).
var initCatalogActions = []string{"dynamodb:DescribeTable"}

// DynamoDBActions returns the IAM actions the function needs on the catalog
// table and on the account's data tables, sorted. template.yaml grants
// exactly these (a test compares them).
func (f Function) DynamoDBActions() (catalog, data []string) {
	catalog = slices.Clone(initCatalogActions)
	for _, m := range f.StoreMethods() {
		a := storeActions[m]
		catalog = append(catalog, a.catalog...)
		data = append(data, a.data...)
	}
	slices.Sort(catalog)
	slices.Sort(data)
	return slices.Compact(catalog), slices.Compact(data)
}

// SharedTableActions splits the function's data actions (DynamoDBActions)
// by resource in the shared table: the table itself takes them all but
// Scan, which the store never runs on it (a Scan is only the fallback of a
// per-table table without the order index), and its order index only
// Query.
func (f Function) SharedTableActions() (table, index []string) {
	_, data := f.DynamoDBActions()
	for _, a := range data {
		if a == "dynamodb:Scan" {
			continue
		}
		table = append(table, a)
		if a == "dynamodb:Query" {
			index = append(index, a)
		}
	}
	return table, index
}
