package dynamostore

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/store"
)

func TestIsLocalEndpoint(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		endpoint string
		want     bool
	}{
		{"", false},
		{"http://127.0.0.1:8000", true},
		{"http://localhost:8000", true},
		{"http://[::1]:8000", true},
		{"http://127.8.9.10:8000", true},
		{"https://dynamodb.eu-west-1.amazonaws.com", false},
		{"https://vpce-1a2b3c4d-5e6f.dynamodb.us-east-1.vpce.amazonaws.com", false},
		{"http://10.0.0.5:8000", false},
		{"http://localhost.example.com:8000", false},
		{"::not a url", false},
	} {
		if got := IsLocalEndpoint(c.endpoint); got != c.want {
			t.Errorf("IsLocalEndpoint(%q) = %t, want %t", c.endpoint, got, c.want)
		}
	}
}

// TestSettingsOptions: the one constructor of the store's Options for
// serve and the functions re-creates a missing catalog only on a local
// endpoint.
func TestSettingsOptions(t *testing.T) {
	t.Parallel()
	onAWS := Settings{TablePrefix: "tb-"}.Options()
	if onAWS.RecreateCatalog || !onAWS.RequireCatalog {
		t.Errorf("AWS options %+v; want the catalog required, not re-created", onAWS)
	}
	local := Settings{Endpoint: "http://127.0.0.1:8000", TablePrefix: "tb-"}.Options()
	if !local.RecreateCatalog || local.RequireCatalog {
		t.Errorf("local options %+v; want the catalog re-created", local)
	}
}

// TestRequireCatalog: with RequireCatalog (every endpoint but a local one)
// New refuses a missing catalog instead of creating it empty, and creates
// nothing.
func TestRequireCatalog(t *testing.T) {
	t.Parallel()
	ctx := dynamolocal.Context(t, testTimeout)
	client := dynamolocal.Client(t)
	prefix := dynamolocal.UniqueName("tbreq") + "."
	_, err := New(ctx, client, Options{TablePrefix: prefix, RequireCatalog: true})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("New without a catalog = %v; want ErrUnavailable", err)
	}
	if _, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(prefix + "catalog")}); !isTableMissing(err) {
		t.Fatalf("the catalog was created: %v", err)
	}
	// Once it exists (the stack made it), New opens it.
	if _, err := New(ctx, client, Options{TablePrefix: prefix}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, client, Options{TablePrefix: prefix, RequireCatalog: true}); err != nil {
		t.Fatalf("New with the catalog there: %v", err)
	}
}
