package lambdafn

import (
	"slices"

	"github.com/tablebridge/tablebridge/shared/operation"
)

// DynamoDB IAM actions by store method, split by the table they touch: the
// catalog table, or the account's data tables (one per Azure table). They
// follow shared/store/dynamostore: the catalog holds table names, states,
// ACLs and service properties; transactions (TransactWriteItems,
// TransactGetItems) are authorized by the PutItem, UpdateItem, DeleteItem
// and GetItem of each item ("Using IAM with DynamoDB transactions"), and the
// store uses no ConditionCheck.
var storeActions = map[StoreMethod]struct{ catalog, data []string }{
	operation.StoreGetTable:             {catalog: []string{"dynamodb:GetItem"}},
	operation.StoreGetServiceProperties: {catalog: []string{"dynamodb:GetItem"}},
	operation.StoreQueryTables:          {catalog: []string{"dynamodb:Query"}},
	operation.StoreSetTableACL:          {catalog: []string{"dynamodb:UpdateItem"}},
	operation.StoreSetServiceProperties: {catalog: []string{"dynamodb:PutItem"}},
	// Claim the name (PutItem), take over a stale claim or mark it active
	// (UpdateItem), release a failed claim or finish an old delete
	// (DeleteItem); create the table and wait until it is ACTIVE, and delete
	// a half-deleted one of the same name.
	operation.StoreCreateTable: {
		catalog: []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
		// Tags on CreateTable need TagResource; point-in-time recovery is
		// UpdateContinuousBackups once the table is ACTIVE.
		data: []string{"dynamodb:CreateTable", "dynamodb:DescribeTable", "dynamodb:DeleteTable",
			"dynamodb:TagResource", "dynamodb:UpdateContinuousBackups"},
	},
	operation.StoreDeleteTable: {
		catalog: []string{"dynamodb:UpdateItem", "dynamodb:DeleteItem"},
		// UpdateTable lifts deletion protection, DescribeTable waits for
		// ACTIVE again, then DeleteTable.
		data: []string{"dynamodb:DeleteTable", "dynamodb:UpdateTable", "dynamodb:DescribeTable"},
	},
	// GetItem, plus TransactGetItems for an entity split over items.
	operation.StoreGetEntity: {data: []string{"dynamodb:GetItem"}},
	// Query (one partition) or Scan, and a GetItem that tells a missing
	// table from an empty result.
	operation.StoreQueryEntities: {data: []string{"dynamodb:Query", "dynamodb:Scan", "dynamodb:GetItem"}},
	// PutItem, UpdateItem, DeleteItem, or TransactWriteItems of those; the
	// slow path of large entities reads the stored version first (GetItem,
	// TransactGetItems).
	operation.StoreWrite: {data: []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:GetItem"}},
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
