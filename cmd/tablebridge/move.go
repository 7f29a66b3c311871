package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/tablebridge/tablebridge/internal/migrate"
)

// moveFlags are migrate's flags for a move between the local stores of
// two data directories (docs/serve.md, "Moving a data directory to
// pebble").
type moveFlags struct {
	fromData  string
	fromStore string
}

func (m *moveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.fromData, "from-data", "", "move a tablebridge serve data directory instead (stop its server first): every account, table, entity with its Timestamp, ACL and service properties, into -store pebble|bolt -data NEWDIR, then verify")
	fs.StringVar(&m.fromStore, "from-store", "", "with -from-data: its engine, pebble or bolt (default: the one the directory holds)")
}

// notForMoves are the migrate flags a move refuses: it copies everything
// (no selection or renames), keeps the Timestamps, starts over every time
// into a new directory (no checkpoint), and follows no live source.
var notForMoves = []string{"to", "tables", "rename", "keep-timestamp", "dry-run", "checkpoint", "restart",
	"follow", "follow-interval", "follow-margin", "sweep-every", "until"}

func (m *moveFlags) validate(fs *flag.FlagSet, from string, dest *destFlags) error {
	if m.fromData == "" {
		if m.fromStore != "" {
			return usageError("-from-store needs -from-data DIR")
		}
		return nil
	}
	if from != "" {
		return usageError("give -from or -from-data, not both")
	}
	var refused []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(notForMoves, f.Name) {
			refused = append(refused, "-"+f.Name)
		}
	})
	if len(refused) > 0 {
		return usageError("a move (-from-data) copies a whole data directory into a new one and verifies it; %s do not apply", strings.Join(refused, ", "))
	}
	if m.fromStore == "" {
		m.fromStore = dataDirEngine(m.fromData)
	}
	if m.fromStore != enginePebble && m.fromStore != engineBolt {
		return usageError("unknown -from-store %q (pebble or bolt)", m.fromStore)
	}
	if dest.storeKind != enginePebble && dest.storeKind != engineBolt || dest.dataDir == "" {
		return usageError("-from-data moves into another data directory: give -store pebble (or bolt) and -data NEWDIR")
	}
	from, to, err := absPair(m.fromData, dest.dataDir)
	if err != nil {
		return err
	}
	if from == to {
		return usageError("-from-data and -data are both %s: move into a new directory, then serve it (or swap the two)", m.fromData)
	}
	return nil
}

func absPair(a, b string) (string, string, error) {
	absA, err := filepath.Abs(a)
	if err != nil {
		return "", "", err
	}
	absB, err := filepath.Abs(b)
	return absA, absB, err
}

// run moves every account of the source directory into the destination,
// which must hold nothing yet: per account, migrate's engine copies the
// tables and entities (Timestamps kept), then the ACLs and the service
// properties are copied, and verify compares both sides entity by entity,
// Timestamps included.
func (m *moveFlags) run(ctx context.Context, dest *destFlags, copies copyFlags, ranges int, stdout io.Writer) error {
	src, err := openDataDir(m.fromData, m.fromStore, "migrate", true)
	if err != nil {
		return fmt.Errorf("migrate: -from-data: %w", err)
	}
	defer src.Close()
	dst, err := openDataDir(dest.dataDir, dest.storeKind, "migrate", false)
	if err != nil {
		return fmt.Errorf("migrate: -data: %w", err)
	}
	defer dst.Close()
	if held, err := dst.Accounts(ctx); err != nil {
		return fmt.Errorf("migrate: -data: %w", err)
	} else if len(held) > 0 {
		return fmt.Errorf("migrate: -data %s already holds tablebridge data (accounts %s): a move goes into a new directory; remove it or choose another", dest.dataDir, strings.Join(held, ", "))
	}
	accounts, err := src.Accounts(ctx)
	if err != nil {
		return fmt.Errorf("migrate: -from-data: %w", err)
	}
	fmt.Fprintf(stdout, "moving %s into %s: %s\n", src.describe(), dst.describe(), plural(int64(len(accounts)), "account"))
	for _, account := range accounts {
		if err := moveAccount(ctx, src, dst, account, copies, ranges, stdout); err != nil {
			fmt.Fprintf(stdout, "%s holds an incomplete copy: remove it before moving again\n", dest.dataDir)
			return err
		}
	}
	fmt.Fprintf(stdout, "moved and verified; serve it with: tablebridge serve -data %s\n", dest.dataDir)
	return nil
}

func moveAccount(ctx context.Context, src, dst *dataDirStore, account string, copies copyFlags, ranges int, stdout io.Writer) error {
	fmt.Fprintf(stdout, "account %s:\n", account)
	from, err := migrate.NewStoreIO(src, account, src.describe(), nil)
	if err != nil {
		return err
	}
	to, err := migrate.NewStoreIO(dst, account, dst.describe(), nil)
	if err != nil {
		return err
	}
	to.KeepTimestamps = true
	opts := copies.options()
	opts.Source, opts.Dest, opts.Ranges, opts.Checkpoint = from, to, ranges, ""
	if err := runCopy(ctx, "migrate", opts, copies, stdout); err != nil {
		return err
	}
	if err := copyAccountSettings(ctx, src, dst, account, from); err != nil {
		return fmt.Errorf("migrate: account %s: %w", account, err)
	}
	display := copies.progress.open(stdout)
	res, err := migrate.Verify(ctx, migrate.VerifyOptions{
		Source:            from,
		Dest:              to,
		CompareTimestamps: true,
		Parallel:          copies.parallel,
		Progress:          display,
		Report:            func(d migrate.Difference) { fmt.Fprintln(stdout, d) },
	})
	display.Close()
	if err != nil {
		return fmt.Errorf("migrate: verify account %s: %w", account, err)
	}
	printVerifySummary(stdout, res)
	if res.Differences > 0 {
		return &exitError{1, fmt.Errorf("migrate: verify account %s: %s", account, plural(res.Differences, "difference"))}
	}
	return nil
}

// copyAccountSettings copies what migrate's engine does not, the tables'
// stored access policies and the account's service properties, and reads
// them back from the destination to compare.
func copyAccountSettings(ctx context.Context, src, dst *dataDirStore, account string, from *migrate.StoreIO) error {
	tables, err := from.Tables(ctx)
	if err != nil {
		return err
	}
	for _, table := range tables {
		info, err := src.GetTable(ctx, account, table)
		if err != nil {
			return err
		}
		if len(info.ACL) == 0 {
			continue
		}
		if err := dst.SetTableACL(ctx, account, table, info.ACL); err != nil {
			return fmt.Errorf("table %s: ACL: %w", table, err)
		}
		if got, err := dst.GetTable(ctx, account, table); err != nil || !reflect.DeepEqual(got.ACL, info.ACL) {
			return fmt.Errorf("table %s: the ACL read back differs (%v)", table, err)
		}
	}
	doc, err := src.GetServiceProperties(ctx, account)
	if err != nil || doc == nil {
		return err
	}
	if err := dst.SetServiceProperties(ctx, account, doc); err != nil {
		return fmt.Errorf("service properties: %w", err)
	}
	if got, err := dst.GetServiceProperties(ctx, account); err != nil || !bytes.Equal(got, doc) {
		return fmt.Errorf("the service properties read back differ (%v)", err)
	}
	return nil
}
