package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// PITRMode says what CreateTable does about point-in-time recovery.
type PITRMode string

const (
	// PITROff leaves point-in-time recovery off (the zero value: the local
	// server and tools).
	PITROff PITRMode = ""
	// PITRRequired enables it on every table CreateTable creates; a failure
	// fails the create, deletes the DynamoDB table again and frees the
	// name (halfcreated.go), so no table is served unprotected or left
	// usable but unlisted.
	PITRRequired PITRMode = "required"
	// PITRBestEffort enables it where the endpoint knows the API:
	// DynamoDB Local answers UpdateContinuousBackups with
	// UnknownOperationException, which is then skipped. Any other error
	// (a missing IAM permission) still fails the create.
	PITRBestEffort PITRMode = "best-effort"
)

// Protection is what CreateTable gives every DynamoDB table it creates
// beyond the key schema: recovery, tags, encryption, table class and
// deletion protection.
type Protection struct {
	PointInTimeRecovery PITRMode
	// Tags go on every table; CreateTable adds tablebridge:account and
	// tablebridge:table (the Azure table's name) to them.
	Tags map[string]string
	// KMSKeyARN, when set, encrypts the tables with this customer managed
	// key instead of the AWS owned key.
	KMSKeyARN string
	// TableClass is STANDARD (default) or STANDARD_INFREQUENT_ACCESS.
	TableClass types.TableClass
	// DeletionProtection refuses DeleteTable from anything but the store,
	// whose Delete Table lifts it first.
	DeletionProtection bool
}

// Tag keys CreateTable sets.
const (
	TagAccount = "tablebridge:account"
	TagTable   = "tablebridge:table"
	TagStack   = "tablebridge:stack"
)

// protectInput adds the protection settings to a CreateTable request.
func (s *Store) protectInput(in *dynamodb.CreateTableInput, account, table string) {
	p := s.opts.Protection
	tags := map[string]string{TagAccount: account, TagTable: table}
	for k, v := range p.Tags {
		tags[k] = v
	}
	for k, v := range tags {
		in.Tags = append(in.Tags, types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	if p.KMSKeyARN != "" {
		in.SSESpecification = &types.SSESpecification{Enabled: aws.Bool(true), SSEType: types.SSETypeKms, KMSMasterKeyId: aws.String(p.KMSKeyARN)}
	}
	if p.TableClass != "" {
		in.TableClass = p.TableClass
	}
	if p.DeletionProtection {
		in.DeletionProtectionEnabled = aws.Bool(true)
	}
}

// enableRecovery turns point-in-time recovery on for an ACTIVE table, so
// that a Delete Table (or any loss) leaves DynamoDB's 35-day system backup.
func (s *Store) enableRecovery(ctx context.Context, phys string) error {
	mode := s.opts.Protection.PointInTimeRecovery
	if mode == PITROff {
		return nil
	}
	cctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.db.UpdateContinuousBackups(cctx, &dynamodb.UpdateContinuousBackupsInput{
		TableName:                        aws.String(phys),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)},
	})
	if err != nil && mode == PITRBestEffort && hasUnmodeledCode(err, "UnknownOperationException") {
		return nil
	}
	if err != nil {
		return mapErr("enable point-in-time recovery on "+phys, err)
	}
	return nil
}

// liftDeletionProtection turns deletion protection off so that the store's
// own Delete Table can delete the table; it reports whether the table was
// protected.
func (s *Store) liftDeletionProtection(ctx context.Context, phys string, deleteErr error) (bool, error) {
	if !hasUnmodeledCode(deleteErr, "ValidationException") {
		return false, nil
	}
	// DynamoDB refuses a protected table's DeleteTable with a plain
	// ValidationException; the table's description, not the message,
	// says whether protection was the reason (issue 23, item 7).
	desc, err := s.describe(ctx, phys)
	if err != nil || !aws.ToBool(desc.DeletionProtectionEnabled) {
		return false, nil
	}
	cctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.db.UpdateTable(cctx, &dynamodb.UpdateTableInput{TableName: aws.String(phys), DeletionProtectionEnabled: aws.Bool(false)}); err != nil {
		return true, fmt.Errorf("dynamostore: lift deletion protection of %s: %w", phys, mapErr("update table "+phys, err))
	}
	return true, nil
}
