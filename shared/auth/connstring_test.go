package auth

import (
	"strings"
	"testing"
)

func TestParseConnectionString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     ConnectionString
		wantErr  string
	}{
		{name: "emulator style", in: "DefaultEndpointsProtocol=http;AccountName=dev;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:10002/dev/;",
			want: ConnectionString{Account: "dev", Key: "a2V5", TableEndpoint: "http://127.0.0.1:10002/dev"}},
		{name: "azure style", in: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.windows.net",
			want: ConnectionString{Account: "acct", Key: "a2V5", TableEndpoint: "https://acct.table.core.windows.net"}},
		{name: "default protocol and suffix", in: "AccountName=acct;AccountKey=a2V5",
			want: ConnectionString{Account: "acct", Key: "a2V5", TableEndpoint: "https://acct.table.core.windows.net"}},
		{name: "other suffix", in: "AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.example.net",
			want: ConnectionString{Account: "acct", Key: "a2V5", TableEndpoint: "https://acct.table.core.example.net"}},
		{name: "sas keeps the table endpoint", in: "TableEndpoint=http://127.0.0.1:9/dev;SharedAccessSignature=sv=2019-02-02&sig=abc",
			want: ConnectionString{SAS: "sv=2019-02-02&sig=abc", TableEndpoint: "http://127.0.0.1:9/dev"}},
		{name: "development storage", in: "UseDevelopmentStorage=true",
			want: ConnectionString{Account: DevStoreAccountName, Key: DevStoreAccountKey, TableEndpoint: "http://127.0.0.1:10002/devstoreaccount1"}},
		{name: "names are case-insensitive", in: "accountname=acct;accountkey=a2V5;tableendpoint=http://h/acct",
			want: ConnectionString{Account: "acct", Key: "a2V5", TableEndpoint: "http://h/acct"}},
		{name: "empty segments", in: " ;AccountName=acct;;AccountKey=a2V5; ",
			want: ConnectionString{Account: "acct", Key: "a2V5", TableEndpoint: "https://acct.table.core.windows.net"}},
		{name: "no credentials", in: "AccountName=acct;TableEndpoint=http://h", wantErr: "AccountKey or SharedAccessSignature"},
		{name: "no account", in: "AccountKey=a2V5;EndpointSuffix=x", wantErr: "AccountName"},
		{name: "key without account", in: "AccountKey=a2V5;TableEndpoint=http://h", wantErr: "AccountKey needs AccountName"},
		{name: "garbage", in: "hello", wantErr: "key=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConnectionString(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
