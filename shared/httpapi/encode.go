package httpapi

import (
	"net/url"
	"slices"
	"strings"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// entityEncoder writes entities as Azure's JSON payload at one metadata
// level ("Payload format for Table service operations").
type entityEncoder struct {
	level   edm.Metadata
	baseURL string // scheme://host[/stage][/account]
	account string
	table   string
	// sel is the $select list; nil selects every property.
	sel []string
	// projection is "&$select=<list as sent>" when the request has a
	// $select, appended to odata.metadata (setSelect).
	projection string
	// names is reused across entities to sort property names.
	names []string
}

// setSelect reads the request's $select: the properties to write, and the
// projection Azure appends to odata.metadata, the list as the client sent
// it: "$metadata#t/@Element&$select=age,sex,xyz" for one entity
// (azure-cosmos-table-python
// azure-cosmosdb-table/tests/recordings/test_table_entity.test_get_entity_with_select.yaml),
// "$metadata#t&$select=" for a query with an empty $select
// (test_table_batch.test_batch_all_operations_together.yaml there).
func (enc *entityEncoder) setSelect(q url.Values) error {
	vs, ok := q["$select"]
	if !ok {
		return nil
	}
	sel, err := tables.ParseSelect(vs[0])
	if err != nil {
		return err
	}
	enc.sel, enc.projection = sel, "&$select="+vs[0]
	return nil
}

// appendEntity writes one entity object. single adds odata.metadata, as a
// lone entity (Get, Insert) carries it and list members do not.
func (enc *entityEncoder) appendEntity(b []byte, e *model.Entity, single bool) []byte {
	b = append(b, '{')
	first := true
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	if enc.level != edm.NoMetadata {
		if single {
			sep()
			b = append(b, `"odata.metadata":`...)
			b = edm.AppendString(b, enc.baseURL+"/$metadata#"+enc.table+"/@Element"+enc.projection)
		}
		if enc.level == edm.FullMetadata {
			self := enc.table + "(PartitionKey=" + keyLiteral(e.PartitionKey) + ",RowKey=" + keyLiteral(e.RowKey) + ")"
			sep()
			b = append(b, `"odata.type":`...)
			b = edm.AppendString(b, enc.account+"."+enc.table)
			b = append(b, `,"odata.id":`...)
			b = edm.AppendString(b, enc.baseURL+"/"+self)
			b = append(b, `,"odata.etag":"`...)
			b = tables.AppendETag(b, e.Timestamp, true)
			b = append(b, `","odata.editLink":`...)
			b = edm.AppendString(b, self)
		} else {
			sep()
			b = append(b, `"odata.etag":"`...)
			b = tables.AppendETag(b, e.Timestamp, true)
			b = append(b, '"')
		}
	}
	if enc.sel == nil {
		sep()
		b = edm.AppendProperty(b, "PartitionKey", edm.NewString(e.PartitionKey), enc.level)
		b = append(b, ',')
		b = edm.AppendProperty(b, "RowKey", edm.NewString(e.RowKey), enc.level)
		b = append(b, ',')
		b = enc.appendTimestamp(b, e)
		enc.names = slices.Grow(enc.names[:0], len(e.Properties))
		for name := range e.Properties {
			enc.names = append(enc.names, name)
		}
		slices.Sort(enc.names)
		for _, name := range enc.names {
			b = append(b, ',')
			b = edm.AppendProperty(b, name, e.Properties[name], enc.level)
		}
		return append(b, '}')
	}
	// $select: only the named properties; a named property the entity lacks
	// is written as null, as Azure does.
	for _, name := range enc.sel {
		sep()
		switch name {
		case "PartitionKey":
			b = edm.AppendProperty(b, name, edm.NewString(e.PartitionKey), enc.level)
		case "RowKey":
			b = edm.AppendProperty(b, name, edm.NewString(e.RowKey), enc.level)
		case "Timestamp":
			b = enc.appendTimestamp(b, e)
		default:
			if v, ok := e.Properties[name]; ok {
				b = edm.AppendProperty(b, name, v, enc.level)
			} else {
				b = edm.AppendString(b, name)
				b = append(b, ":null"...)
			}
		}
	}
	return append(b, '}')
}

// appendTimestamp writes the Timestamp system property. Unlike a custom
// DateTime it is annotated only at full metadata: at minimal metadata a
// reader knows its type from the entity set's metadata.
func (enc *entityEncoder) appendTimestamp(b []byte, e *model.Entity) []byte {
	level := enc.level
	if level == edm.MinimalMetadata {
		level = edm.NoMetadata
	}
	return edm.AppendProperty(b, "Timestamp", edm.Value{Type: edm.DateTime, Time: e.Timestamp}, level)
}

// appendEntityList writes {"odata.metadata":..., "value":[...]} with as many
// of es as fit budget, and returns how many it wrote.
func (enc *entityEncoder) appendEntityList(b []byte, es []*model.Entity, budget *answerBudget) ([]byte, int) {
	start := len(b)
	b = append(b, '{')
	if enc.level != edm.NoMetadata {
		b = append(b, `"odata.metadata":`...)
		b = edm.AppendString(b, enc.baseURL+"/$metadata#"+enc.table+enc.projection)
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	budget.take(b[start:])
	budget.take([]byte("]}"))
	for i, e := range es {
		mark := len(b)
		if i > 0 {
			b = append(b, ',')
		}
		b = enc.appendEntity(b, e, false)
		if !budget.take(b[mark:]) && i > 0 {
			return append(b[:mark], "]}"...), i
		}
	}
	return append(b, "]}"...), len(es)
}

// appendTable writes one table object of a Create Table or Query Tables
// response.
func appendTable(b []byte, level edm.Metadata, baseURL, account, name string, single bool) []byte {
	b = append(b, '{')
	if level != edm.NoMetadata {
		if single {
			b = append(b, `"odata.metadata":`...)
			b = edm.AppendString(b, baseURL+"/$metadata#Tables/@Element")
			b = append(b, ',')
		}
		if level == edm.FullMetadata {
			b = append(b, `"odata.type":`...)
			b = edm.AppendString(b, account+".Tables")
			b = append(b, `,"odata.id":`...)
			b = edm.AppendString(b, baseURL+"/Tables('"+name+"')")
			b = append(b, `,"odata.editLink":`...)
			b = edm.AppendString(b, "Tables('"+name+"')")
			b = append(b, ',')
		}
	}
	b = append(b, `"TableName":`...)
	b = edm.AppendString(b, name)
	return append(b, '}')
}

// keyLiteral quotes a key as an OData string literal for a URL, as Azure
// writes it in odata.id, odata.editLink, Location and DataServiceId: the
// key percent-encoded as a path segment, except its quotes, which are
// doubled and written as they are, not as %27%27: the Java SDK's
// recordings TableAsyncClientTest.getEntityWithSingleQuotesInPartitionKey
// and submitTransactionAllActionsForEntitiesWithSingleQuotesInPartitionKey
// (Azure/azure-sdk-for-java,
// sdk/tables/azure-data-tables/src/test/resources/session-records). No
// recording shows another character Azure leaves unescaped, so the others
// stay percent-encoded.
func keyLiteral(k string) string {
	return "'" + strings.ReplaceAll(url.PathEscape(k), "%27", "''") + "'"
}

// entityLocation is the entity's URL, for Location and DataServiceId. A
// batch writes one per insert, so it is built in one allocation.
func entityLocation(baseURL, table string, e *model.Entity) string {
	var b strings.Builder
	b.Grow(len(baseURL) + len(table) + len("/(PartitionKey='',RowKey='')") + len(e.PartitionKey) + len(e.RowKey))
	b.WriteString(baseURL)
	b.WriteByte('/')
	b.WriteString(table)
	b.WriteString("(PartitionKey=")
	writeKeyLiteral(&b, e.PartitionKey)
	b.WriteString(",RowKey=")
	writeKeyLiteral(&b, e.RowKey)
	b.WriteByte(')')
	return b.String()
}

// writeKeyLiteral writes keyLiteral(k). A key of URL-unreserved bytes only
// (letters, digits and "-._~"), the usual kind, has no quote to double and
// nothing url.PathEscape would change, so it is written as it is.
func writeKeyLiteral(b *strings.Builder, k string) {
	for i := 0; i < len(k); i++ {
		if !unreserved[k[i]] {
			b.WriteString(keyLiteral(k))
			return
		}
	}
	b.WriteByte('\'')
	b.WriteString(k)
	b.WriteByte('\'')
}

// unreserved holds the RFC 3986 unreserved characters, which no URL
// encoding changes.
var unreserved = func() (t [256]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
	}
	return t
}()
