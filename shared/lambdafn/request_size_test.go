package lambdafn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/shared/deploy"
)

// Lambda refuses a synchronous invocation whose event exceeds 6,291,456
// bytes ("Request must be smaller than 6291456 bytes for the InvokeFunction
// operation").
const lambdaRequestLimit = 6_291_456

// escapeHeavyBatch is a $batch of 100 inserts into one partition, size
// bytes in all, whose string values are all quotes and backslashes: the
// content that JSON escaping doubles, the worst case for a body carried as
// text inside the event. Azure accepts it up to 4 MiB.
func escapeHeavyBatch(table string, size int) (contentType string, body []byte) {
	const batchID, changesetID = "batch_5b1d", "changeset_7f3a"
	part := func(i int, value string) string {
		entity := fmt.Sprintf(`{"PartitionKey":"p","RowKey":"r%03d","Text":"%s"}`, i, value)
		return "--" + changesetID + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
			"POST https://" + apiHost + "/" + stage + "/" + devAccount + "/" + table + " HTTP/1.1\r\n" +
			"Accept: application/json;odata=nometadata\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n" +
			fmt.Sprintf("Content-Length: %d\r\n\r\n", len(entity)) + entity + "\r\n"
	}
	head := "--" + batchID + "\r\nContent-Type: multipart/mixed; boundary=" + changesetID + "\r\n\r\n"
	tail := "--" + changesetID + "--\r\n\r\n--" + batchID + "--\r\n"
	fixed := len(head) + len(tail)
	for i := range 100 {
		// Every entity is 10,000 to 99,999 bytes: five-digit lengths.
		fixed += len(part(i, strings.Repeat("a", 10000))) - 10000
	}
	// Fill the strings with \" pairs (a quote as JSON escapes it) to size.
	room := size - fixed
	var b strings.Builder
	b.WriteString(head)
	for i := range 100 {
		n := room / (100 - i)
		n -= n % 2
		if i == 99 {
			n = room
		}
		room -= n
		fill := strings.Repeat(`\"`, n/2) + strings.Repeat(`a`, n%2)
		b.WriteString(part(i, fill))
	}
	b.WriteString(tail)
	return "multipart/mixed; boundary=" + batchID, []byte(b.String())
}

// TestLargestBodiesReachTheFunction: on the REST API, whose
// BinaryMediaTypes */* makes every body base64 (4/3 larger, whatever its
// content), a $batch of Azure's largest size, 4 MiB, with 10 KB of
// headers, makes an event under Lambda's 6,291,456 bytes and is applied; a
// body over 4 MiB still reaches the function, which answers Azure's 413
// RequestBodyTooLarge. The same 4 MiB body carried as text (what a
// binary media type list without multipart/mixed would do) would be
// JSON-escaped to twice its size and refused by Lambda before the function
// runs: that is why every media type stays binary.
// HTTP APIs and Function URLs, which base64 multipart/mixed bodies
// themselves, carry a $batch alike.
func TestLargestBodiesReachTheFunction(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	padding := strings.Repeat("x", 10<<10-200)
	for i, door := range []struct {
		name   string
		o      gatewayevent.Options
		prefix string
	}{
		{"REST API", gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: stage}, ""},
		// HTTP APIs and Function URLs base64 every body that is not text,
		// JSON or XML, so a $batch (multipart/mixed) travels as on the REST API.
		{"HTTP API", gatewayevent.Options{Profile: deploy.ProfileHTTPAPI}, "-"},
		{"Function URL", gatewayevent.Options{Profile: deploy.ProfileFunctionURL}, "-"},
	} {
		table := fmt.Sprintf("largest%d", i)
		createTable(t, fs, table)
		// Past 4 MiB the body is the same on every door: one is enough.
		t.Run(door.name, func(t *testing.T) { largestBodies(t, fs, door.o, door.prefix, table, padding, i == 0) })
	}
}

func largestBodies(t *testing.T, fs *functions, o gatewayevent.Options, prefix, table, padding string, over bool) {
	cases := []struct {
		name   string
		size   int
		status int
		code   string
	}{
		{"4 MiB", 4 << 20, http.StatusAccepted, ""},
		{"4 MiB + 256 KiB", 4<<20 + 256<<10, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge"},
	}
	if !over {
		cases = cases[:1]
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ct, body := escapeHeavyBatch(table, tc.size)
			if len(body) != tc.size {
				t.Fatalf("body of %d bytes, want %d", len(body), tc.size)
			}
			r := newRequest(t, req{method: http.MethodPost, path: "/$batch", body: string(body), prefix: prefix,
				header: map[string]string{"Content-Type": ct, "X-Padding": padding}})
			payload, fn, err := gatewayevent.Build(r, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(payload) >= lambdaRequestLimit {
				t.Fatalf("event of %d bytes for a %d-byte body: Lambda refuses it", len(payload), len(body))
			}
			var ev map[string]any
			if err := json.Unmarshal(payload, &ev); err != nil {
				t.Fatal(err)
			}
			if ev["isBase64Encoded"] != true {
				t.Fatal("the event carries the body as text")
			}
			ev["body"], ev["isBase64Encoded"] = string(body), false
			textPayload, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d-byte body: event %d bytes base64, %d bytes as text (limit %d)", len(body), len(payload), len(textPayload), lambdaRequestLimit)
			if tc.size == 4<<20 && len(textPayload) < lambdaRequestLimit {
				t.Errorf("as text the event is %d bytes: the escape-heavy body no longer shows the limit", len(textPayload))
			}
			out, err := fs.byName[fn.Name].Invoke(context.Background(), payload)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := gatewayevent.DecodeResponse(o.Profile, out)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != tc.status || resp.Header.Get("x-ms-error-code") != tc.code {
				t.Fatalf("status %d code %q, want %d %q: %.300s", resp.Status, resp.Header.Get("x-ms-error-code"), tc.status, tc.code, resp.Body)
			}
			if tc.status == http.StatusAccepted && (bytes.Count(resp.Body, []byte("HTTP/1.1 204")) != 100) {
				t.Fatalf("not every insert applied: %.500s", resp.Body)
			}
		})
	}
}
