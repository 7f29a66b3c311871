package functions_test

import (
	"fmt"
	"testing"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/internal/linearize"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/deploy"
)

// runHistories checks concurrent histories (internal/linearize) through
// the real bootstraps: the REST API's events, each function under the
// emulator as one execution environment with its own catalog cache, on
// the shared layout of DynamoDB Local.
func runHistories(t *testing.T, d *deployment) {
	g := newGateway(t, gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: gatewayevent.SampleStage}, d.invoke)
	dev := auth.DevStoreAccount()
	svc := protocoltest.NewServiceClient(t, fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;",
		dev.Name, auth.DevStoreAccountKey, g.accountURL(dev.Name)))
	linearize.Test(t, linearize.Config{Name: "lambda"}, svc)
	if n := g.fails.Load(); n != 0 {
		t.Errorf("%d invocations failed at the emulator", n)
	}
}
