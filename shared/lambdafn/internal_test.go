package lambdafn

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/tablebridge/tablebridge/shared/operation"
)

type fakeSecrets struct {
	out *secretsmanager.GetSecretValueOutput
	err error
	id  string
}

func (f *fakeSecrets) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.id = aws.ToString(in.SecretId)
	return f.out, f.err
}

func TestFetchAccount(t *testing.T) {
	good := `{"accountName":"acct","keys":"` + strings.Repeat("Zz09", 44) + `"}`
	tests := []struct {
		name    string
		fake    fakeSecrets
		wantErr string
	}{
		{"secret string", fakeSecrets{out: &secretsmanager.GetSecretValueOutput{SecretString: aws.String(good)}}, ""},
		{"Secrets Manager refuses", fakeSecrets{err: errors.New("AccessDeniedException: not allowed")}, "AccessDeniedException"},
		{"binary secret", fakeSecrets{out: &secretsmanager.GetSecretValueOutput{SecretBinary: []byte("x")}}, "binary"},
		{"malformed secret", fakeSecrets{out: &secretsmanager.GetSecretValueOutput{SecretString: aws.String(`{}`)}}, `no "keys"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acc, _, err := fetchAccount(context.Background(), &tc.fake, "tablebridge/keys", "acct")
			if tc.fake.id != "tablebridge/keys" {
				t.Errorf("asked for secret %q", tc.fake.id)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "tablebridge/keys") {
					t.Fatalf("error %v, want one mentioning %q and the secret", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(acc.Keys) != 2 {
				t.Fatalf("account %+v, err %v", acc, err)
			}
		})
	}
}

// TestMeterCapacity runs a real DynamoDB client against a stub endpoint:
// inside a request's context the call asks for TOTAL consumed capacity and
// the units land on the request's meter; outside, nothing is asked.
func TestMeterCapacity(t *testing.T) {
	var lastBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		lastBody = string(b)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if strings.Contains(lastBody, "TOTAL") {
			_, _ = io.WriteString(w, `{"ConsumedCapacity":{"TableName":"t","CapacityUnits":0.5}}`)
			return
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	client := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), DisableValidateResponseChecksum: true,
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""),
	}, MeterCapacity)
	get := &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"PartitionKey": &types.AttributeValueMemberS{Value: "p"}}}

	if _, err := client.GetItem(context.Background(), get); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(lastBody, "ReturnConsumedCapacity") {
		t.Errorf("outside a request the call asked for capacity: %s", lastBody)
	}

	ctx := withCapacityMeter(context.Background())
	for range 2 {
		if _, err := client.GetItem(ctx, get); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(lastBody, `"ReturnConsumedCapacity":"TOTAL"`) {
		t.Errorf("request body %s", lastBody)
	}
	if read, write, calls := capacityFrom(ctx).total(); read != 1 || write != 0 || calls != 2 {
		t.Errorf("meter = %v read and %v write units over %d calls, want 1 read over 2", read, write, calls)
	}
}

func TestConsumedUnitsOfEveryOutput(t *testing.T) {
	one := &types.ConsumedCapacity{CapacityUnits: aws.Float64(1.5)}
	two := []types.ConsumedCapacity{{CapacityUnits: aws.Float64(2)}, {CapacityUnits: aws.Float64(0.5)}, {}}
	tests := []struct {
		name  string
		in    any
		out   any
		want  float64
		write bool
	}{
		{"GetItem", &dynamodb.GetItemInput{}, &dynamodb.GetItemOutput{ConsumedCapacity: one}, 1.5, false},
		{"PutItem", &dynamodb.PutItemInput{}, &dynamodb.PutItemOutput{ConsumedCapacity: one}, 1.5, true},
		{"UpdateItem", &dynamodb.UpdateItemInput{}, &dynamodb.UpdateItemOutput{ConsumedCapacity: one}, 1.5, true},
		{"DeleteItem", &dynamodb.DeleteItemInput{}, &dynamodb.DeleteItemOutput{ConsumedCapacity: one}, 1.5, true},
		{"Query", &dynamodb.QueryInput{}, &dynamodb.QueryOutput{ConsumedCapacity: one}, 1.5, false},
		{"Scan", &dynamodb.ScanInput{}, &dynamodb.ScanOutput{ConsumedCapacity: one}, 1.5, false},
		{"TransactWriteItems", &dynamodb.TransactWriteItemsInput{}, &dynamodb.TransactWriteItemsOutput{ConsumedCapacity: two}, 2.5, true},
		{"TransactGetItems", &dynamodb.TransactGetItemsInput{}, &dynamodb.TransactGetItemsOutput{ConsumedCapacity: two}, 2.5, false},
		{"DescribeTable is not metered", &dynamodb.DescribeTableInput{}, &dynamodb.DescribeTableOutput{}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			askForCapacity(tc.in)
			if got, write := consumedUnits(tc.out); got != tc.want || write != tc.write {
				t.Errorf("units = %v (write %t), want %v (write %t)", got, write, tc.want, tc.write)
			}
			if _, isDescribe := tc.in.(*dynamodb.DescribeTableInput); !isDescribe &&
				!strings.Contains(strings.ToUpper(fmtInput(tc.in)), "TOTAL") {
				t.Errorf("%T does not ask for TOTAL", tc.in)
			}
		})
	}
}

func fmtInput(in any) string {
	switch v := in.(type) {
	case *dynamodb.GetItemInput:
		return string(v.ReturnConsumedCapacity)
	case *dynamodb.PutItemInput:
		return string(v.ReturnConsumedCapacity)
	case *dynamodb.UpdateItemInput:
		return string(v.ReturnConsumedCapacity)
	case *dynamodb.DeleteItemInput:
		return string(v.ReturnConsumedCapacity)
	case *dynamodb.QueryInput:
		return string(v.ReturnConsumedCapacity)
	case *dynamodb.ScanInput:
		return string(v.ReturnConsumedCapacity)
	case *dynamodb.TransactWriteItemsInput:
		return string(v.ReturnConsumedCapacity)
	case *dynamodb.TransactGetItemsInput:
		return string(v.ReturnConsumedCapacity)
	}
	return ""
}

func TestSplitStagePath(t *testing.T) {
	tests := []struct {
		full, resource       string
		wantPrefix, wantRest string
		wantOK               bool
	}{
		{"/Prod/acct/Tables", operation.ResourceTables, "/Prod", "/acct/Tables", true},
		{"/acct/Tables", operation.ResourceTables, "", "/acct/Tables", true},
		{"/v1/tables/acct/t()", operation.ResourceAny, "/v1/tables", "/acct/t()", true},
		{"/Prod/acct/", operation.ResourceAccount, "/Prod", "/acct/", true},
		{"/Prod/acct", operation.ResourceAccount, "/Prod", "/acct", true},
		{"/Prod/acct/t(PartitionKey='a%2Fb',RowKey='')", operation.ResourceAny, "/Prod", "/acct/t(PartitionKey='a%2Fb',RowKey='')", true},
		{"/acct", operation.ResourceTables, "", "", false},
		{"", operation.ResourceAny, "", "", false},
		{"/Prod/acct/Tables", "", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.full+" "+tc.resource, func(t *testing.T) {
			prefix, rest, ok := splitStagePath(tc.full, tc.resource)
			if prefix != tc.wantPrefix || rest != tc.wantRest || ok != tc.wantOK {
				t.Errorf("got %q %q %v, want %q %q %v", prefix, rest, ok, tc.wantPrefix, tc.wantRest, tc.wantOK)
			}
		})
	}
}
