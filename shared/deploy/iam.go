package deploy

import (
	"slices"

	"github.com/tablebridge/tablebridge/shared/operation"
)

// DynamoDB IAM actions by store method, split by what they touch: the
// catalog table, the catalog's copies of table entries only, or the data
// tables (the shared table and its index, and the account's placements,
// the per-table tables of earlier releases). They follow
// shared/store/dynamostore: the catalog holds table names, ids, states,
// ACLs, service properties and purge items, and copies of each table's
// entry; entity operations look their table up in a copy, and write the
// copies of an entry that has none (or whose copies are out of date) in a
// transaction that checks the entry (ConditionCheckItem) and puts the
// copies. Transactions (TransactWriteItems,
// TransactGetItems) are authorized by the PutItem, UpdateItem, DeleteItem,
// ConditionCheckItem and GetItem of each item ("Using IAM with DynamoDB
// transactions"), each with its own partition key, so a function that only
// writes copies gets PutItem on the copies' keys alone (CatalogCopyActions).
// Nothing a request does creates, deletes or updates a DynamoDB table: the
// purge function (PurgeActions) deletes what Delete Table leaves.
var storeActions = map[operation.StoreMethod]struct{ catalog, copies, data []string }{
	operation.StoreGetTable:             lookup(nil),
	operation.StoreGetServiceProperties: {catalog: []string{"dynamodb:GetItem"}},
	operation.StoreQueryTables:          {catalog: []string{"dynamodb:Query"}},
	// Read the entry, then one transaction that puts it and its copies.
	operation.StoreSetTableACL:          {catalog: []string{"dynamodb:GetItem", "dynamodb:PutItem"}},
	operation.StoreSetServiceProperties: {catalog: []string{"dynamodb:PutItem"}},
	// One transaction that puts the entry and its copies; a name an earlier
	// release's per-table create or delete left half way also gets a purge
	// item.
	operation.StoreCreateTable: {catalog: []string{"dynamodb:PutItem"}},
	// Read the entry, then one TransactWriteItems: mark it deleted
	// (UpdateItem), add the purge item and the tombstone's copies (PutItem).
	operation.StoreDeleteTable: {catalog: []string{"dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem"}},
	// GetItem, plus TransactGetItems for an entity split over items.
	operation.StoreGetEntity: lookup([]string{"dynamodb:GetItem"}),
	// Query (one partition, or the order index's shards); on a placement
	// without the index, the DescribeTable that tells a missing index from
	// another ValidationException, then Scan; a large entity whose overflow
	// items a page did not bring is read whole (TransactGetItems: GetItem).
	operation.StoreQueryEntities: lookup([]string{"dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:Scan"}),
	// PutItem, UpdateItem, DeleteItem, or TransactWriteItems of those; the
	// slow path of large entities reads the stored version first (GetItem,
	// TransactGetItems), and a batch whose later merge is too large for
	// one item and already failed on the stored entity sends it as a
	// ConditionCheck, so that an earlier op's failure is named first.
	operation.StoreWrite: lookup([]string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:ConditionCheckItem"}),
}

// lookup is the actions of a store method that looks its table up, with
// data, its own actions on the data tables: the look-up reads a copy of
// the table's entry, or the entry and then writes its copies.
func lookup(data []string) struct{ catalog, copies, data []string } {
	return struct{ catalog, copies, data []string }{
		catalog: []string{"dynamodb:ConditionCheckItem", "dynamodb:GetItem"},
		copies:  []string{"dynamodb:PutItem"},
		data:    data,
	}
}

// CatalogCopyKeys is the partition keys of the catalog's copies of table
// entries, as the IAM condition key dynamodb:LeadingKeys matches them
// (StringLike): the statement of CatalogCopyActions is conditioned on it.
const CatalogCopyKeys = "$copy/*"

// PurgeActions are the purge function's DynamoDB actions: on the catalog,
// check that it exists at init (GetItem), find due purges (Query), lease
// them (UpdateItem) and end them, with the deleted table's tombstone and
// its copies (DeleteItem); on the shared table, read a deleted table's shards from the
// order index (Query) and delete its items (BatchWriteItem); on the
// placements, delete a deleted one's DynamoDB table after lifting its
// deletion protection (UpdateTable, DescribeTable, DeleteTable).
func PurgeActions() (catalog, shared, perTable []string) {
	return []string{"dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem"},
		[]string{"dynamodb:BatchWriteItem", "dynamodb:Query"},
		[]string{"dynamodb:DeleteTable", "dynamodb:DescribeTable", "dynamodb:UpdateTable"}
}

// initCatalogActions are what every function needs at init:
// dynamostore.New checks that the catalog table exists with one GetItem
// (a data-plane read: no control-plane call at cold start).
var initCatalogActions = []string{"dynamodb:GetItem"}

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

// CatalogCopyActions returns the IAM actions the function needs on the
// catalog's copies of table entries (CatalogCopyKeys) beyond those it has
// on the whole catalog (DynamoDBActions), sorted; nil when none.
func (f Function) CatalogCopyActions() []string {
	catalog, _ := f.DynamoDBActions()
	var copies []string
	for _, m := range f.StoreMethods() {
		for _, a := range storeActions[m].copies {
			if !slices.Contains(catalog, a) {
				copies = append(copies, a)
			}
		}
	}
	slices.Sort(copies)
	return slices.Compact(copies)
}

// SharedTableActions splits the function's data actions (DynamoDBActions)
// by resource in the shared table: the table itself takes them all but
// Scan and DescribeTable, which the store never runs on it (they serve a
// placement without the order index), and its order index only Query.
func (f Function) SharedTableActions() (table, index []string) {
	_, data := f.DynamoDBActions()
	for _, a := range data {
		if a == "dynamodb:Scan" || a == "dynamodb:DescribeTable" {
			continue
		}
		table = append(table, a)
		if a == "dynamodb:Query" {
			index = append(index, a)
		}
	}
	return table, index
}
