package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/serveproc"
)

// TestNodeSDK drives @azure/data-tables from Node.js with the account key,
// the SharedKey signing the browser build cannot do, against a real
// `tablebridge serve`: typed insert and read, merge with an ETag, a stale
// ETag refused, a transaction, a filtered query and a duplicate insert.
func TestNodeSDK(t *testing.T) {
	t.Parallel()
	tl := findTools(t)
	connStr := serveproc.Start(t, "pebble").ConnectionString

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tl.node, "node-smoke.mjs", connStr, "nodesdk")
	cmd.Dir = tl.pageDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node-smoke.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), tail(stderr.String(), 2000))
	}
	var got struct {
		Get struct {
			N    int    `json:"n"`
			S    string `json:"s"`
			Big  string `json:"big"`
			When string `json:"when"`
			Bin  []int  `json:"bin"`
			ETag string `json:"etag"`
		} `json:"get"`
		Merged    bool   `json:"merged"`
		StaleETag string `json:"staleETag"`
		Batch     struct {
			Status int `json:"status"`
			Parts  int `json:"parts"`
		} `json:"batch"`
		Query     int    `json:"query"`
		Duplicate string `json:"duplicate"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &got); err != nil {
		t.Fatalf("node-smoke.mjs printed %q: %v", stdout.String(), err)
	}
	t.Logf("node: %s", bytes.TrimSpace(stdout.Bytes()))
	if got.Get.N != 42 || got.Get.S != "héllo 'q' 😀" || got.Get.Big != "9223372036854775807" ||
		got.Get.When != "2024-01-02T03:04:05.678Z" || !reflect.DeepEqual(got.Get.Bin, []int{0, 1, 254, 255}) || got.Get.ETag == "" {
		t.Errorf("read back %+v", got.Get)
	}
	if !got.Merged {
		t.Error("merge lost a property")
	}
	if got.StaleETag != "412" {
		t.Errorf("replace with a stale ETag: %s, want 412", got.StaleETag)
	}
	if got.Batch.Status != 202 || got.Batch.Parts != 5 {
		t.Errorf("transaction: %+v, want 202 with 5 parts", got.Batch)
	}
	if got.Query != 3 {
		t.Errorf("query matched %d, want 3", got.Query)
	}
	if got.Duplicate != "409" {
		t.Errorf("duplicate insert: %s, want 409", got.Duplicate)
	}
}
