package dynamostore

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Copies of a table's catalog entry (docs/dynamodb.md, "Table look-ups").
//
// Every entity operation needs its table's entry (where the table lives,
// and whether it still exists), and the functions read it with each
// operation. A table's entry sits in its account's catalog partition, and
// DynamoDB serves at most 3,000 read units a second from one partition key:
// read there, the entry would cap every table of the account together. So
// each entry has catalogCopies copies, each under a partition key of its
// own, and the request path reads one of them, each in turn, with a
// consistent GetItem. A table's look-ups then spread over catalogCopies
// keys, and no two tables share one.
//
// The copies never disagree with the entry they copy:
//   - This package's writes of an entry (create, delete, stored access
//     policies, a move) write its copies in the same transaction.
//   - An entry without copies (written before they existed), or whose
//     copies have passed their time (catUntil), is read from the account's
//     partition, and its copies are written then, in a transaction
//     conditioned on the entry being unchanged (entryUnchanged).
//   - Every copy carries a time after which no reader trusts it, renewed
//     that way. Nothing else writes copies; the limit bounds how long a
//     copy could outlive an entry changed by a tool that does not know
//     them (a release before copies existed, during its upgrade).
//
// The copies are read strongly consistently, so once a Delete Table has
// answered, every look-up of the table says it is gone, as before.
const (
	// catalogCopies: a table's look-ups spread over this many partition
	// keys, so at most 1/16 of them land on one, which takes 3,000 reads
	// a second: 48,000 a second for the table, past the 40,000 units an
	// on-demand DynamoDB table takes by default.
	catalogCopies = 16
	// copyAccountPrefix starts a copy's hash key,
	// "$copy/<n>/<lower-cased table>/<account>". No account name starts
	// with '$' (which also keeps it apart from purgeAccount), and neither
	// the number nor a table name holds '/', so the key is unambiguous.
	copyAccountPrefix = "$copy/"

	catRev   = "Rev"   // a fresh value at every write of an entry by this package
	catUntil = "Until" // copies: Unix seconds after which no reader trusts the copy

	copyLifetime = 15 * time.Minute
	// copyJitter spreads the copies' ends, so the readers of a busy table
	// do not all find their copies out of date at once: the first that
	// does renews them all.
	copyJitter = 5 * time.Minute
)

func copyKey(account, table string, n int) item {
	lower := strings.ToLower(table)
	return item{
		catAccount: str(copyAccountPrefix + strconv.Itoa(n) + "/" + lower + "/" + encodeKey(account)),
		catKey:     str(tableKeyPrefix + lower),
	}
}

// copyReadAttempts is how many of a table's copies a look-up reads while
// DynamoDB throttles them (after the SDK's own retries of each): every copy
// has a partition key of its own, so the next one's capacity is its own,
// and a look-up that confirms a write already applied answers it rather
// than 500.
const copyReadAttempts = 3

// readTableEntry is how the request path reads a table's entry: from one
// of its copies (see above), another one when that copy's key is
// throttled. nil when there is none.
func (s *Store) readTableEntry(ctx context.Context, op, account, table string) (item, error) {
	var out *dynamodb.GetItemOutput
	var err error
	for range copyReadAttempts {
		cctx, cancel := s.call(ctx)
		out, err = s.db.GetItem(cctx, &dynamodb.GetItemInput{
			TableName:      aws.String(s.opts.CatalogTable),
			Key:            copyKey(account, table, s.nextCopy()),
			ConsistentRead: aws.Bool(true),
		})
		cancel()
		if !isThrottled(err) {
			break
		}
	}
	if err != nil {
		return nil, s.catalogErr(ctx, op, err)
	}
	if copyCurrent(out.Item, time.Now()) {
		return out.Item, nil
	}
	it, err := s.readEntry(ctx, op, account, table)
	if err != nil || it == nil {
		return it, err
	}
	switch stringAttr(it, catState) {
	case stateActive, stateDeleted:
		// Best effort: when the copies cannot be written now (a
		// conflict, throttling), the next look-up tries again.
		_ = s.renewCopies(ctx, account, table, it)
	}
	return it, nil
}

// nextCopy picks the copy a look-up reads: the process's look-ups take the
// copies in turn, from a random start, so each copy's key gets an even
// share of them (chosen at random, the share of the busiest copy would
// vary with chance: DynamoDB throttles a key for its busiest second, not
// its average).
func (s *Store) nextCopy() int {
	return int(s.copyTurn.Add(1) % catalogCopies)
}

// copyCurrent reports whether a copy as read can be trusted at now.
func copyCurrent(c item, now time.Time) bool {
	n, ok := c[catUntil].(*types.AttributeValueMemberN)
	if !ok {
		return false
	}
	until, err := strconv.ParseInt(n.Value, 10, 64)
	return err == nil && now.Unix() < until
}

// renewCopies writes the copies of entry, as read, if it is still the
// table's entry.
func (s *Store) renewCopies(ctx context.Context, account, table string, entry item) error {
	cond, names, values := entryUnchanged(entry)
	actions := append([]types.TransactWriteItem{{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(s.opts.CatalogTable),
		Key:                       tableKey(account, table),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}}, s.copyPuts(account, table, entry)...)
	cctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.db.TransactWriteItems(cctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions})
	return err
}

// entryUnchanged is a condition that holds while a table's entry is still
// entry as read: the same Rev (this package writes a new one with every
// change), and the same value of each attribute a look-up reads, which
// also catches the changes of a release that did not know Rev.
func entryUnchanged(entry item) (string, map[string]string, map[string]types.AttributeValue) {
	names := map[string]string{}
	values := map[string]types.AttributeValue{}
	var conds []string
	for i, name := range []string{catRev, catState, catPhysical, catID, catMoving, catDeletedAt} {
		ref, val := "#a"+strconv.Itoa(i), ":a"+strconv.Itoa(i)
		names[ref] = name
		if v := stringAttr(entry, name); v != "" {
			values[val] = str(v)
			conds = append(conds, ref+" = "+val)
		} else {
			conds = append(conds, "attribute_not_exists("+ref+")")
		}
	}
	return strings.Join(conds, " AND "), names, values
}

// copyPuts are the writes of entry's copies, for a transaction that writes
// entry itself or checks that it is unchanged.
func (s *Store) copyPuts(account, table string, entry item) []types.TransactWriteItem {
	now := time.Now()
	puts := make([]types.TransactWriteItem, catalogCopies)
	for n := range puts {
		c := maps.Clone(entry)
		maps.Copy(c, copyKey(account, table, n))
		until := now.Add(copyLifetime + rand.N(copyJitter))
		c[catUntil] = &types.AttributeValueMemberN{Value: strconv.FormatInt(until.Unix(), 10)}
		puts[n] = types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.opts.CatalogTable), Item: c}}
	}
	return puts
}

// copyDeletes are the deletes of a tombstone's copies (deletedAt as it
// recorded) for the transaction that removes the tombstone: a copy that no
// longer says so (the name was created again) stays.
func (s *Store) copyDeletes(account, table, deletedAt string) []types.TransactWriteItem {
	dels := make([]types.TransactWriteItem, catalogCopies)
	for n := range dels {
		dels[n] = types.TransactWriteItem{Delete: &types.Delete{
			TableName:                 aws.String(s.opts.CatalogTable),
			Key:                       copyKey(account, table, n),
			ConditionExpression:       aws.String("attribute_not_exists(#s) OR (#s = :deleted AND #d = :at)"),
			ExpressionAttributeNames:  map[string]string{"#s": catState, "#d": catDeletedAt},
			ExpressionAttributeValues: map[string]types.AttributeValue{":deleted": str(stateDeleted), ":at": str(deletedAt)},
		}}
	}
	return dels
}

// cancelledOnCondition returns the item a transaction's action i found when
// its condition failed (with ReturnValuesOnConditionCheckFailure ALL_OLD),
// and whether that is why the transaction was cancelled.
func cancelledOnCondition(err error, i int) (item, bool) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || i >= len(tce.CancellationReasons) {
		return nil, false
	}
	r := tce.CancellationReasons[i]
	return r.Item, aws.ToString(r.Code) == "ConditionalCheckFailed"
}
