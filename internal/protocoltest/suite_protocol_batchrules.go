package protocoltest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// suiteTransactionRules covers how an entity group transaction fails
// ("Performing entity group transactions"): each rule of the entity group,
// the size limits, and an operation failing in the middle. A failed
// changeset is still 202 Accepted with one embedded error response whose
// message starts with the failing operation's index, and nothing of it is
// applied: every case compares the whole table before and after.
func suiteTransactionRules(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()

	add := func(t testing.TB, pk, rk string) aztables.TransactionAction {
		return aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
			Entity: mustJSON(t, map[string]any{"PartitionKey": pk, "RowKey": rk, "V": rk})}
	}
	adds := func(t testing.TB, pk string, n int) []aztables.TransactionAction {
		out := make([]aztables.TransactionAction, n)
		for i := range out {
			out[i] = add(t, pk, fmt.Sprintf("r%03d", i))
		}
		return out
	}
	// seeded creates a table holding p/seed, so "unchanged" has something
	// to lose.
	seeded := func(t *testing.T) (*aztables.Client, string) {
		c := newTable(t, sc, "")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"seed","V":"seed"}`)
		return c, snapshot(t, c)
	}

	t.Run("HundredOperations", func(t *testing.T) {
		c := newTable(t, sc, "")
		if _, err := c.SubmitTransaction(ctxFor(t), adds(t, "p", 100), nil); err != nil {
			t.Fatalf("100 operations: %v", err)
		}
		if entities, _ := listAll(t, c, nil); len(entities) != 100 {
			t.Errorf("stored %d entities, want 100", len(entities))
		}
	})

	t.Run("HundredAndOneOperations", func(t *testing.T) {
		c, before := seeded(t)
		_, err := c.SubmitTransaction(ctxFor(t), adds(t, "p", 101), nil)
		// Recorded from Azure: index 0, whatever operation is the 101st.
		msg := wantTransactionFailure(t, err, 0, http.StatusBadRequest, "InvalidInput")
		if want := "0:The batch request operation exceeds the maximum 100 changes per change set."; msg != "" && msg != want {
			t.Errorf("message %q, want %q", msg, want)
		}
		unchanged(t, c, before)
	})

	t.Run("TwoPartitions", func(t *testing.T) {
		c, before := seeded(t)
		_, err := c.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{add(t, "p", "a"), add(t, "p", "b"), add(t, "q", "c")}, nil)
		wantTransactionFailure(t, err, 2, http.StatusBadRequest, "CommandsInBatchActOnDifferentPartitions")
		unchanged(t, c, before)
	})

	t.Run("DuplicateRow", func(t *testing.T) {
		c, before := seeded(t)
		merge := aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertMerge,
			Entity: []byte(`{"PartitionKey":"p","RowKey":"a","W":1}`)}
		_, err := c.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{add(t, "p", "a"), add(t, "p", "b"), merge}, nil)
		wantTransactionFailure(t, err, 2, http.StatusBadRequest, "InvalidDuplicateRow")
		unchanged(t, c, before)
	})

	t.Run("BodyOver4MiB", func(t *testing.T) {
		// 70 inserts with a 64 KiB string each: about 4.5 MiB. aztables
		// would send it, but the limit is about the bytes on the wire, so
		// the request is built here, once with a Content-Length and once
		// chunked, where only reading the body can find the size.
		c, before := seeded(t)
		table := TableName(t, "")
		big := strings.Repeat("x", 64<<10)
		ops := make([]batchOp, 70)
		for i := range ops {
			ops[i] = batchOp{Method: http.MethodPost, Path: "/" + table,
				Body: []byte(fmt.Sprintf(`{"PartitionKey":"p","RowKey":"big%02d","S":%q}`, i, big))}
		}
		ct, body := srv.batchBody(ops)
		if len(body) <= 4<<20 {
			t.Fatalf("test body is only %d bytes", len(body))
		}
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
				req := srv.NewRequest(t, ctxFor(t), Request{Method: http.MethodPost, Path: "/$batch", Body: body,
					Header: http.Header{"Content-Type": {ct}}})
				if chunked {
					req.ContentLength = -1
					req.Body = io.NopCloser(bytes.NewReader(body))
					req.GetBody = nil
				}
				wantRawError(t, srv.Send(t, req), http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
				unchanged(t, c, before)
			})
		}
	})

	t.Run("ExistingEntityInTheMiddle", func(t *testing.T) {
		c, before := seeded(t)
		_, err := c.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{
			add(t, "p", "n0"), add(t, "p", "n1"), add(t, "p", "seed"), add(t, "p", "n3"),
		}, nil)
		msg := wantTransactionFailure(t, err, 2, http.StatusConflict, "EntityAlreadyExists")
		if want := "2:The specified entity already exists."; msg != "" && msg != want {
			t.Errorf("message %q, want %q", msg, want)
		}
		unchanged(t, c, before)
	})

	t.Run("StaleETagAfterDeletes", func(t *testing.T) {
		// The deletes before the failing merge must not happen either.
		c := newTable(t, sc, "")
		for _, rk := range []string{"d0", "d1", "d2"} {
			addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": rk})
		}
		stale := addEntity(t, c, `{"PartitionKey":"p","RowKey":"m","V":1}`).ETag
		if _, err := c.UpdateEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"m","V":2}`), nil); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, c)
		del := func(rk string) aztables.TransactionAction {
			return aztables.TransactionAction{ActionType: aztables.TransactionTypeDelete,
				Entity: mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": rk})}
		}
		_, err := c.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{del("d0"), del("d1"), del("d2"),
			{ActionType: aztables.TransactionTypeUpdateMerge, Entity: []byte(`{"PartitionKey":"p","RowKey":"m","V":3}`), IfMatch: &stale},
		}, nil)
		wantTransactionFailure(t, err, 3, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
		unchanged(t, c, before)
	})

	t.Run("UpdateOfMissingEntity", func(t *testing.T) {
		c, before := seeded(t)
		anyETag := azcore.ETagAny
		_, err := c.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{add(t, "p", "n0"),
			{ActionType: aztables.TransactionTypeUpdateReplace, Entity: []byte(`{"PartitionKey":"p","RowKey":"missing"}`), IfMatch: &anyETag},
		}, nil)
		wantTransactionFailure(t, err, 1, http.StatusNotFound, "ResourceNotFound")
		unchanged(t, c, before)
	})

	t.Run("LastOfHundredFails", func(t *testing.T) {
		c, before := seeded(t)
		actions := append(adds(t, "p", 99), add(t, "p", "seed"))
		_, err := c.SubmitTransaction(ctxFor(t), actions, nil)
		wantTransactionFailure(t, err, 99, http.StatusConflict, "EntityAlreadyExists")
		unchanged(t, c, before)
	})

	t.Run("InvalidEntityInTheMiddle", func(t *testing.T) {
		c, before := seeded(t)
		_, err := c.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{add(t, "p", "n0"),
			{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p","RowKey":"bad","1stName":"x"}`)},
		}, nil)
		wantTransactionFailure(t, err, 1, http.StatusBadRequest, "PropertyNameInvalid")
		unchanged(t, c, before)
	})

	t.Run("MissingTable", func(t *testing.T) {
		// Recorded from Azure: 404 TableNotFound at index 0.
		c := sc.NewClient(TableName(t, "missing"))
		_, err := c.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{add(t, "p", "a")}, nil)
		wantTransactionFailure(t, err, 0, http.StatusNotFound, "TableNotFound")
	})

	t.Run("RawFailureIsTheSameShape", func(t *testing.T) {
		// The same rules through a hand-written body, so a client other
		// than aztables gets the same answer.
		c, before := seeded(t)
		table := TableName(t, "")
		resp := srv.doBatch(t, []batchOp{
			{Method: http.MethodPost, Path: "/" + table, Body: []byte(`{"PartitionKey":"p","RowKey":"n0"}`)},
			{Method: http.MethodPut, Path: entityPath(table, "p", "n1"), Body: []byte(`{"W":1}`)},
			{Method: http.MethodPost, Path: "/" + table, Body: []byte(`{"PartitionKey":"p","RowKey":"seed"}`)},
		})
		commonHeaders(t, resp)
		wantRawTransactionFailure(t, resp, 2, http.StatusConflict, "EntityAlreadyExists")
		unchanged(t, c, before)
	})

	t.Run("UnanswerableInsertIsNotApplied", func(t *testing.T) {
		// An insert whose answer no format can give ($format names none)
		// fails the changeset before it is applied, as the insert alone
		// is refused before it is written: a client told its transaction
		// failed must not find it applied.
		c, before := seeded(t)
		table := TableName(t, "")
		resp := srv.doBatch(t, []batchOp{
			{Method: http.MethodPost, Path: "/" + table, Body: []byte(`{"PartitionKey":"p","RowKey":"n0"}`)},
			{Method: http.MethodPost, Path: "/" + table + "?$format=text/plain", Body: []byte(`{"PartitionKey":"p","RowKey":"n1"}`)},
		})
		wantRawTransactionFailure(t, resp, 1, http.StatusBadRequest, "InvalidInput")
		unchanged(t, c, before)
	})
}
