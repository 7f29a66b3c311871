package dynamostore

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/store"
)

// loseCatalog deletes the store's catalog table behind its back, as a
// DynamoDB restarted empty would, and waits until it is gone.
func loseCatalog(t *testing.T, s *Store) {
	t.Helper()
	ctx := dynamolocal.Context(t, testTimeout)
	db := dynamolocal.Client(t)
	name := aws.String(s.opts.CatalogTable)
	if _, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: name}); err != nil {
		t.Fatal(err)
	}
	w := dynamodb.NewTableNotExistsWaiter(db)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: name}, testTimeout); err != nil {
		t.Fatal(err)
	}
}

// TestLostCatalogRecoversWhenBack: on AWS, with the catalog gone, every
// catalog operation fails with an error that names the catalog table and
// says what to do, as 503 (not performed); once the table is back, the
// same Store works again.
func TestLostCatalogRecoversWhenBack(t *testing.T) {
	t.Parallel()
	s := onAWS(t, newTestStore(t))
	env := newEnv(t, s)
	loseCatalog(t, s)

	_, err := s.QueryTables(env.ctx, env.account, store.TableQuery{})
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), s.opts.CatalogTable) ||
		!strings.Contains(err.Error(), "Restore it") {
		t.Fatalf("QueryTables without a catalog: %v", err)
	}
	if _, err := s.CreateTable(env.ctx, env.account, "Other"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("CreateTable without a catalog: %v", err)
	}
	if _, err := s.GetTable(env.ctx, env.account, env.table); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("GetTable without a catalog: %v", err)
	}

	// The operator brings it back (here: as a first start creates it).
	if err := s.ensureCatalog(env.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTable(env.ctx, env.account, "Other"); err != nil {
		t.Fatalf("CreateTable once the catalog is back: %v", err)
	}
	page, err := s.QueryTables(env.ctx, env.account, store.TableQuery{})
	if err != nil || len(page.Tables) != 1 || page.Tables[0].Name != "Other" {
		t.Fatalf("QueryTables once the catalog is back: %+v, %v", page.Tables, err)
	}
}

// TestLostCatalogRecreated: on a local endpoint (the local server on
// DynamoDB Local) the first request that finds the catalog missing
// re-creates it and answers 503, which the Azure SDKs retry; the retry
// works.
func TestLostCatalogRecreated(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	env := newEnv(t, s)
	loseCatalog(t, s)

	_, err := s.QueryTables(env.ctx, env.account, store.TableQuery{})
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "re-created") {
		t.Fatalf("QueryTables without a catalog: %v", err)
	}
	if _, err := s.CreateTable(env.ctx, env.account, "Other"); err != nil {
		t.Fatalf("CreateTable after the re-creation: %v", err)
	}
	page, err := s.QueryTables(env.ctx, env.account, store.TableQuery{})
	if err != nil || len(page.Tables) != 1 {
		t.Fatalf("QueryTables after the re-creation: %+v, %v", page.Tables, err)
	}
}

// deleteTable deletes a DynamoDB table behind the store's back and waits
// until it is gone.
func deleteTable(t *testing.T, name string) {
	t.Helper()
	ctx := dynamolocal.Context(t, testTimeout)
	db := dynamolocal.Client(t)
	if _, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
		t.Fatal(err)
	}
	w := dynamodb.NewTableNotExistsWaiter(db)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, testTimeout); err != nil {
		t.Fatal(err)
	}
}

// TestLostSharedTableRecreated: a DynamoDB Local restarted in memory loses
// the catalog and the shared table. On a local endpoint (the local
// server), whichever request meets the loss first, a catalog read or an
// entity operation through a cached look-up, re-creates both and answers
// 503, which the SDKs retry; then Create Table and the table's entities
// work again, without a restart.
func TestLostSharedTableRecreated(t *testing.T) {
	t.Parallel()
	for _, first := range []string{"CatalogRead", "EntityOperation"} {
		t.Run(first, func(t *testing.T) {
			t.Parallel()
			s := newTestStoreWith(t, Options{CatalogCacheTTL: time.Hour})
			env := newEnv(t, s)
			env.insert(newEntity("p", "before", nil)) // the look-up is cached from here on
			deleteTable(t, s.opts.SharedTable)
			deleteTable(t, s.opts.CatalogTable)

			var err error
			if first == "CatalogRead" {
				_, err = s.QueryTables(env.ctx, env.account, store.TableQuery{})
			} else {
				_, err = s.GetEntity(env.ctx, env.account, env.table, "p", "before")
			}
			if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "re-created") {
				t.Fatalf("%s after the loss: %v; want 503 saying what was re-created", first, err)
			}
			s.cache.drop(env.account, env.table)
			if _, err := s.CreateTable(env.ctx, env.account, env.table); err != nil {
				t.Fatalf("CreateTable after the re-creation: %v", err)
			}
			env.insert(newEntity("p", "after", nil))
			if _, err := s.GetEntity(env.ctx, env.account, env.table, "p", "after"); err != nil {
				t.Fatalf("the new table's entity: %v", err)
			}
		})
	}
}

// TestLostSharedTableOnAWS: on AWS, where the shared table is a stack
// resource, an entity operation that finds it missing answers 503 naming
// it and what to do, not 404 TableNotFound: the Azure table exists; the
// deployment lost its storage.
func TestLostSharedTableOnAWS(t *testing.T) {
	t.Parallel()
	s := onAWS(t, newTestStore(t))
	env := newEnv(t, s)
	deleteTable(t, s.opts.SharedTable)
	_, err := s.GetEntity(env.ctx, env.account, env.table, "p", "r")
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), s.opts.SharedTable) || !strings.Contains(err.Error(), "Restore it") {
		t.Fatalf("GetEntity without the shared table: %v", err)
	}
}
