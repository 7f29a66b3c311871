package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

func verifyFn(ctx context.Context, args []string, out, errw *bytes.Buffer) error {
	return verifyCmd(ctx, args, out, errw)
}

func TestVerifyCommand(t *testing.T) {
	t.Parallel()
	src, dst := protocoltest.New(t), protocoltest.New(t)
	seedTable(t, src.Store, "Orders", 500, 5)
	if code, out, errOut := runCmd(t, migrateFn, "-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-checkpoint", "", "-progress", "none"); code != 0 {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Run("match is status 0", func(t *testing.T) {
		code, out, errOut := runCmd(t, verifyFn, "-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-progress", "none")
		if code != 0 || !strings.Contains(out, "1 table matches (500 entities)") {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
	})
	t.Run("a difference is status 1 and is listed", func(t *testing.T) {
		ts := time.Now().UTC().Truncate(100 * time.Nanosecond)
		err := dst.Store.Write(context.Background(), devAccount, "Orders", []store.Op{
			{Kind: store.OpReplace, Entity: &model.Entity{PartitionKey: "p001", RowKey: "r000001", Timestamp: ts, Properties: map[string]edm.Value{"N": edm.NewInt64(-1)}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCmd(t, verifyFn, "-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-progress", "none")
		if code != 1 {
			t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
		}
		for _, want := range []string{
			"Orders: differs PartitionKey='p001' RowKey='r000001': property D: source Edm.Double 1.0, dest absent",
			"Orders: differs PartitionKey='p001' RowKey='r000001': property N: source Edm.Int64 \"1\", dest Edm.Int64 \"-1\"",
			"Orders: source 500, dest 500 entities: 3 differences",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if !strings.Contains(errOut, "3 differences") {
			t.Errorf("stderr = %q", errOut)
		}
	})
	t.Run("the summary adds up the lines above it", func(t *testing.T) {
		// Besides the changed entity: a table the destination lacks and one
		// only the destination has.
		seedTable(t, src.Store, "Lonely", 7, 1)
		seedTable(t, dst.Store, "Stray", 3, 1)
		code, out, errOut := runCmd(t, verifyFn, "-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-progress", "none")
		if code != 1 {
			t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
		}
		lineRe := regexp.MustCompile(`(?m)^  \S+: (?:source (\d+), dest (\d+)|only in dest, (\d+)) entities: (?:match|(\d+) differences?)$`)
		var tables, srcN, dstN, diffs int64
		for _, m := range lineRe.FindAllStringSubmatch(out, -1) {
			tables++
			srcN += atoi(t, m[1])
			dstN += atoi(t, m[2]) + atoi(t, m[3])
			diffs += atoi(t, m[4])
		}
		want := fmt.Sprintf("%d tables: source %d, dest %d entities: %d differences", tables, srcN, dstN, diffs)
		if tables != 3 || srcN != 507 || dstN != 503 || diffs != 5 || !strings.Contains(out, want) {
			t.Fatalf("the lines add up to %q; output:\n%s", want, out)
		}
		if want := "verify: 5 differences in 3 of 3 tables"; !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	})
	t.Run("usage and unreadable sides are status 2", func(t *testing.T) {
		for name, args := range map[string][]string{
			"no source":        {"-to", dst.ConnectionString()},
			"no destination":   {"-from", src.ConnectionString()},
			"unknown flag":     {"-nope"},
			"stray argument":   {"-from", src.ConnectionString(), "-to", dst.ConnectionString(), "x"},
			"unknown table":    {"-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-tables", "Nope", "-progress", "none"},
			"bad source":       {"-from", "garbage", "-to", dst.ConnectionString()},
			"bad progress":     {"-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-progress", "x"},
			"missing bolt dir": {"-from", src.ConnectionString(), "-store", "bolt"},
		} {
			t.Run(name, func(t *testing.T) {
				if code, out, errOut := runCmd(t, verifyFn, args...); code != 2 {
					t.Fatalf("exit %d, want 2\n%s\n%s", code, out, errOut)
				}
			})
		}
	})
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
