package dynamostore

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/store"
)

// slowActive makes DescribeTable report CREATING while on is set, as AWS
// does for the seconds to minutes a new table takes (DynamoDB Local
// creates at once).
type slowActive struct{ on atomic.Bool }

func (f *slowActive) option(o *dynamodb.Options) {
	initHook("slowActive", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleInitialize(ctx, in)
		if d, ok := out.Result.(*dynamodb.DescribeTableOutput); ok && err == nil && f.on.Load() && d.Table != nil {
			d.Table.TableStatus = types.TableStatusCreating
		}
		return out, md, err
	})(o)
}

// TestHalfCreatedTable: a Create Table that gave up while its DynamoDB
// table was still CREATING (issue 23, item 5) leaves no table usable but
// unlisted for long: the client's retry adopts it at once, and Get Table,
// List Tables and Delete Table finish it when they find it ACTIVE.
func TestHalfCreatedTable(t *testing.T) {
	t.Parallel()
	ctx := dynamolocal.Context(t, testTimeout)
	fault := &slowActive{}
	s := newTestStoreWith(t, Options{TableWaitTimeout: 300 * time.Millisecond}, fault.option)
	halfCreate := func(t *testing.T, name string) {
		t.Helper()
		fault.on.Store(true)
		defer fault.on.Store(false)
		if _, err := s.CreateTable(ctx, "acct", name); !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("CreateTable while the table stays CREATING = %v; want ErrUnavailable (503)", err)
		}
	}
	listed := func(name string) bool {
		page, err := s.QueryTables(ctx, "acct", store.TableQuery{Top: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range page.Tables {
			if ti.Name == name {
				return true
			}
		}
		return false
	}

	t.Run("RetryAdopts", func(t *testing.T) {
		halfCreate(t, "Retried")
		// The DynamoDB table turned ACTIVE meanwhile; the client wrote to
		// it before retrying.
		if err := s.Write(ctx, "acct", "Retried", []store.Op{{Kind: store.OpInsert, Entity: newEntity("p", "r", nil)}}); err != nil {
			t.Fatal(err)
		}
		info, err := s.CreateTable(ctx, "acct", "Retried")
		if err != nil || info.Name != "Retried" {
			t.Fatalf("Create Table retry = %+v, %v; want adopted at once", info, err)
		}
		if !listed("Retried") {
			t.Fatal("adopted table not listed")
		}
		if _, err := s.GetEntity(ctx, "acct", "Retried", "p", "r"); err != nil {
			t.Fatalf("entity written before the adoption: %v", err)
		}
		if _, err := s.CreateTable(ctx, "acct", "Retried"); !errors.Is(err, store.ErrTableExists) {
			t.Fatalf("Create Table of the finished table = %v; want ErrTableExists", err)
		}
	})
	t.Run("GetTableFinishes", func(t *testing.T) {
		halfCreate(t, "Got")
		if info, err := s.GetTable(ctx, "acct", "Got"); err != nil || info.Name != "Got" {
			t.Fatalf("GetTable = %+v, %v", info, err)
		}
		if !listed("Got") {
			t.Fatal("not listed after GetTable finished it")
		}
	})
	t.Run("ListFinishes", func(t *testing.T) {
		halfCreate(t, "Listed")
		if !listed("Listed") {
			t.Fatal("List Tables does not finish a half-created table")
		}
	})
	t.Run("DeleteFinishes", func(t *testing.T) {
		halfCreate(t, "Deleted")
		if err := s.DeleteTable(ctx, "acct", "Deleted"); err != nil {
			t.Fatalf("DeleteTable of a half-created table = %v; want deleted", err)
		}
		if _, err := s.GetTable(ctx, "acct", "Deleted"); !errors.Is(err, store.ErrTableNotFound) {
			t.Fatalf("after delete: %v", err)
		}
	})
	t.Run("StillCreating", func(t *testing.T) {
		// While DynamoDB still creates it, nothing is usable and nothing
		// is listed; a retry waits for ACTIVE.
		halfCreate(t, "Slow")
		fault.on.Store(true)
		if _, err := s.GetTable(ctx, "acct", "Slow"); !errors.Is(err, store.ErrTableNotFound) {
			t.Fatalf("GetTable while CREATING = %v; want ErrTableNotFound", err)
		}
		fault.on.Store(false)
		if _, err := s.CreateTable(ctx, "acct", "Slow"); err != nil {
			t.Fatalf("retry once ACTIVE = %v", err)
		}
	})
}

// TestRecoveryRefusedLeavesNoTable: when point-in-time recovery is required
// and refused, Create Table fails and leaves no usable DynamoDB table
// behind (deleted again) and the name free.
func TestRecoveryRefusedLeavesNoTable(t *testing.T) {
	t.Parallel()
	ctx := dynamolocal.Context(t, testTimeout)
	// DynamoDB Local does not implement UpdateContinuousBackups.
	s := newTestStoreWith(t, Options{Protection: Protection{PointInTimeRecovery: PITRRequired, DeletionProtection: true}})
	if _, err := s.CreateTable(ctx, "acct", "Unprotected"); err == nil {
		t.Fatal("CreateTable succeeded without recovery")
	}
	phys, err := s.physicalName("acct", "Unprotected")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dynamolocal.Client(t).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(phys)}); !isTableMissing(err) {
		t.Fatalf("DynamoDB table left behind: %v", err)
	}
	if err := s.Write(ctx, "acct", "Unprotected", []store.Op{{Kind: store.OpInsert, Entity: newEntity("p", "r", nil)}}); !errors.Is(err, store.ErrTableNotFound) {
		t.Fatalf("write to the refused table = %v; want ErrTableNotFound", err)
	}
	if _, err := s.GetTable(ctx, "acct", "Unprotected"); !errors.Is(err, store.ErrTableNotFound) {
		t.Fatalf("GetTable = %v; want ErrTableNotFound", err)
	}
	// The name is free: the next attempt meets the same refusal, not 409.
	if _, err := s.CreateTable(ctx, "acct", "Unprotected"); err == nil || errors.Is(err, store.ErrTableExists) {
		t.Fatalf("second CreateTable = %v; want the recovery failure again", err)
	}
}
