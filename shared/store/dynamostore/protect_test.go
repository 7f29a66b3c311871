package dynamostore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/store"
)

// createInputs records the CreateTable requests a client sends (DynamoDB
// Local accepts tags and keys but cannot list them back).
type createInputs struct {
	mu  sync.Mutex
	ins []*dynamodb.CreateTableInput
}

func (c *createInputs) option(o *dynamodb.Options) {
	initHook("recordCreateTable", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if ct, ok := in.Parameters.(*dynamodb.CreateTableInput); ok {
			c.mu.Lock()
			c.ins = append(c.ins, ct)
			c.mu.Unlock()
		}
		return next.HandleInitialize(ctx, in)
	})(o)
}

// TestProtection: tables get tags naming the account and Azure table, the
// customer managed key, the table class and deletion protection, which
// only the store's Delete Table lifts; point-in-time recovery degrades as
// configured on DynamoDB Local, which does not implement it.
func TestProtection(t *testing.T) {
	t.Parallel()
	ctx := dynamolocal.Context(t, testTimeout)
	const kms = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	rec := &createInputs{}
	s := newTestStoreWith(t, Options{Protection: Protection{
		PointInTimeRecovery: PITRBestEffort, Tags: map[string]string{TagStack: "tablebridge-prod"}, KMSKeyARN: kms,
		TableClass: types.TableClassStandardInfrequentAccess, DeletionProtection: true,
	}}, rec.option)
	// DynamoDB Local does not implement UpdateContinuousBackups: best
	// effort skips it, so the create succeeds.
	if _, err := s.CreateTable(ctx, "acct", "Protected"); err != nil {
		t.Fatal(err)
	}
	phys, err := s.physicalName("acct", "Protected")
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	in := rec.ins[len(rec.ins)-1]
	rec.mu.Unlock()
	tags := map[string]string{}
	for _, tg := range in.Tags {
		tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	if tags[TagAccount] != "acct" || tags[TagTable] != "Protected" || tags[TagStack] != "tablebridge-prod" {
		t.Errorf("tags %v", tags)
	}
	if in.SSESpecification == nil || aws.ToString(in.SSESpecification.KMSMasterKeyId) != kms || in.SSESpecification.SSEType != types.SSETypeKms {
		t.Errorf("SSESpecification %+v", in.SSESpecification)
	}
	admin := dynamolocal.Client(t)
	desc, err := admin.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(phys)})
	if err != nil {
		t.Fatal(err)
	}
	// DynamoDB Local keeps deletion protection but reports no table class.
	if !aws.ToBool(desc.Table.DeletionProtectionEnabled) || in.TableClass != types.TableClassStandardInfrequentAccess {
		t.Errorf("deletion protection %v, table class %q", aws.ToBool(desc.Table.DeletionProtectionEnabled), in.TableClass)
	}
	// Anything but the store is refused.
	if _, err := admin.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(phys)}); err == nil ||
		!strings.Contains(err.Error(), "protected against deletion") {
		t.Fatalf("a direct DeleteTable: %v, want refused", err)
	}
	if err := s.DeleteTable(ctx, "acct", "Protected"); err != nil {
		t.Fatalf("Delete Table of a protected table: %v", err)
	}
	if _, err := s.GetTable(ctx, "acct", "Protected"); !errors.Is(err, store.ErrTableNotFound) {
		t.Fatalf("after delete: %v", err)
	}

	t.Run("recovery required", func(t *testing.T) {
		s := newTestStoreWith(t, Options{Protection: Protection{PointInTimeRecovery: PITRRequired}})
		_, err := s.CreateTable(ctx, "acct", "MustRecover")
		if err == nil || !strings.Contains(err.Error(), "point-in-time recovery") {
			t.Fatalf("create without recovery: %v, want a failure naming point-in-time recovery", err)
		}
		// The table is not served: its name stays claimed until a create
		// that can enable recovery adopts it.
		if _, err := s.GetTable(ctx, "acct", "MustRecover"); err == nil {
			t.Fatal("a table without recovery is served")
		}
	})
	t.Run("zero value", func(t *testing.T) {
		rec := &createInputs{}
		s := newTestStoreWith(t, Options{}, rec.option)
		if _, err := s.CreateTable(ctx, "acct", "Plain"); err != nil {
			t.Fatal(err)
		}
		in := rec.ins[len(rec.ins)-1]
		if in.DeletionProtectionEnabled != nil || in.SSESpecification != nil || in.TableClass != "" || len(in.Tags) != 2 {
			t.Errorf("zero protection sent %+v", in)
		}
		if err := s.DeleteTable(ctx, "acct", "Plain"); err != nil {
			t.Fatal(err)
		}
	})
}

// inUseAfterUpdate answers the first DeleteTable after an UpdateTable with
// ResourceInUseException, as AWS does while the UpdateTable that lifted
// deletion protection leaves the table UPDATING (DynamoDB Local applies it
// at once).
type inUseAfterUpdate struct {
	mu       sync.Mutex
	updated  bool
	answered int
}

func (f *inUseAfterUpdate) option(o *dynamodb.Options) {
	initHook("inUseAfterUpdate", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		f.mu.Lock()
		switch in.Parameters.(type) {
		case *dynamodb.UpdateTableInput:
			f.updated = true
		case *dynamodb.DeleteTableInput:
			if f.updated {
				f.updated = false
				f.answered++
				f.mu.Unlock()
				return middleware.InitializeOutput{}, middleware.Metadata{}, &types.ResourceInUseException{Message: aws.String("Attempt to change a resource which is still in use: Table is being updated")}
			}
		}
		f.mu.Unlock()
		return next.HandleInitialize(ctx, in)
	})(o)
}

// TestDeleteProtectedWhileUpdating: Delete Table of a protected table
// succeeds although the DeleteTable right after lifting the protection
// finds the table UPDATING.
func TestDeleteProtectedWhileUpdating(t *testing.T) {
	t.Parallel()
	ctx := dynamolocal.Context(t, testTimeout)
	fault := &inUseAfterUpdate{}
	s := newTestStoreWith(t, Options{Protection: Protection{DeletionProtection: true}}, fault.option)
	if _, err := s.CreateTable(ctx, "acct", "Updating"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTable(ctx, "acct", "Updating"); err != nil {
		t.Fatalf("Delete Table of a protected table found UPDATING: %v", err)
	}
	if fault.answered != 1 {
		t.Fatalf("ResourceInUseException answered %d times, want 1", fault.answered)
	}
	if _, err := s.GetTable(ctx, "acct", "Updating"); !errors.Is(err, store.ErrTableNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}
