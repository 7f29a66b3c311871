package lambdafn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"testing"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
)

// TestHostileBodyOnLambda holds the bounds on the request body and on the
// properties of an entity body (SECURITY.md, "Limits and timeouts") on the
// Lambda path: the 4 MiB entity body of
// 358,000 properties, delivered as API Gateway delivers it, is 400
// TooManyProperties, and the function allocates a few times the body for
// it, far from what would end an execution environment of the template's
// 512 MB (Lambda's 6 MB request limit bounds the body).
func TestHostileBodyOnLambda(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	createTable(t, fs, "hostile")
	var body bytes.Buffer
	body.WriteString(`{"PartitionKey":"p","RowKey":"r"`)
	for i := 0; body.Len() < 4<<20-16; i++ {
		fmt.Fprintf(&body, `,"%s":"x"`, strconv.FormatInt(int64(i), 36))
	}
	body.WriteByte('}')
	r := newRequest(t, req{method: http.MethodPost, path: "/hostile", body: body.String(),
		header: map[string]string{"Content-Type": "application/json"}})
	ev, fn, err := gatewayevent.NewEvent(r, stageOpts())
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	h := fs.byName[fn.Name]
	const rounds = 4
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var out []byte
	for range rounds {
		if out, err = h.Invoke(context.Background(), payload); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if !bytes.Contains(out, []byte(`"statusCode":400`)) || !bytes.Contains(out, []byte("TooManyProperties")) {
		t.Fatalf("answer %.300s", out)
	}
	perInvoke := float64(after.TotalAlloc-before.TotalAlloc) / rounds
	t.Logf("allocated %.1f MiB per invocation for a %.1f MiB body (%.1fx)", perInvoke/(1<<20), float64(body.Len())/(1<<20), perInvoke/float64(body.Len()))
	if perInvoke > 8*float64(body.Len()) {
		t.Fatalf("allocated %.0f bytes per invocation, more than 8 times the %d-byte body", perInvoke, body.Len())
	}
}
