package lambdafn

import (
	"context"
	"slices"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/store"
)

// guardStore lets a function reach only the store methods of its own
// operations. Another operation that API Gateway should never have routed
// to it (a wrong route in the template, a hand-made event, a verb tunnelled
// through POST to something it does not own) is refused with 405
// MethodNotAllowed, before DynamoDB could refuse it for want of an IAM
// permission, which would surface as a 500. The IAM policy of the function
// grants exactly what these methods need (deploy.Function.DynamoDBActions), no more.
type guardStore struct {
	next    store.Store
	fn      string
	allowed []operation.StoreMethod
}

var _ store.Store = (*guardStore)(nil)

func newGuardStore(next store.Store, fn deploy.Function) *guardStore {
	return &guardStore{next: next, fn: fn.Name, allowed: fn.StoreMethods()}
}

func (g *guardStore) check(m operation.StoreMethod) error {
	if slices.Contains(g.allowed, m) {
		return nil
	}
	return apierr.Newf(apierr.MethodNotAllowed,
		"This endpoint's function %q does not serve this operation (it would call the store's %s). API Gateway routes each operation to its own function; see template.yaml.",
		g.fn, m)
}

func (g *guardStore) CreateTable(ctx context.Context, account, table string) (store.TableInfo, error) {
	if err := g.check(operation.StoreCreateTable); err != nil {
		return store.TableInfo{}, err
	}
	return g.next.CreateTable(ctx, account, table)
}

func (g *guardStore) DeleteTable(ctx context.Context, account, table string) error {
	if err := g.check(operation.StoreDeleteTable); err != nil {
		return err
	}
	return g.next.DeleteTable(ctx, account, table)
}

func (g *guardStore) GetTable(ctx context.Context, account, table string) (store.TableInfo, error) {
	if err := g.check(operation.StoreGetTable); err != nil {
		return store.TableInfo{}, err
	}
	return g.next.GetTable(ctx, account, table)
}

func (g *guardStore) QueryTables(ctx context.Context, account string, q store.TableQuery) (store.TablePage, error) {
	if err := g.check(operation.StoreQueryTables); err != nil {
		return store.TablePage{}, err
	}
	return g.next.QueryTables(ctx, account, q)
}

func (g *guardStore) SetTableACL(ctx context.Context, account, table string, acl []model.SignedIdentifier) error {
	if err := g.check(operation.StoreSetTableACL); err != nil {
		return err
	}
	return g.next.SetTableACL(ctx, account, table, acl)
}

func (g *guardStore) GetEntity(ctx context.Context, account, table, partitionKey, rowKey string) (*model.Entity, error) {
	if err := g.check(operation.StoreGetEntity); err != nil {
		return nil, err
	}
	return g.next.GetEntity(ctx, account, table, partitionKey, rowKey)
}

func (g *guardStore) QueryEntities(ctx context.Context, account, table string, q store.Query) (store.Page, error) {
	if err := g.check(operation.StoreQueryEntities); err != nil {
		return store.Page{}, err
	}
	return g.next.QueryEntities(ctx, account, table, q)
}

func (g *guardStore) Write(ctx context.Context, account, table string, ops []store.Op) error {
	if err := g.check(operation.StoreWrite); err != nil {
		return err
	}
	return g.next.Write(ctx, account, table, ops)
}

func (g *guardStore) GetServiceProperties(ctx context.Context, account string) ([]byte, error) {
	if err := g.check(operation.StoreGetServiceProperties); err != nil {
		return nil, err
	}
	return g.next.GetServiceProperties(ctx, account)
}

func (g *guardStore) SetServiceProperties(ctx context.Context, account string, doc []byte) error {
	if err := g.check(operation.StoreSetServiceProperties); err != nil {
		return err
	}
	return g.next.SetServiceProperties(ctx, account, doc)
}

// Close closes the wrapped store.
func (g *guardStore) Close() error { return g.next.Close() }
