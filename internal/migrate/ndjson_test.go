package migrate

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

func exportEntities(n int) []*model.Entity {
	out := make([]*model.Entity, n)
	for i := range n {
		props := edgeValues()
		props["I"] = edm.NewInt32(int32(i))
		out[i] = &model.Entity{PartitionKey: "p", RowKey: string(rune('a'+i%26)) + strings.Repeat("z", i/26), Timestamp: time.Date(2024, 1, 1, 0, 0, 0, i*100, time.UTC), Properties: props}
	}
	return out
}

func writeExport(t *testing.T, table string, es []*model.Entity) []byte {
	t.Helper()
	var buf bytes.Buffer
	x, err := NewExportWriter(&buf, table)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if err := x.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if x.Count() != int64(len(es)) {
		t.Fatalf("Count = %d", x.Count())
	}
	return buf.Bytes()
}

func TestExportFormat(t *testing.T) {
	t.Parallel()
	data := writeExport(t, "Orders", exportEntities(2))
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want a header and 2 entities", len(lines))
	}
	if lines[0] != `{"format":"tablebridge-ndjson","version":1,"table":"Orders"}` {
		t.Fatalf("header = %s", lines[0])
	}
	if !strings.HasPrefix(lines[1], `{"PartitionKey":"p","RowKey":"a","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-01-01T00:00:00Z",`) {
		t.Fatalf("entity line = %.120s", lines[1])
	}
}

func TestExportReaderRoundTrip(t *testing.T) {
	t.Parallel()
	want := exportEntities(30)
	plain := writeExport(t, "Orders", want)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(plain)
	zw.Close()
	for name, data := range map[string][]byte{"plain": plain, "gzip": zipped.Bytes(), "CRLF and blank lines": bytes.ReplaceAll(plain, []byte("\n"), []byte("\r\n\r\n"))} {
		t.Run(name, func(t *testing.T) {
			x, err := NewExportReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			if x.Header.Table != "Orders" {
				t.Fatalf("table = %q", x.Header.Table)
			}
			for i := 0; ; i++ {
				e, err := x.Next()
				if err == io.EOF {
					if i != len(want) {
						t.Fatalf("read %d entities, want %d", i, len(want))
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				sameEntity(t, want[i], e)
				if !e.Timestamp.Equal(want[i].Timestamp) {
					t.Fatalf("entity %d Timestamp = %v", i, e.Timestamp)
				}
			}
		})
	}
}

func TestExportReaderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, wantErr string }{
		{"empty", "", "no header"},
		{"not json", "hello\n", "not a tablebridge-ndjson header"},
		{"other format", `{"format":"csv","version":1,"table":"T"}` + "\n", `format "csv"`},
		{"other version", `{"format":"tablebridge-ndjson","version":2,"table":"T"}` + "\n", "version 2"},
		{"bad table name", `{"format":"tablebridge-ndjson","version":1,"table":"1x"}` + "\n", "table"},
		{"broken gzip", "\x1f\x8bnot gzip", "gzip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewExportReader(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
	t.Run("bad entity line names the line", func(t *testing.T) {
		data := `{"format":"tablebridge-ndjson","version":1,"table":"Tab"}` + "\n" + `{"PartitionKey":"p","RowKey":"r"}` + "\n" + `{"PartitionKey":"p"}` + "\n"
		x, err := NewExportReader(strings.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.Next(); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Next(); err == nil || !strings.Contains(err.Error(), "line 3") {
			t.Fatalf("err = %v, want line 3", err)
		}
	})
}

func TestFileSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	orders, users := exportEntities(25), exportEntities(3)
	pathOrders := filepath.Join(dir, "orders.ndjson")
	if err := os.WriteFile(pathOrders, writeExport(t, "Orders", orders), 0o644); err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(writeExport(t, "Users", users))
	zw.Close()
	pathUsers := filepath.Join(dir, "users.gz")
	if err := os.WriteFile(pathUsers, zipped.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := NewFileSource([]string{pathOrders, pathUsers})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	if names, _ := src.Tables(ctx); strings.Join(names, ",") != "Orders,Users" || src.SplitsRanges() {
		t.Fatalf("Tables = %v, SplitsRanges = %v", names, src.SplitsRanges())
	}
	if !strings.Contains(src.Describe(), pathOrders) {
		t.Fatalf("Describe = %q", src.Describe())
	}
	readAll := func(after *Continuation) []*model.Entity {
		var out []*model.Entity
		for {
			page, err := src.ReadPage(ctx, "orders", PageRequest{Top: 10, After: after})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, page.Entities...)
			if page.Next == nil {
				return out
			}
			after = page.Next
		}
	}
	t.Run("sequential pages", func(t *testing.T) {
		got := readAll(nil)
		if len(got) != 25 {
			t.Fatalf("%d entities", len(got))
		}
		for i := range got {
			sameEntity(t, orders[i], got[i])
		}
	})
	t.Run("resume at an offset reopens and skips", func(t *testing.T) {
		got := readAll(&Continuation{Offset: 17})
		if len(got) != 8 || got[0].RowKey != orders[17].RowKey {
			t.Fatalf("resumed read = %d entities from %q", len(got), got[0].RowKey)
		}
	})
	t.Run("offset past the end", func(t *testing.T) {
		_, err := src.ReadPage(ctx, "Orders", PageRequest{After: &Continuation{Offset: 99}})
		if err == nil || !strings.Contains(err.Error(), "fewer than") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("unknown table", func(t *testing.T) {
		_, err := src.ReadPage(ctx, "Nope", PageRequest{})
		if !errors.Is(err, store.ErrTableNotFound) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ranges refused", func(t *testing.T) {
		if _, err := src.ReadPage(ctx, "Orders", PageRequest{Range: Range{Lower: "a"}}); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("gzip file", func(t *testing.T) {
		page, err := src.ReadPage(ctx, "USERS", PageRequest{})
		if err != nil || len(page.Entities) != 3 || page.Next != nil {
			t.Fatalf("page = %d entities, next %v, err %v", len(page.Entities), page.Next, err)
		}
	})
	t.Run("duplicate table", func(t *testing.T) {
		if _, err := NewFileSource([]string{pathOrders, pathOrders}); err == nil || !strings.Contains(err.Error(), "both hold") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		if _, err := NewFileSource([]string{filepath.Join(dir, "none")}); err == nil {
			t.Fatal("no error")
		}
	})
}
