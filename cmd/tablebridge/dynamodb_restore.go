package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// restoreTableCmd copies one Azure table from a DynamoDB table that
// point-in-time recovery made back into the deployment (dynamostore's
// RestoreTable; docs/dynamodb.md, "Restoring one Azure table"). Running it
// again with the same source resumes a restore that stopped.
func restoreTableCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dynamodb restore-table", "dynamodb restore-table -from RESTORED (-from-catalog RESTORED_CATALOG | -id ID) -table T [-as NEW] [-merge] [-account A] [-table-prefix P] [-rate N]\n"+
		"       tablebridge dynamodb restore-table -abandon -table T [-account A] [-table-prefix P]\n\n"+
		"Copies the Azure table T, as it was in RESTORED (made by aws dynamodb restore-table-to-point-in-time\n"+
		"from the shared table, or from an earlier release's per-table table), into the deployment as T or NEW.\n"+
		"The target is created if missing; an existing one must be empty, unless -merge. Its writes answer\n"+
		"503 ServerBusy (the SDKs retry) until the copy is verified; reads see what is copied so far.")
	var dyn dynamoFlags
	dyn.register(fs)
	var (
		r       dynamostore.Restore
		abandon bool
		pace    paceFlags
	)
	fs.StringVar(&r.From, "from", "", "the DynamoDB table point-in-time recovery restored (required)")
	fs.StringVar(&r.Catalog, "from-catalog", "", "the catalog table restored to the same time, which holds the table's id then (needed for a restored shared table, unless -id)")
	fs.StringVar(&r.ID, "id", "", "the table's id at that time (16 hex digits: the Id of its catalog entry), instead of -from-catalog")
	fs.StringVar(&r.Account, "account", auth.DevStoreAccountName, "the account of the table")
	fs.StringVar(&r.Table, "table", "", "the Azure table to restore, named as it was (required)")
	fs.StringVar(&r.As, "as", "", "restore it under this name (default: its own)")
	fs.BoolVar(&r.Merge, "merge", false, "restore into a table that has entities: restored entities replace those with their keys, the others stay")
	fs.BoolVar(&abandon, "abandon", false, "lift the freeze of a restore of -table (-as) that will not be finished, keeping what it copied")
	pace.register(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := model.ValidateTableName(r.Table); err != nil {
		return usageError("dynamodb restore-table: -table %q: %v", r.Table, err)
	}
	if r.As != "" {
		if err := model.ValidateTableName(r.As); err != nil {
			return usageError("dynamodb restore-table: -as %q: %v", r.As, err)
		}
	}
	if !abandon && r.From == "" {
		return usageError("dynamodb restore-table: -from is required")
	}
	opts, closeProgress, err := pace.start("dynamodb restore-table", &dyn, stderr)
	if err != nil {
		return err
	}
	defer closeProgress()
	st, err := dyn.open(ctx)
	if err != nil {
		return fmt.Errorf("dynamodb restore-table: %w", err)
	}
	defer st.Close()
	target := r.Table
	if r.As != "" {
		target = r.As
	}
	if abandon {
		was, err := st.AbandonRestore(ctx, r.Account, target)
		if err != nil {
			return fmt.Errorf("dynamodb restore-table: %w", err)
		}
		if !was {
			fmt.Fprintf(stdout, "%s: no restore to abandon\n", target)
			return nil
		}
		fmt.Fprintf(stdout, "%s: restore abandoned; the table takes writes again, with the entities copied so far\n", target)
		return nil
	}
	start := time.Now()
	rep, err := st.RestoreTable(ctx, r, opts)
	if err != nil {
		return fmt.Errorf("dynamodb restore-table: table %s: %w", r.Table, err)
	}
	created := "into the existing table"
	if rep.Created {
		created = "table created"
	}
	fmt.Fprintf(stdout, "%s restored as %s from %s: %d items copied and verified, %s, writes refused for %v, %v in all\n",
		r.Table, target, rep.Source, rep.Items, created, rep.Frozen.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return nil
}
