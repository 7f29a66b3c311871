package azurestorage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/serveproc"
)

func TestMain(m *testing.M) { os.Exit(serveproc.Main(m)) }

const installHint = "run infra/azurestorage/install.sh (npm ci in e2e/azurestorage)"

// result is what legacy.js prints: each step's outcome, "ok" or the HTTP
// status the SDK reported.
type result struct {
	Create        string `json:"create"`
	Exists        bool   `json:"exists"`
	MissingExists bool   `json:"missingExists"`
	Insert        string `json:"insert"`
	Retrieve      string `json:"retrieve"`
	Typed         struct {
		Int32       json.Number `json:"int32"`
		Int32Type   string      `json:"int32Type"`
		Int64       string      `json:"int64"`
		Int64Type   string      `json:"int64Type"`
		Double      json.Number `json:"double"`
		Bool        bool        `json:"bool"`
		When        string      `json:"when"`
		WhenType    string      `json:"whenType"`
		ID          string      `json:"id"`
		IDType      string      `json:"idType"`
		Bin         []int       `json:"bin"`
		BinType     string      `json:"binType"`
		Text        string      `json:"text"`
		ETagMatches bool        `json:"etagMatches"`
	} `json:"typed"`
	Merge        string `json:"merge"`
	StaleReplace string `json:"staleReplace"`
	Duplicate    string `json:"duplicate"`
	Batch        batch  `json:"batch"`
	Batch2       batch  `json:"batch2"`
	Query        struct {
		Pages []int    `json:"pages"`
		Rows  []string `json:"rows"`
	} `json:"query"`
	QueryError    string        `json:"queryError"`
	Select        []json.Number `json:"select"`
	SASQuery      json.Number   `json:"sasQuery"`
	SASInsert     string        `json:"sasInsert"`
	DeleteTable   string        `json:"deleteTable"`
	DeleteMissing string        `json:"deleteMissing"`
}

type batch struct {
	Status string `json:"status"`
	Parts  int    `json:"parts"`
	OK     bool   `json:"ok"`
}

// TestLegacyNodeSDK runs legacy.js, the legacy Node.js SDK azure-storage
// 2.10.7, against `tablebridge serve` on each store: create, exists and
// delete of tables (a missing table is not found, 404), an entity of every
// Edm type read back with its types, merge with an ETag, a stale ETag
// refused (412), a duplicate insert (409), two entity group transactions,
// a query paged two at a time through its continuation, $select, and a
// read-only table SAS for one partition key that reads and cannot insert
// (403).
func TestLegacyNodeSDK(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	node := serveproc.Require(t, "node with e2e/azurestorage/node_modules", installHint, func(string) error {
		if _, err := os.Stat(filepath.Join(wd, "node_modules", "azure-storage", "package.json")); err != nil {
			return fmt.Errorf("e2e/azurestorage/node_modules/azure-storage is missing")
		}
		return nil
	}, "node")
	for _, store := range serveproc.Stores {
		t.Run(store, func(t *testing.T) {
			srv := serveproc.Start(t, store)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "legacy.js", srv.ConnectionString, "legacy"+store)
			cmd.Dir = wd
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			runErr := cmd.Run()
			var got result
			d := json.NewDecoder(bytes.NewReader(stdout.Bytes()))
			d.UseNumber()
			if err := d.Decode(&got); err != nil || runErr != nil {
				t.Fatalf("legacy.js: %v; printed %q (%v)\nstderr: %s", runErr, stdout.String(), err, stderr.String())
			}
			t.Logf("node: %s", bytes.TrimSpace(stdout.Bytes()))
			check := func(what string, got, want any) {
				t.Helper()
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %v, want %v", what, got, want)
				}
			}
			check("create table", got.Create, "ok")
			check("table exists", got.Exists, true)
			check("missing table exists", got.MissingExists, false)
			check("insert", got.Insert, "ok")
			check("retrieve", got.Retrieve, "ok")
			ty := got.Typed
			check("Int32", []any{ty.Int32, ty.Int32Type}, []any{json.Number("42"), "Edm.Int32"})
			check("Int64", []any{ty.Int64, ty.Int64Type}, []any{"9223372036854775807", "Edm.Int64"})
			check("Double", ty.Double, json.Number("1.5"))
			check("Boolean", ty.Bool, true)
			check("DateTime", []any{ty.When, ty.WhenType}, []any{"1973-10-04T00:00:00.000Z", "Edm.DateTime"})
			check("Guid", []any{ty.ID, ty.IDType}, []any{"c9da6455-213d-42c9-9a79-3e9149a57833", "Edm.Guid"})
			check("Binary", []any{ty.Bin, ty.BinType}, []any{[]int{0, 1, 254, 255}, "Edm.Binary"})
			check("String", ty.Text, "héllo 'q'")
			check("ETag of the read is the insert's", ty.ETagMatches, true)
			check("merge with the ETag", got.Merge, "ok")
			check("replace with a stale ETag", got.StaleReplace, "412")
			check("duplicate insert", got.Duplicate, "409")
			check("batch of inserts and an upsert", got.Batch, batch{Status: "ok", Parts: 4, OK: true})
			check("batch of a delete and a merge", got.Batch2, batch{Status: "ok", Parts: 2, OK: true})
			check("query error", got.QueryError, "")
			check("query pages", got.Query.Pages, []int{2, 2, 1})
			check("query rows", got.Query.Rows, []string{"r0", "r1", "r2", "r3", "r4"})
			check("$select N", got.Select, []json.Number{"1", "2", "3"})
			check("SAS query", got.SASQuery, json.Number("5"))
			check("SAS insert", got.SASInsert, "403")
			check("delete table", got.DeleteTable, "ok")
			check("delete a missing table", got.DeleteMissing, "404")
		})
	}
}
