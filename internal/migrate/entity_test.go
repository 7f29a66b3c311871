package migrate

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

func edgeValues() map[string]edm.Value {
	dt, _ := edm.ParseDateTime("2024-02-29T12:34:56.1234567Z")
	return map[string]edm.Value{
		"I32min": edm.NewInt32(math.MinInt32),
		"I32max": edm.NewInt32(math.MaxInt32),
		"I64min": edm.NewInt64(math.MinInt64),
		"I64max": edm.NewInt64(math.MaxInt64),
		"NaN":    edm.NewDouble(math.NaN()),
		"PInf":   edm.NewDouble(math.Inf(1)),
		"NInf":   edm.NewDouble(math.Inf(-1)),
		"NZero":  edm.NewDouble(math.Copysign(0, -1)),
		"One":    edm.NewDouble(1),
		"Tiny":   edm.NewDouble(5e-324),
		"Max":    edm.NewDouble(math.MaxFloat64),
		"Big":    edm.NewDouble(1e21),
		"Frac":   edm.NewDouble(0.1),
		"Date":   edm.NewDateTime(dt),
		"Guid":   edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"),
		"Bin":    edm.NewBinary([]byte{0, 1, 0xff}),
		"BinNil": edm.NewBinary([]byte{}),
		"T":      edm.NewBoolean(true),
		"F":      edm.NewBoolean(false),
		"S":      edm.NewString("Grüße 😀 \"q\" \\ \n \u0001 <&>"),
		"SEmpty": edm.NewString(""),
		"S42":    edm.NewString("42"),
	}
}

func sameEntity(t *testing.T, want, got *model.Entity) {
	t.Helper()
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey {
		t.Fatalf("keys = (%q, %q), want (%q, %q)", got.PartitionKey, got.RowKey, want.PartitionKey, want.RowKey)
	}
	if len(got.Properties) != len(want.Properties) {
		t.Errorf("%d properties, want %d", len(got.Properties), len(want.Properties))
	}
	for n, w := range want.Properties {
		g, ok := got.Properties[n]
		if !ok || !w.Equal(g) {
			t.Errorf("%s = %+v, want %+v", n, g, w)
		}
	}
}

func TestAppendEntityJSONRoundTrip(t *testing.T) {
	t.Parallel()
	ts := time.Date(2023, 1, 2, 3, 4, 5, 600, time.UTC)
	e := &model.Entity{PartitionKey: "pk 'q'", RowKey: "", Timestamp: ts, Properties: edgeValues()}
	t.Run("through DecodeEntity", func(t *testing.T) {
		got, err := DecodeEntity(AppendEntityJSON(nil, e, true))
		if err != nil {
			t.Fatal(err)
		}
		sameEntity(t, e, got)
		if !got.Timestamp.Equal(ts) {
			t.Errorf("Timestamp = %v, want %v", got.Timestamp, ts)
		}
	})
	for name, annotate := range map[string]annotateFor{"all annotated": annotateAll, "annotated for the SDK": annotateForSDK} {
		t.Run("through the SDK's map[string]any re-encoding, "+name, func(t *testing.T) {
			// aztables' SubmitTransaction does exactly this to each
			// entity.
			var m map[string]any
			if err := json.Unmarshal(appendEntityJSON(nil, e, false, annotate), &m); err != nil {
				t.Fatal(err)
			}
			again, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeEntity(again)
			if err != nil {
				t.Fatalf("%v in %s", err, again)
			}
			sameEntity(t, e, got)
		})
	}
	t.Run("annotations", func(t *testing.T) {
		js := string(AppendEntityJSON(nil, e, true))
		for _, want := range []string{
			`"One@odata.type":"Edm.Double","One":1.0`,
			`"NZero@odata.type":"Edm.Double","NZero":-0.0`,
			`"I32max@odata.type":"Edm.Int32","I32max":2147483647`,
			`"T@odata.type":"Edm.Boolean","T":true`,
			`"Timestamp@odata.type":"Edm.DateTime","Timestamp":"2023-01-02T03:04:05.0000006Z"`,
			`"S42":"42"`,
		} {
			if !strings.Contains(js, want) {
				t.Errorf("missing %s in %s", want, js)
			}
		}
		if strings.Contains(js, "S42@odata.type") {
			t.Errorf("strings must not be annotated: %s", js)
		}
		if !strings.HasPrefix(js, `{"PartitionKey":"pk 'q'","RowKey":"",`) {
			t.Errorf("keys must come first: %s", js)
		}
	})
	t.Run("no timestamp when zero", func(t *testing.T) {
		c := *e
		c.Timestamp = time.Time{}
		if js := string(AppendEntityJSON(nil, &c, true)); strings.Contains(js, "Timestamp") {
			t.Errorf("zero Timestamp written: %s", js)
		}
	})
}

func TestDecodeEntity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		check   func(t *testing.T, e *model.Entity)
		wantErr string
	}{
		{
			name: "minimal metadata infers from JSON",
			in:   `{"odata.etag":"W/\"x\"","PartitionKey":"p","RowKey":"r","Timestamp":"2024-01-01T00:00:00.1234567Z","I":5,"D":1.0,"E":1e3,"B":true,"L@odata.type":"Edm.Int64","L":"7","N":null}`,
			check: func(t *testing.T, e *model.Entity) {
				want := map[string]edm.Value{"I": edm.NewInt32(5), "D": edm.NewDouble(1), "E": edm.NewDouble(1000), "B": edm.NewBoolean(true), "L": edm.NewInt64(7)}
				sameEntity(t, &model.Entity{PartitionKey: "p", RowKey: "r", Properties: want}, e)
				if e.Timestamp.Nanosecond() != 123456700 {
					t.Errorf("Timestamp = %v", e.Timestamp)
				}
			},
		},
		{
			name: "full metadata annotations win",
			in:   `{"odata.type":"acct.t","odata.id":"x","PartitionKey":"p","RowKey":"r","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-01-01T00:00:00Z","D@odata.type":"Edm.Double","D":1}`,
			check: func(t *testing.T, e *model.Entity) {
				if v := e.Properties["D"]; v.Type != edm.Double || v.Float != 1 {
					t.Errorf("D = %+v, want Edm.Double 1", v)
				}
			},
		},
		{name: "no keys", in: `{"A":1}`, wantErr: "without PartitionKey"},
		{name: "key not a string", in: `{"PartitionKey":1,"RowKey":"r"}`, wantErr: "PartitionKey is Edm.Int32"},
		{name: "bad timestamp", in: `{"PartitionKey":"p","RowKey":"r","Timestamp":"yesterday"}`, wantErr: "Timestamp"},
		{name: "timestamp of another type", in: `{"PartitionKey":"p","RowKey":"r","Timestamp":5}`, wantErr: "Timestamp is Edm.Int32"},
		{name: "nested", in: `{"PartitionKey":"p","RowKey":"r","X":{"a":1}}`, wantErr: "nested"},
		{name: "not json", in: `{`, wantErr: "edm:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := DecodeEntity([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, e)
		})
	}
}

func TestKeepTimestamp(t *testing.T) {
	t.Parallel()
	ts := time.Date(2020, 5, 6, 7, 8, 9, 1234500, time.UTC)
	t.Run("adds the property", func(t *testing.T) {
		e := &model.Entity{PartitionKey: "p", RowKey: "r", Timestamp: ts, Properties: map[string]edm.Value{}}
		if err := keepTimestamp(e, "SourceTimestamp"); err != nil {
			t.Fatal(err)
		}
		if v := e.Properties["SourceTimestamp"]; v.Type != edm.DateTime || !v.Time.Equal(ts) {
			t.Fatalf("SourceTimestamp = %+v", v)
		}
	})
	t.Run("empty name does nothing", func(t *testing.T) {
		e := &model.Entity{Properties: map[string]edm.Value{}}
		if err := keepTimestamp(e, ""); err != nil || len(e.Properties) != 0 {
			t.Fatalf("err = %v, props = %v", err, e.Properties)
		}
	})
	t.Run("name taken", func(t *testing.T) {
		e := &model.Entity{Timestamp: ts, Properties: map[string]edm.Value{"X": edm.NewInt32(1)}}
		if err := keepTimestamp(e, "X"); err == nil || !strings.Contains(err.Error(), "already has") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no timestamp", func(t *testing.T) {
		e := &model.Entity{Properties: map[string]edm.Value{}}
		if err := keepTimestamp(e, "X"); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestValidateKeepTimestamp(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"", true}, {"SourceTimestamp", true}, {"_ts", true},
		{"Timestamp", false}, {"PartitionKey", false}, {"RowKey", false}, {"has-dash", false}, {"1st", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := ValidateKeepTimestamp(tt.name); (err == nil) != tt.ok {
				t.Fatalf("ValidateKeepTimestamp(%q) = %v, want ok=%v", tt.name, err, tt.ok)
			}
		})
	}
}
