package tables

import (
	"context"
	"errors"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/filter"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// MaxPageSize is the most entities or tables one response carries; a larger
// $top is a 400 ("Query Entities": "$top ... must not exceed 1000").
const MaxPageSize = store.MaxPageSize

// TableInfo describes one table: its name in the case it was created with,
// and its stored access policies (the table ACL).
type TableInfo struct {
	Name string
	ACL  []model.SignedIdentifier
}

// TablePage is one page of a Query Tables answer. NextTableName is "" when
// no table remains; otherwise the answer's x-ms-continuation-NextTableName
// names it, and the client sends it back as QueryTablesInput.NextTableName.
type TablePage struct {
	Tables        []TableInfo
	NextTableName string
}

// CreateTable creates a table named by the request body's TableName.
func (s *Service) CreateTable(ctx context.Context, sc Scope, name string) (TableInfo, error) {
	if err := model.ValidateTableName(name); err != nil {
		return TableInfo{}, err
	}
	info, err := s.store.CreateTable(ctx, sc.Account, name)
	return TableInfo(info), storeError(err)
}

// DeleteTable deletes a table and its entities. A missing table is 404
// ResourceNotFound here (tableResourceError).
func (s *Service) DeleteTable(ctx context.Context, sc Scope, name string) error {
	if err := tableNameForLookup(name); err != nil {
		return tableResourceError(err)
	}
	return tableResourceError(storeError(s.store.DeleteTable(ctx, sc.Account, name)))
}

// GetTable returns one table's info, for GET Tables('t'). A missing table
// is 404 ResourceNotFound (tableResourceError).
func (s *Service) GetTable(ctx context.Context, sc Scope, name string) (TableInfo, error) {
	info, err := s.TableACL(ctx, sc, name)
	return info, tableResourceError(err)
}

// TableACL returns one table's info for Get Table ACL (GET t?comp=acl),
// where a missing table stays TableNotFound.
func (s *Service) TableACL(ctx context.Context, sc Scope, name string) (TableInfo, error) {
	if err := tableNameForLookup(name); err != nil {
		return TableInfo{}, err
	}
	info, err := s.store.GetTable(ctx, sc.Account, name)
	return TableInfo(info), storeError(err)
}

// tableResourceError turns TableNotFound into ResourceNotFound for the
// operations that address a table as a resource of the Tables collection,
// GET and DELETE Tables('t'): there Azure answers 404 ResourceNotFound
// (azure-cosmos-table-python
// azure-cosmosdb-table/tests/recordings/test_table.test_table_not_exists.yaml
// and test_table.test_delete_table_with_non_existing_table_fail_not_exist.yaml),
// while entity operations on a missing table answer TableNotFound.
func tableResourceError(err error) error {
	if ae, ok := apierr.As(err); ok && ae.Code == apierr.TableNotFound {
		return &apierr.Error{Code: apierr.ResourceNotFound, Err: err}
	}
	return err
}

// tableNameForLookup rejects names no table can have, so they are answered
// without a store round trip. A syntactically valid name that does not exist
// is the store's TableNotFound.
func tableNameForLookup(name string) error {
	if model.ValidateTableName(name) != nil {
		// No table can have this name, so it does not exist.
		return apierr.New(apierr.TableNotFound)
	}
	return nil
}

// QueryTablesInput is a Query Tables request.
type QueryTablesInput struct {
	Filter string // $filter on TableName; "" for all
	Top    int    // 0 for the default page size, NoEntities for $top=0
	// NextTableName resumes a previous page after the table a
	// TablePage.NextTableName named, in any case; "" starts at the first.
	NextTableName string
}

// QueryTables lists tables in case-insensitive name order.
func (s *Service) QueryTables(ctx context.Context, sc Scope, in QueryTablesInput) (TablePage, error) {
	top, err := pageSize(in.Top)
	if err != nil {
		return TablePage{}, err
	}
	// Stores resume strictly after a lower-cased name (store.TableQuery),
	// since table names are case-insensitive.
	q := store.TableQuery{Top: top, After: strings.ToLower(in.NextTableName)}
	if in.Filter != "" {
		f, err := parseFilter(in.Filter)
		if err != nil {
			return TablePage{}, err
		}
		q.Match = func(t store.TableInfo) bool {
			return f.Match(&model.Entity{Properties: map[string]edm.Value{"TableName": edm.NewString(t.Name)}})
		}
	}
	if top == 0 {
		return TablePage{}, nil
	}
	page, err := s.store.QueryTables(ctx, sc.Account, q)
	if err != nil {
		return TablePage{}, storeError(err)
	}
	out := TablePage{Tables: make([]TableInfo, len(page.Tables)), NextTableName: page.Next}
	for i, t := range page.Tables {
		out.Tables[i] = TableInfo(t)
	}
	return out, nil
}

// StoredAccessPolicies returns a table's stored access policies (its ACL):
// the auth.PolicyLookup of the verifier of table SAS tokens naming one. A
// table that is gone has none, so a token naming one of its policies is
// revoked (403) rather than an internal error.
func (s *Service) StoredAccessPolicies(ctx context.Context, account, table string) ([]model.SignedIdentifier, error) {
	info, err := s.store.GetTable(ctx, account, table)
	if errors.Is(err, store.ErrTableNotFound) {
		return nil, nil
	}
	return info.ACL, storeError(err)
}

// SetTableACL replaces a table's stored access policies (at most 5).
func (s *Service) SetTableACL(ctx context.Context, sc Scope, name string, acl []model.SignedIdentifier) error {
	if err := tableNameForLookup(name); err != nil {
		return err
	}
	if err := validateACL(acl); err != nil {
		return err
	}
	return storeError(s.store.SetTableACL(ctx, sc.Account, name, acl))
}

func pageSize(top int) (int, error) {
	switch {
	case top == 0:
		return MaxPageSize, nil
	case top == NoEntities:
		return 0, nil
	case top < 0 || top > MaxPageSize:
		return 0, apierr.Newf(apierr.InvalidInput, "The $top value %d is outside 1 to %d.", top, MaxPageSize)
	}
	return top, nil
}

func parseFilter(src string) (*filter.Filter, error) {
	f, err := filter.Parse(src)
	if err != nil {
		if _, ok := apierr.As(err); ok {
			return nil, err
		}
		return nil, &apierr.Error{Code: apierr.InvalidInput, Detail: err.Error(), Err: err}
	}
	return f, nil
}

// MaxSignedIdentifiers is the most stored access policies a table holds
// ("Set Table ACL": "up to five access policies").
const MaxSignedIdentifiers = 5

func validateACL(acl []model.SignedIdentifier) error {
	if len(acl) > MaxSignedIdentifiers {
		return apierr.Newf(apierr.InvalidXMLDocument, "More than %d signed identifiers.", MaxSignedIdentifiers)
	}
	seen := make(map[string]bool, len(acl))
	for _, si := range acl {
		// "The identifier ... can be up to 64 characters in length."
		if si.ID == "" || len([]rune(si.ID)) > 64 {
			return apierr.Newf(apierr.InvalidXMLDocument, "The signed identifier %q must have 1 to 64 characters.", si.ID)
		}
		if seen[si.ID] {
			return apierr.Newf(apierr.InvalidXMLDocument, "The signed identifier %q appears twice.", si.ID)
		}
		seen[si.ID] = true
		for _, p := range si.Permission {
			if !strings.ContainsRune("raud", p) {
				return apierr.Newf(apierr.InvalidXMLDocument, "The permission %q is not one of r, a, u, d.", si.Permission)
			}
		}
		if !si.Start.IsZero() && !si.Expiry.IsZero() && si.Expiry.Before(si.Start) {
			return apierr.Newf(apierr.InvalidXMLDocument, "The signed identifier %q expires before it starts.", si.ID)
		}
	}
	return nil
}

// ServiceProperties returns the account's stored service properties
// document, or nil when it never set one.
func (s *Service) ServiceProperties(ctx context.Context, sc Scope) ([]byte, error) {
	doc, err := s.store.GetServiceProperties(ctx, sc.Account)
	return doc, storeError(err)
}

// SetServiceProperties stores the account's service properties document.
func (s *Service) SetServiceProperties(ctx context.Context, sc Scope, doc []byte) error {
	return storeError(s.store.SetServiceProperties(ctx, sc.Account, doc))
}
