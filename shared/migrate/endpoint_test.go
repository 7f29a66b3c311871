package migrate

import (
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/auth"
)

func TestParseConnectionString(t *testing.T) {
	tests := []struct {
		name, in     string
		want         connectionString
		wantErr      string
		wantEndpoint string
	}{
		{name: "emulator style", in: "DefaultEndpointsProtocol=http;AccountName=dev;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:10002/dev/;",
			wantEndpoint: "http://127.0.0.1:10002/dev", want: connectionString{account: "dev", key: "a2V5"}},
		{name: "azure style", in: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.windows.net",
			wantEndpoint: "https://acct.table.core.windows.net", want: connectionString{account: "acct", key: "a2V5"}},
		{name: "default protocol and suffix", in: "AccountName=acct;AccountKey=a2V5",
			wantEndpoint: "https://acct.table.core.windows.net", want: connectionString{account: "acct", key: "a2V5"}},
		{name: "sas keeps the table endpoint", in: "TableEndpoint=http://127.0.0.1:9/dev;SharedAccessSignature=sv=2019-02-02&sig=abc",
			wantEndpoint: "http://127.0.0.1:9/dev", want: connectionString{sas: "sv=2019-02-02&sig=abc"}},
		{name: "development storage", in: "UseDevelopmentStorage=true",
			wantEndpoint: "http://127.0.0.1:10002/devstoreaccount1", want: connectionString{account: "devstoreaccount1", key: auth.DevStoreAccountKey}},
		{name: "keys are case-insensitive", in: "accountname=acct;accountkey=a2V5;tableendpoint=http://h/acct",
			wantEndpoint: "http://h/acct", want: connectionString{account: "acct", key: "a2V5"}},
		{name: "no credentials", in: "AccountName=acct;TableEndpoint=http://h", wantErr: "AccountKey or SharedAccessSignature"},
		{name: "no account", in: "AccountKey=a2V5;EndpointSuffix=x", wantErr: "AccountName"},
		{name: "key without account", in: "AccountKey=a2V5;TableEndpoint=http://h", wantErr: "AccountKey needs AccountName"},
		{name: "garbage", in: "hello", wantErr: "key=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConnectionString(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.endpoint = tt.wantEndpoint
			if got != tt.want {
				t.Fatalf("= %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestOpenEndpoint(t *testing.T) {
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
