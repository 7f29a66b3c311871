package protocoltest

import (
	"net/http"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// queryFixture is the table every $filter case runs against. Each entity is
// named by "PartitionKey/RowKey" in the expectations.
var queryFixture = []string{
	`{"PartitionKey":"p","RowKey":"a","Name":"alice","Age":30,"Big":"5","Big@odata.type":"Edm.Int64",` +
		`"Score":1.5,"Active":true,"When":"2020-01-01T00:00:00Z","When@odata.type":"Edm.DateTime",` +
		`"Id":"11111111-1111-1111-1111-111111111111","Id@odata.type":"Edm.Guid",` +
		`"Data":"AQI=","Data@odata.type":"Edm.Binary","Mixed":5}`,
	`{"PartitionKey":"p","RowKey":"b","Name":"bob","Age":40,"Big":"9000000000","Big@odata.type":"Edm.Int64",` +
		`"Score":2.5,"Active":false,"When":"2021-06-15T12:00:00Z","When@odata.type":"Edm.DateTime",` +
		`"Id":"22222222-2222-2222-2222-222222222222","Id@odata.type":"Edm.Guid",` +
		`"Data":"Aw==","Data@odata.type":"Edm.Binary","Mixed":"5","Mixed@odata.type":"Edm.Int64"}`,
	`{"PartitionKey":"p","RowKey":"c","Name":"it's","Age":50,"Big":"-1","Big@odata.type":"Edm.Int64",` +
		`"Score":-3.25,"Active":true,"When":"2022-12-31T23:59:59.9999999Z","When@odata.type":"Edm.DateTime",` +
		`"Id":"33333333-3333-3333-3333-333333333333","Id@odata.type":"Edm.Guid",` +
		`"Data":"/wA=","Data@odata.type":"Edm.Binary","Mixed":"5"}`,
	`{"PartitionKey":"q","RowKey":"a","Name":"dave","Age":5,"Nick":"d","Mixed":"5","Mixed@odata.type":"Edm.Double"}`,
}

// suiteQuery covers Query Entities: the $filter grammar ("Querying tables
// and entities"), typed comparison, $select and $top.
func suiteQuery(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()
	c := newTable(t, sc, "fixture")
	table := TableName(t, "fixture")
	for _, e := range queryFixture {
		addEntity(t, c, e)
	}

	t.Run("Filter", func(t *testing.T) {
		for _, tc := range []struct {
			name, filter string
			want         []string
		}{
			{"StringEq", "Name eq 'bob'", []string{"p/b"}},
			{"StringWithDoubledQuote", "Name eq 'it''s'", []string{"p/c"}},
			{"StringNe", "Name ne 'bob'", []string{"p/a", "p/c", "q/a"}},
			{"StringGt", "Name gt 'bob'", []string{"p/c", "q/a"}},
			{"Int32Gt", "Age gt 30", []string{"p/b", "p/c"}},
			{"Int32Ge", "Age ge 30", []string{"p/a", "p/b", "p/c"}},
			{"Int32Lt", "Age lt 30", []string{"q/a"}},
			{"Int32Le", "Age le 5", []string{"q/a"}},
			{"Int32Ne", "Age ne 40", []string{"p/a", "p/c", "q/a"}},
			{"Int64Eq", "Big eq 9000000000L", []string{"p/b"}},
			{"Int64Gt", "Big gt 0L", []string{"p/a", "p/b"}},
			{"Int64Negative", "Big lt 0L", []string{"p/c"}},
			{"DoubleEq", "Score eq 2.5", []string{"p/b"}},
			{"DoubleLt", "Score lt 0.0", []string{"p/c"}},
			{"DoubleGe", "Score ge 1.5", []string{"p/a", "p/b"}},
			{"BoolTrue", "Active eq true", []string{"p/a", "p/c"}},
			{"BoolFalse", "Active eq false", []string{"p/b"}},
			{"BoolNe", "Active ne true", []string{"p/b"}},
			{"DateTimeGt", "When gt datetime'2021-01-01T00:00:00Z'", []string{"p/b", "p/c"}},
			{"DateTime100ns", "When eq datetime'2022-12-31T23:59:59.9999999Z'", []string{"p/c"}},
			{"DateTimeLtTick", "When lt datetime'2020-01-01T00:00:00.0000001Z'", []string{"p/a"}},
			{"Guid", "Id eq guid'22222222-2222-2222-2222-222222222222'", []string{"p/b"}},
			{"GuidNe", "Id ne guid'22222222-2222-2222-2222-222222222222'", []string{"p/a", "p/c"}},
			{"BinaryX", "Data eq X'0102'", []string{"p/a"}},
			{"BinaryKeyword", "Data eq binary'ff00'", []string{"p/c"}},
			{"PartitionKey", "PartitionKey eq 'q'", []string{"q/a"}},
			{"PartitionKeyAndRowKeyRange", "PartitionKey eq 'p' and RowKey gt 'a'", []string{"p/b", "p/c"}},
			{"RowKeyOnly", "RowKey eq 'a'", []string{"p/a", "q/a"}},
			{"And", "Age gt 30 and Active eq true", []string{"p/c"}},
			{"Or", "Age lt 35 or Name eq 'bob'", []string{"p/a", "p/b", "q/a"}},
			{"Not", "not (Age gt 30)", []string{"p/a", "q/a"}},
			{"Parentheses", "(Age eq 30 or Age eq 40) and not (Active eq false)", []string{"p/a"}},
			{"NestedParentheses", "((Name eq 'alice') or ((Name eq 'dave')))", []string{"p/a", "q/a"}},
			{"LiteralOnTheLeft", "30 lt Age", []string{"p/b", "p/c"}},
			{"MissingPropertyDoesNotMatch", "Nick eq 'd'", []string{"q/a"}},
			{"MissingPropertyNeverMatchesRange", "Nick lt 'zzz'", []string{"q/a"}},
			// Typed comparison: a property of another Edm type than the
			// literal does not match, even with an equal numeric value.
			{"Int64PropertyVsInt32Literal", "Big eq 5", nil},
			{"Int64PropertyVsInt64Literal", "Big eq 5L", []string{"p/a"}},
			{"MixedInt32", "Mixed eq 5", []string{"p/a"}},
			{"MixedInt64", "Mixed eq 5L", []string{"p/b"}},
			{"MixedString", "Mixed eq '5'", []string{"p/c"}},
			{"MixedDouble", "Mixed eq 5.0", []string{"q/a"}},
			{"StringPropertyVsNumber", "Name eq 5", nil},
			{"NoMatch", "Name eq 'nobody'", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := tc.filter
				got, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: &f})
				if keys := keysOf(t, got); !slices.Equal(keys, tc.want) {
					t.Errorf("$filter=%s matched %q, want %q", tc.filter, keys, tc.want)
				}
			})
		}
	})

	t.Run("MalformedFilterIsInvalidInput", func(t *testing.T) {
		for _, tc := range []struct{ name, filter string }{
			{"MissingOperand", "Name eq"},
			{"UnterminatedString", "Name eq 'bob"},
			{"UnbalancedParenthesis", "(Age gt 1"},
			{"UnknownOperator", "Age gtx 1"},
			{"DanglingAnd", "Age eq 1 and"},
			{"DoubleOr", "Name eq 'a' or or Name eq 'b'"},
			{"BadGuid", "Id eq guid'not-a-guid'"},
			{"BadDateTime", "When eq datetime'yesterday'"},
			{"OddHexDigits", "Data eq X'012'"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := tc.filter
				_, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f}).NextPage(ctxFor(t))
				wantError(t, err, http.StatusBadRequest, "InvalidInput")
			})
		}
	})

	t.Run("Select", func(t *testing.T) {
		for _, tc := range []struct {
			name, sel string
			want      []string // property names besides odata.* annotations
		}{
			{"Properties", "Name,Age", []string{"Age", "Name"}},
			{"Keys", "PartitionKey,RowKey", []string{"PartitionKey", "RowKey"}},
			{"KeysAndProperty", "RowKey,Score", []string{"RowKey", "Score"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				sel := tc.sel
				filter := "PartitionKey eq 'p'"
				got, _ := listAll(t, c, &aztables.ListEntitiesOptions{Select: &sel, Filter: &filter})
				if len(got) != 3 {
					t.Fatalf("got %d entities, want 3", len(got))
				}
				for _, e := range got {
					var names []string
					for k := range decodeJSON(t, e) {
						if len(k) < 6 || k[:6] != "odata." {
							names = append(names, k)
						}
					}
					slices.Sort(names)
					if !slices.Equal(names, tc.want) {
						t.Errorf("$select=%s returned properties %q, want %q (entity %s)", tc.sel, names, tc.want, e)
					}
				}
			})
		}
	})

	t.Run("Top", func(t *testing.T) {
		top := int32(2)
		page, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: &top}).NextPage(ctxFor(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entities) != 2 || page.NextPartitionKey == nil {
			t.Errorf("$top=2: %d entities, NextPartitionKey %v; want 2 and a continuation", len(page.Entities), page.NextPartitionKey)
		}
		top = 1000
		if _, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: &top}).NextPage(ctxFor(t)); err != nil {
			t.Errorf("$top=1000: %v", err)
		}
		// "Query Entities": a $top above 1000 is refused.
		top = 1001
		_, err = c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: &top}).NextPage(ctxFor(t))
		wantError(t, err, http.StatusBadRequest, "InvalidInput")
		for _, q := range []string{"$top=1001", "$top=5000"} {
			resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: q})
			wantRawError(t, resp, http.StatusBadRequest, "InvalidInput")
		}
	})
}
