package migrate

import (
	"strings"
	"testing"
)

func TestOpenEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, spec         string
		wantURL, wantTable string
		wantErr            string
	}{
		{name: "account SAS", spec: "https://acct.table.core.windows.net/?sv=2019-02-02&ss=t&srt=sco&sp=rl&sig=x",
			wantURL: "https://acct.table.core.windows.net"},
		{name: "table SAS on the table URL", spec: "https://acct.table.core.windows.net/Orders?sv=2019-02-02&tn=orders&sp=r&sig=x",
			wantURL: "https://acct.table.core.windows.net", wantTable: "orders"},
		{name: "table SAS, path style", spec: "http://127.0.0.1:10002/devstoreaccount1/Orders()?tn=Orders&sp=r&sig=x",
			wantURL: "http://127.0.0.1:10002/devstoreaccount1", wantTable: "Orders"},
		{name: "table SAS on the account URL", spec: "http://127.0.0.1:10002/devstoreaccount1?tn=Orders&sp=r&sig=x",
			wantURL: "http://127.0.0.1:10002/devstoreaccount1", wantTable: "Orders"},
		{name: "connection string", spec: "AccountName=a;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:1/a", wantURL: "http://127.0.0.1:1/a"},
		{name: "sas connection string", spec: "TableEndpoint=http://127.0.0.1:1/a;SharedAccessSignature=sv=1&sig=x", wantURL: "http://127.0.0.1:1/a"},
		{name: "URL without SAS", spec: "http://127.0.0.1:10002/devstoreaccount1", wantErr: "no SAS"},
		{name: "bad key", spec: "AccountName=a;AccountKey=!!!;TableEndpoint=http://h/a", wantErr: "AccountKey"},
		{name: "empty", spec: "  ", wantErr: "empty endpoint"},
		{name: "URL without host", spec: "http:///x?sig=1", wantErr: "no host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep, err := OpenEndpoint(tt.spec, EndpointOptions{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "sig=") {
					t.Fatalf("error leaks the signature: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ep.Describe() != tt.wantURL || ep.table != tt.wantTable {
				t.Fatalf("Describe() = %q, table %q; want %q, %q", ep.Describe(), ep.table, tt.wantURL, tt.wantTable)
			}
			if strings.Contains(ep.Describe(), "sig") || strings.Contains(ep.Describe(), "a2V5") {
				t.Fatalf("Describe() leaks credentials: %q", ep.Describe())
			}
		})
	}
}
