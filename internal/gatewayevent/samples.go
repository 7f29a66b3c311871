package gatewayevent

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// Sample is one fixture of events/: the event API Gateway delivers for one
// REST operation, signed with the storage emulator's public key for
// devstoreaccount1, and the status the function answers when the samples
// run in order against an empty account.
type Sample struct {
	// Name is the file name without .json; Function the directory.
	Name       string
	Function   string
	Operation  string
	Event      events.APIGatewayProxyRequest
	WantStatus int
}

// File is the sample's path below the events directory.
func (s Sample) File() string { return s.Function + "/" + s.Name + ".json" }

// Sample fixtures address the table SampleTable in devstoreaccount1 through
// stage SampleStage of an execute-api domain.
const (
	SampleTable = "samples"
	SampleStage = "Prod"
	sampleHost  = "abcdef1234.execute-api.us-east-1.amazonaws.com"
)

type sampleSpec struct {
	name                      string
	op                        operation.Operation
	method, path, query, body string
	header                    map[string]string
	want                      int
}

// sampleSpecs run in this order: create the table, write and read
// entities every way, ACL and service properties, then delete it all.
// Every body and header is what an Azure SDK sends.
func sampleSpecs() []sampleSpec {
	const (
		acct      = "/" + auth.DevStoreAccountName
		secondary = acct + "-secondary"
		table     = acct + "/" + SampleTable
		entity    = table + "(PartitionKey='p1',RowKey='r1')"
		json      = "application/json"
		minMD     = "application/json;odata=minimalmetadata"
	)
	entityAt := func(rk string) string { return table + "(PartitionKey='p1',RowKey='" + rk + "')" }
	write := func(extra map[string]string) map[string]string {
		h := map[string]string{"Content-Type": json, "Accept": minMD}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	batchBody := strings.Join([]string{
		"--batch_5c9a1d6e",
		"Content-Type: multipart/mixed; boundary=changeset_7f0e2b3c",
		"",
		"--changeset_7f0e2b3c",
		"Content-Type: application/http",
		"Content-Transfer-Encoding: binary",
		"",
		"POST https://" + sampleHost + "/" + SampleStage + table + " HTTP/1.1",
		"Accept: application/json;odata=minimalmetadata",
		"Content-Type: application/json",
		"Prefer: return-no-content",
		"",
		`{"PartitionKey":"p1","RowKey":"r4","Name":"Grace"}`,
		"--changeset_7f0e2b3c",
		"Content-Type: application/http",
		"Content-Transfer-Encoding: binary",
		"",
		"POST https://" + sampleHost + "/" + SampleStage + table + " HTTP/1.1",
		"Accept: application/json;odata=minimalmetadata",
		"Content-Type: application/json",
		"Prefer: return-no-content",
		"",
		`{"PartitionKey":"p1","RowKey":"r5","Name":"Katherine"}`,
		"--changeset_7f0e2b3c--",
		"",
		"--batch_5c9a1d6e--",
		"",
	}, "\r\n")
	const acl = `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>readers</Id>` +
		`<AccessPolicy><Start>2024-01-01T00:00:00Z</Start><Expiry>2099-01-01T00:00:00Z</Expiry><Permission>r</Permission></AccessPolicy>` +
		`</SignedIdentifier></SignedIdentifiers>`
	const props = `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>` +
		`<Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>` +
		`<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>` +
		`<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>` +
		`<Cors><CorsRule><AllowedOrigins>https://app.example.com</AllowedOrigins><AllowedMethods>GET,PUT,PATCH,DELETE,POST</AllowedMethods>` +
		`<MaxAgeInSeconds>600</MaxAgeInSeconds><ExposedHeaders>x-ms-*</ExposedHeaders><AllowedHeaders>x-ms-*,content-type,accept,prefer,if-match</AllowedHeaders></CorsRule></Cors>` +
		`</StorageServiceProperties>`
	return []sampleSpec{
		{"createtable", operation.CreateTable, http.MethodPost, acct + "/Tables", "", `{"TableName":"` + SampleTable + `"}`,
			write(map[string]string{"Prefer": "return-no-content"}), http.StatusNoContent},
		{"querytables", operation.QueryTables, http.MethodGet, acct + "/Tables", "$filter=TableName eq '" + SampleTable + "'", "",
			map[string]string{"Accept": minMD}, http.StatusOK},
		{"gettable", operation.GetTable, http.MethodGet, acct + "/Tables('" + SampleTable + "')", "", "",
			map[string]string{"Accept": minMD}, http.StatusOK},
		{"insertentity", operation.InsertEntity, http.MethodPost, table, "",
			`{"PartitionKey":"p1","RowKey":"r1","Name":"Ada, Countess of Lovelace","Born@odata.type":"Edm.DateTime","Born":"1815-12-10T00:00:00Z","Score":36}`,
			write(map[string]string{"Prefer": "return-content"}), http.StatusCreated},
		{"getentity", operation.GetEntity, http.MethodGet, entity, "", "", map[string]string{"Accept": minMD}, http.StatusOK},
		{"queryentities", operation.QueryEntities, http.MethodGet, table + "()", "$filter=PartitionKey eq 'p1' and Score ge 30&$top=10", "",
			map[string]string{"Accept": minMD}, http.StatusOK},
		{"insertorreplaceentity", operation.InsertOrReplaceEntity, http.MethodPut, entityAt("r2"), "",
			`{"PartitionKey":"p1","RowKey":"r2","Name":"Alan"}`, write(nil), http.StatusNoContent},
		{"updateentity", operation.UpdateEntity, http.MethodPut, entity, "",
			`{"PartitionKey":"p1","RowKey":"r1","Name":"Ada Lovelace","Score":37}`,
			write(map[string]string{"If-Match": "*"}), http.StatusNoContent},
		{"mergeentity", operation.MergeEntity, http.MethodPatch, entity, "", `{"Score":38}`,
			write(map[string]string{"If-Match": "*"}), http.StatusNoContent},
		{"insertormergeentity", operation.InsertOrMergeEntity, http.MethodPatch, entityAt("r3"), "", `{"Name":"Edsger"}`,
			write(nil), http.StatusNoContent},
		{"mergeentity-xhttpmethod", operation.MergeEntity, http.MethodPost, entityAt("r2"), "", `{"Score":41}`,
			write(map[string]string{"If-Match": "*", "X-HTTP-Method": "MERGE"}), http.StatusNoContent},
		{"entitygrouptransaction", operation.EntityGroupTransaction, http.MethodPost, acct + "/$batch", "", batchBody,
			map[string]string{"Content-Type": "multipart/mixed; boundary=batch_5c9a1d6e", "Accept": minMD}, http.StatusAccepted},
		{"settableacl", operation.SetTableACL, http.MethodPut, table, "comp=acl", acl,
			map[string]string{"Content-Type": "application/xml"}, http.StatusNoContent},
		{"gettableacl", operation.GetTableACL, http.MethodGet, table, "comp=acl", "", nil, http.StatusOK},
		{"setserviceproperties", operation.SetServiceProperties, http.MethodPut, acct + "/", "restype=service&comp=properties", props,
			map[string]string{"Content-Type": "application/xml"}, http.StatusAccepted},
		{"getserviceproperties", operation.GetServiceProperties, http.MethodGet, acct + "/", "restype=service&comp=properties", "", nil, http.StatusOK},
		// The account's secondary location is a read-only view: Get Table
		// Service Stats is served there only, reads work, writes are 403.
		{"getservicestats", operation.GetServiceStats, http.MethodGet, secondary + "/", "restype=service&comp=stats", "", nil, http.StatusOK},
		{"queryentities-secondary", operation.QueryEntities, http.MethodGet, secondary + "/" + SampleTable + "()", "$filter=true", "",
			map[string]string{"Accept": minMD}, http.StatusOK},
		{"insertentity-secondary", operation.InsertEntity, http.MethodPost, secondary + "/" + SampleTable, "",
			`{"PartitionKey":"p1","RowKey":"r9","Name":"on the secondary"}`, write(nil), http.StatusForbidden},
		{"preflight", operation.Preflight, http.MethodOptions, table, "", "",
			map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "PATCH",
				"Access-Control-Request-Headers": "content-type,if-match,x-ms-date,x-ms-version"}, http.StatusOK},
		{"deleteentity", operation.DeleteEntity, http.MethodDelete, entity, "", "", map[string]string{"If-Match": "*"}, http.StatusNoContent},
		{"deletetable", operation.DeleteTable, http.MethodDelete, acct + "/Tables('" + SampleTable + "')", "", "", nil, http.StatusNoContent},
	}
}

// Samples builds the events/ fixtures, signed at now.
func Samples(now time.Time) ([]Sample, error) {
	dev := auth.DevStoreAccount()
	var out []Sample
	for _, s := range sampleSpecs() {
		u := &url.URL{Scheme: "https", Host: sampleHost, Path: "/" + SampleStage + s.path}
		if s.query != "" {
			q, err := url.ParseQuery(strings.ReplaceAll(s.query, " ", "%20"))
			if err != nil {
				return nil, fmt.Errorf("gatewayevent: sample %s: %w", s.name, err)
			}
			u.RawQuery = q.Encode()
		}
		r, err := http.NewRequest(s.method, u.String(), strings.NewReader(s.body))
		if err != nil {
			return nil, fmt.Errorf("gatewayevent: sample %s: %w", s.name, err)
		}
		if s.body == "" {
			r.Body = http.NoBody
		}
		r.Header.Set("x-ms-version", "2019-02-02")
		r.Header.Set("DataServiceVersion", "3.0")
		r.Header.Set("User-Agent", "azsdk-go-aztables/v1.4.1 (tablebridge events)")
		for k, v := range s.header {
			r.Header.Set(k, v)
		}
		r.Header.Set("x-ms-date", now.UTC().Format(http.TimeFormat))
		if s.method != http.MethodOptions { // a preflight carries no credentials
			if err := auth.SignSharedKeyLite(r, dev.Name, dev.Keys[0]); err != nil {
				return nil, fmt.Errorf("gatewayevent: sample %s: %w", s.name, err)
			}
		}
		r.RemoteAddr = "203.0.113.7:51234"
		ev, fn, err := NewEvent(r, EventOptions{Stage: SampleStage, Now: func() time.Time { return now }})
		if err != nil {
			return nil, fmt.Errorf("gatewayevent: sample %s: %w", s.name, err)
		}
		if !fn.Serves(s.op) {
			return nil, fmt.Errorf("gatewayevent: sample %s: %s is routed to %s, which does not serve it", s.name, s.op, fn.Name)
		}
		ev.RequestContext.RequestID = fmt.Sprintf("00000000-0000-4000-8000-%012d", len(out)+1)
		out = append(out, Sample{Name: s.name, Function: fn.Name, Operation: s.op.String(), Event: ev, WantStatus: s.want})
	}
	return out, nil
}
