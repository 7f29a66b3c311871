package migrate

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/tablebridge/tablebridge/shared/model"
)

func TestPartitionChunks(t *testing.T) {
	t.Parallel()
	var es []*model.Entity
	add := func(pk string, n int) {
		for i := range n {
			es = append(es, &model.Entity{PartitionKey: pk, RowKey: fmt.Sprint(i)})
		}
	}
	add("b", 250)
	add("a", 3)
	add("b", 1) // the same partition again, further down a hash-ordered page
	chunks := partitionChunks(es, 100)
	var got []string
	for _, c := range chunks {
		pk := c[0].PartitionKey
		for _, e := range c {
			if e.PartitionKey != pk {
				t.Fatalf("chunk mixes partitions %q and %q", pk, e.PartitionKey)
			}
		}
		got = append(got, fmt.Sprintf("%s%d", pk, len(c)))
	}
	want := "[b100 b100 b51 a3]"
	if fmt.Sprint(got) != want {
		t.Fatalf("chunks = %v, want %s", got, want)
	}
	if len(partitionChunks(nil, 100)) != 0 {
		t.Fatal("chunks of nothing")
	}
}

func TestTransactionKeys(t *testing.T) {
	t.Parallel()
	e := &model.Entity{PartitionKey: "it's", RowKey: "a''b"}
	got := transactionKeys(e, false)
	if got.PartitionKey != "it''s" || got.RowKey != "a''''b" || e.PartitionKey != "it's" {
		t.Fatalf("transactionKeys = %+v (original %+v)", got, e)
	}
	plain := &model.Entity{PartitionKey: "p", RowKey: "r"}
	if transactionKeys(plain, false) != plain {
		t.Fatal("an entity without quotes must not be copied")
	}
	empty := &model.Entity{PartitionKey: "", RowKey: "x'"}
	if got := transactionKeys(empty, true); got.PartitionKey != emptyPartitionKeyPlaceholder || got.RowKey != "x''" {
		t.Fatalf("empty PartitionKey = %+v", got)
	}
}

func TestRestoreEmptyPartitionKeyInBodyKeepsDeclaredLengths(t *testing.T) {
	t.Parallel()
	body := `{"PartitionKey":"` + emptyPartitionKeyPlaceholder + `","RowKey":"r"}`
	op := "PUT http://h/t(PartitionKey='" + emptyPartitionKeyPlaceholder + "',RowKey='r') HTTP/1.1\r\n" +
		"Accept: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\nContent-Type: application/json\r\n\r\n" + body
	changeset := "--changeset_1\r\nContent-Type: application/http\r\n\r\n" + op + "\r\n--changeset_1\r\nContent-Type: application/http\r\n\r\n" + op + "\r\n--changeset_1--\r\n"

	got := string(restoreEmptyPartitionKeyInBody([]byte(changeset)))

	wantBody := `{"PartitionKey":"","RowKey":"r"}`
	wantOp := "PUT http://h/t(PartitionKey='',RowKey='r') HTTP/1.1\r\n" +
		"Accept: application/json\r\nContent-Length: " + strconv.Itoa(len(wantBody)) + "\r\nContent-Type: application/json\r\n\r\n" + wantBody
	want := "--changeset_1\r\nContent-Type: application/http\r\n\r\n" + wantOp + "\r\n--changeset_1\r\nContent-Type: application/http\r\n\r\n" + wantOp + "\r\n--changeset_1--\r\n"
	if got != want {
		t.Fatalf("restored body:\n%q\nwant\n%q", got, want)
	}
	if single := string(restoreEmptyPartitionKeyInBody([]byte(body))); single != wantBody {
		t.Fatalf("single entity body = %q, want %q", single, wantBody)
	}
}
