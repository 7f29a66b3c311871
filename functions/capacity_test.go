package functions_test

import (
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/dynamoproxy"
	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/internal/spreadload"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/deploy"
)

// TestBootstrapsOneTableAtTenKeys: the real bootstraps, their DynamoDB
// behind a proxy that gives each partition key spreadload.KeyCapacity read
// and write units a second as DynamoDB does (throttling past them), pass
// one table spread over 200 PartitionKeys ten times that, unthrottled.
// Every operation looks its table up in the catalog (each execution
// environment confirms it), and no key of the catalog or the shared table
// carries more than a tenth of the operations.
func TestBootstrapsOneTableAtTenKeys(t *testing.T) {
	endpoint, rie, dir := needBootstraps(t)
	proxy, err := dynamoproxy.Start(dynamoproxy.Config{Upstream: endpoint,
		Capacity: dynamoproxy.Capacity{ReadUnits: spreadload.KeyCapacity, WriteUnits: spreadload.KeyCapacity}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	d := startDeploymentAt(t, dir, rie, proxy.URL())
	g := newGateway(t, gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: gatewayevent.SampleStage}, d.invoke)
	dev := auth.DevStoreAccount()
	connStr := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;",
		dev.Name, auth.DevStoreAccountKey, g.accountURL(dev.Name))
	svc, err := aztables.NewServiceClientFromConnectionString(connStr, &aztables.ClientOptions{
		ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(t.Context(), "Busy", nil); err != nil {
		t.Fatal(err)
	}
	spreadload.CheckTenKeys(t, proxy, svc.NewClient("Busy"))
}
