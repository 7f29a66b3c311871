package batch

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// headerFlood is a 4 MiB $batch whose one embedded request has some
// 500,000 header lines.
func headerFlood() []byte {
	var b strings.Builder
	b.WriteString("--batch_x\r\nContent-Type: multipart/mixed; boundary=changeset_y\r\n\r\n--changeset_y\r\n" +
		"Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nPOST http://h/devstoreaccount1/t HTTP/1.1\r\n")
	for i := 0; b.Len() < MaxBodyBytes-200; i++ {
		fmt.Fprintf(&b, "X%d: v\r\n", i)
	}
	b.WriteString("\r\n{}\r\n--changeset_y--\r\n--batch_x--\r\n")
	return []byte(b.String())
}

// A flood of header lines is refused at the bound, costing what a normal
// batch costs (it took 40 times the body in memory and minutes of CPU).
func TestHeaderFloodIsRefused(t *testing.T) {
	body := headerFlood()
	var err error
	allocs := testing.AllocsPerRun(5, func() {
		_, err = ParseBytes("multipart/mixed; boundary=batch_x", body)
	})
	if err == nil {
		t.Fatal("a part with 500,000 header lines was accepted")
	}
	var oe *OperationError
	if errors.As(err, &oe) {
		err = oe.Err
	}
	t.Logf("answer: %v", err)
	if ae, ok := apierr.As(err); !ok || ae.HTTPStatus() != 400 {
		t.Fatalf("answered %v, want a 400", err)
	}
	if allocs > 50 {
		t.Fatalf("%v allocations to refuse the flood", allocs)
	}
}

func TestHeaderFieldsBound(t *testing.T) {
	t.Parallel()
	block := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "X%d: v\r\n", i)
		}
		return b.String() + "\r\n"
	}
	if fields, _, err := readHeaderFields(nil, nil, block(maxHeaderFields)); err != nil || len(fields) != maxHeaderFields {
		t.Fatalf("%d fields: %d read, %v", maxHeaderFields, len(fields), err)
	}
	if _, _, err := readHeaderFields(nil, nil, block(maxHeaderFields+1)); err != errTooManyHeaderFields {
		t.Fatalf("%d fields: %v", maxHeaderFields+1, err)
	}
}
