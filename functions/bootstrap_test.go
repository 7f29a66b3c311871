package functions_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/internal/testissuer"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/lambdafn"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

func TestMain(m *testing.M) {
	code := dynamolocal.Main(m)
	if bootstraps.dir != "" {
		_ = os.RemoveAll(bootstraps.dir)
	}
	os.Exit(code)
}

// Targets the harness checks. Init is the emulator's INIT REPORT (process
// start to the first /next) on a loaded 2-core machine, so the hard limit
// is generous; the test logs the measured times.
const (
	maxBootstrapBytes = 13 << 20
	maxInitTime       = 2 * time.Second
	keysSecretID      = "tablebridge/test/account-keys"
	// The custom domain carries the REST API at restBasePath and the HTTP
	// API at httpAPIBasePath, the deployment's TABLEBRIDGE_BASE_PATH, as
	// template.yaml maps them (BasePath, HttpApiBasePath).
	restBasePath    = "tables"
	httpAPIBasePath = "http"
)

func functionNames() []string {
	var names []string
	for _, fn := range deploy.Functions() {
		names = append(names, fn.Name)
	}
	return names
}

// bootstrapNames are the functions the stack runs: the request-serving
// ones and the scheduled purge.
func bootstrapNames() []string { return append(functionNames(), deploy.PurgeFunctionName) }

// deployment is every function's bootstrap under the emulator over one
// DynamoDB Local table prefix.
type deployment struct {
	fns     map[string]*rieFunction
	secrets *secretsManager
	prefix  string
	// issuer is the OpenID issuer on loopback whose bearer tokens the
	// deployment accepts (TABLEBRIDGE_OAUTH_ISSUERS), signing with key.
	issuer *testissuer.Issuer
	key    *testissuer.Key
}

// baseEnv is the environment Lambda gives a function plus what
// template.yaml sets, pointed at loopback services.
func baseEnv(t testing.TB, endpoint, smURL, prefix string) []string {
	home := t.TempDir()
	return []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"AWS_REGION=" + dynamolocal.Region, "AWS_DEFAULT_REGION=" + dynamolocal.Region,
		// DynamoDB Local keeps one database per access key and region; the
		// test's own client uses the same pair.
		"AWS_ACCESS_KEY_ID=tablebridge", "AWS_SECRET_ACCESS_KEY=tablebridge",
		"AWS_CONFIG_FILE=" + filepath.Join(home, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "none"),
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_ENDPOINT_URL_SECRETS_MANAGER=" + smURL,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=512", "AWS_LAMBDA_FUNCTION_TIMEOUT=30",
		lambdafn.EnvAccountName + "=" + auth.DevStoreAccountName,
		lambdafn.EnvTablePrefix + "=" + prefix,
		lambdafn.EnvSharedTable + "=" + prefix + "entities",
		lambdafn.EnvKeysSecret + "=" + keysSecretID,
		lambdafn.EnvDynamoDBEndpoint + "=" + endpoint,
		lambdafn.EnvBasePath + "=" + httpAPIBasePath,
		lambdafn.EnvStackName + "=tablebridge-test",
		lambdafn.EnvLogLevel + "=info",
	}
}

// keysSecret holds the emulator key as key1 (the events are signed with
// it) and another key as key2, and a bearer token role assignment (reader
// for the object id "rie-reader"), which adds to TABLEBRIDGE_OAUTH_ROLES.
func keysSecret(t testing.TB) string {
	other := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("tablebridge second key ", 3)))
	b, err := json.Marshal(map[string]any{"accountName": auth.DevStoreAccountName, "key1": auth.DevStoreAccountKey, "key2": other,
		"oauthRoles": []map[string]string{{"claim": "oid", "value": "rie-reader", "role": "reader", "account": auth.DevStoreAccountName}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// needBootstraps skips t where the bootstraps cannot run, and returns the
// DynamoDB Local endpoint (skipping, or failing under CI, before the build
// when it is missing), the emulator and the folder of built bootstraps.
func needBootstraps(t *testing.T) (endpoint, rie, dir string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the bootstraps are linux binaries (provided.al2023)")
	}
	endpoint = dynamolocal.Endpoint(t)
	rie = rieBinary(t)
	return endpoint, rie, buildBootstraps(t)
}

// newStackTables creates what the stack declares on DynamoDB, the catalog
// and the shared table, under a table prefix of its own, and returns the
// prefix and a store on them.
func newStackTables(t testing.TB, name string) (string, *dynamostore.Store) {
	t.Helper()
	prefix := dynamolocal.UniqueName(name) + "-"
	st, err := dynamostore.New(dynamolocal.Context(t, time.Minute), dynamolocal.Client(t),
		dynamostore.Options{TablePrefix: prefix, Endpoint: dynamolocal.Endpoint(t)})
	if err != nil {
		t.Fatalf("create the catalog and the shared table: %v", err)
	}
	return prefix, st
}

// startDeployment creates the catalog table, as the template does, and
// starts every function under the emulator.
func startDeployment(t *testing.T, dir, rie string) *deployment {
	t.Helper()
	return startDeploymentAt(t, dir, rie, dynamolocal.Endpoint(t))
}

// startDeploymentAt is startDeployment with the functions' DynamoDB at
// endpoint (DynamoDB Local, or a proxy in front of it).
func startDeploymentAt(t *testing.T, dir, rie, endpoint string) *deployment {
	t.Helper()
	prefix, _ := newStackTables(t, "tbfn")
	d := &deployment{fns: map[string]*rieFunction{}, secrets: newSecretsManager(t, keysSecretID, keysSecret(t)), prefix: prefix}
	d.key = testissuer.NewKey(t, jose.RS256)
	d.issuer = testissuer.New(t, d.key)
	env := append(baseEnv(t, endpoint, d.secrets.srv.URL, prefix),
		lambdafn.EnvOAuthIssuers+"="+d.issuer.URL,
		lambdafn.EnvOAuthRoles+`=[{"claim":"oid","value":"rie-writer","role":"contributor","account":"`+auth.DevStoreAccountName+`"}]`)
	for _, name := range functionNames() {
		d.fns[name] = startRIE(t, rie, name, filepath.Join(dir, name, "bootstrap"), env)
	}
	return d
}

func (d *deployment) invoke(ctx context.Context, fn string, payload []byte) ([]byte, error) {
	f := d.fns[fn]
	if f == nil {
		return nil, fmt.Errorf("no function %q", fn)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return f.invoke(ctx, payload)
}

// profileMounts are the front doors the scenario runs through: each
// profile, on the execute-api domain and behind a custom domain.
func profileMounts() []struct {
	name string
	opts gatewayevent.Options
} {
	const domain = "tables.example.com"
	return []struct {
		name string
		opts gatewayevent.Options
	}{
		{"REST API stage Prod", gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: gatewayevent.SampleStage}},
		{"REST API custom domain", gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: gatewayevent.SampleStage, CustomDomain: domain, BasePath: restBasePath}},
		{"HTTP API stage prod", gatewayevent.Options{Profile: deploy.ProfileHTTPAPI, Stage: "prod"}},
		{"HTTP API custom domain", gatewayevent.Options{Profile: deploy.ProfileHTTPAPI, Stage: "prod", CustomDomain: domain, BasePath: httpAPIBasePath}},
		{"Function URL", gatewayevent.Options{Profile: deploy.ProfileFunctionURL}},
	}
}

// TestBootstraps runs the real bootstrap binaries as Lambda runs them:
// built with the deployment's flags, each under the AWS Lambda Runtime
// Interface Emulator, reading the account keys from (a loopback) Secrets
// Manager and storing in DynamoDB Local. Events are built from
// aws-lambda-go's published samples for every profile; the SDK scenario
// runs through each.
func TestBootstraps(t *testing.T) {
	_, rie, dir := needBootstraps(t)
	for _, name := range bootstrapNames() {
		fi, err := os.Stat(filepath.Join(dir, name, "bootstrap"))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("bootstrap %-22s %5.2f MiB (linux/%s, stripped)", name, float64(fi.Size())/(1<<20), runtime.GOARCH)
		if fi.Size() > maxBootstrapBytes {
			t.Errorf("%s bootstrap is %d bytes, over %d", name, fi.Size(), maxBootstrapBytes)
		}
	}

	d := startDeployment(t, dir, rie)
	t.Run("events", func(t *testing.T) { runStoredEvents(t, d.invoke) })
	var rest *gateway
	for i, m := range profileMounts() {
		g := newGateway(t, m.opts, d.invoke)
		if i == 0 {
			rest = g
		}
		t.Run("scenario "+m.name, func(t *testing.T) {
			runScenario(t, g, fmt.Sprintf("rie%d%s", i, strings.ToLower(string(m.opts.Profile))))
			if n := g.fails.Load(); n != 0 {
				t.Errorf("%d invocations failed at the emulator", n)
			}
		})
	}
	t.Run("linearizable histories", func(t *testing.T) { runHistories(t, d) })
	t.Run("cost", func(t *testing.T) { measureCost(t, d) })
	t.Run("bearer tokens", func(t *testing.T) { runBearerTokens(t, d, rest) })

	t.Run("each function served its own routes", func(t *testing.T) {
		calls := rest.invocations()
		for _, fn := range []string{"querytables", "createtable", "readresource", "insertorbatch", "mergeentity", "deleteresource", "updateentity", "getservice", "setserviceproperties", "preflight"} {
			if calls[fn] == 0 {
				t.Errorf("the REST API scenario never reached %s: %v", fn, calls)
			}
		}
	})

	t.Run("init", func(t *testing.T) {
		started := 0
		for _, name := range functionNames() {
			ms := d.fns[name].initMillis()
			if ms < 0 {
				t.Errorf("%s never initialized", name)
				continue
			}
			started++
			t.Logf("init %-22s %6.1f ms (the emulator's INIT REPORT)", name, ms)
			if time.Duration(ms*float64(time.Millisecond)) > maxInitTime {
				t.Errorf("%s took %.1f ms to init", name, ms)
			}
		}
		if got := d.secrets.calls.Load(); got != int64(started) {
			t.Errorf("GetSecretValue called %d times, want %d (once per execution environment, at init)", got, started)
		}
	})

	t.Run("one JSON log line per request", func(t *testing.T) {
		f := d.fns["readresource"]
		var requests []map[string]any
		for _, line := range f.out.jsonLines() {
			if line["msg"] == "request" {
				requests = append(requests, line)
			}
		}
		if len(requests) == 0 {
			t.Fatalf("no request lines in:\n%s", lastLines(f.out.String(), 40))
		}
		for _, key := range []string{"requestId", "lambdaRequestId", "apiRequestId", "account", "operation", "table", "status", "ms"} {
			if _, ok := requests[len(requests)-1][key]; !ok {
				t.Errorf("request line has no %s: %v", key, requests[len(requests)-1])
			}
		}
		metered := 0
		for _, line := range requests {
			if line["status"] == float64(http.StatusOK) {
				if units, ok := line["consumedCapacity"].(float64); !ok || units <= 0 {
					t.Errorf("successful read without consumed capacity: %v", line)
				}
				metered++
			}
		}
		if metered == 0 {
			t.Error("no successful reads logged")
		}
		if reps := f.reports(); len(reps) < len(requests) {
			t.Errorf("%d REPORT lines for %d requests", len(reps), len(requests))
		}
	})

	// The same requests as CloudWatch Embedded Metric Format lines, one
	// each, which the template's dashboard graphs (shared/lambdafn emf.go).
	t.Run("one EMF metrics line per request", func(t *testing.T) {
		f := d.fns["readresource"]
		requests, emf := 0, 0
		for _, line := range f.out.jsonLines() {
			if line["msg"] == "request" {
				requests++
			}
			meta, ok := line["_aws"].(map[string]any)
			if !ok {
				continue
			}
			emf++
			directive := meta["CloudWatchMetrics"].([]any)[0].(map[string]any)
			if ns, _ := directive["Namespace"].(string); !strings.HasPrefix(ns, "tablebridge") {
				t.Errorf("EMF namespace %q", ns)
			}
			if line["Function"] != "readresource" || line["Requests"] != float64(1) || line["Operation"] == "" {
				t.Errorf("EMF line %v", line)
			}
		}
		if emf == 0 || emf != requests {
			t.Errorf("%d EMF lines for %d requests", emf, requests)
		}
	})
}

// runBearerTokens sends bearer-token requests through the REST API to the
// bootstraps, configured as a deployment is: issuers and a role from the
// environment (the template parameters), a role from the keys secret.
func runBearerTokens(t *testing.T, d *deployment, g *gateway) {
	token := func(oid string, k *testissuer.Key) string {
		return d.issuer.Token(t, k, testissuer.Claims{"oid": oid})
	}
	bearer := func(tok string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
	}
	challenge := "Bearer authorization_uri=" + d.issuer.URL + " resource_id=https://storage.azure.com"
	for _, tc := range []struct {
		name              string
		r                 rawReq
		status            int
		code, wwwAuthHead string
	}{
		{"contributor from the environment creates a table", rawReq{method: http.MethodPost, path: "/Tables", body: `{"TableName":"riebearer"}`,
			header: bearer(token("rie-writer", d.key))}, http.StatusCreated, "", ""},
		{"contributor inserts", rawReq{method: http.MethodPost, path: "/riebearer", body: `{"PartitionKey":"p","RowKey":"r"}`,
			header: bearer(token("rie-writer", d.key))}, http.StatusCreated, "", ""},
		{"reader from the secret reads", rawReq{method: http.MethodGet, path: "/riebearer(PartitionKey='p',RowKey='r')",
			header: bearer(token("rie-reader", d.key))}, http.StatusOK, "", ""},
		{"reader cannot write", rawReq{method: http.MethodDelete, path: "/riebearer(PartitionKey='p',RowKey='r')",
			header: map[string]string{"Authorization": "Bearer " + token("rie-reader", d.key), "If-Match": "*"}}, http.StatusForbidden, "AuthorizationPermissionMismatch", ""},
		{"a foreign key is refused", rawReq{method: http.MethodGet, path: "/Tables",
			header: bearer(token("rie-writer", testissuer.NewKey(t, jose.RS256)))}, http.StatusUnauthorized, "InvalidAuthenticationInfo", challenge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.r.unsigned = true
			resp := rawRequest(t, g, tc.r)
			if resp.status != tc.status || resp.code != tc.code || resp.header.Get("WWW-Authenticate") != tc.wwwAuthHead {
				t.Fatalf("got %d %q %q, want %d %q %q: %s", resp.status, resp.code, resp.header.Get("WWW-Authenticate"),
					tc.status, tc.code, tc.wwwAuthHead, resp.body)
			}
		})
	}
}

// runStoredEvents feeds each function the events of events/, re-signed
// now, in the order make events lists them, and checks every status.
func runStoredEvents(t *testing.T, invoke invoker) {
	samples, err := gatewayevent.Samples(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dev := auth.DevStoreAccount()
	for _, s := range samples {
		t.Run(s.Name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "events", filepath.FromSlash(s.File())))
			if err != nil {
				t.Fatalf("%v (make events)", err)
			}
			var ev events.APIGatewayProxyRequest
			if err := json.Unmarshal(b, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.HTTPMethod != http.MethodOptions {
				if err := gatewayevent.ResignEvent(&ev, dev.Name, dev.Keys[0], time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			payload, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			out, err := invoke(context.Background(), s.Function, payload)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := gatewayevent.DecodeResponse(deploy.ProfileRESTAPI, out)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != s.WantStatus {
				t.Fatalf("%s: got %d, want %d: %s", s.Operation, resp.Status, s.WantStatus, resp.Body)
			}
		})
	}
}

// TestBootstrapInitErrors: a function that cannot start reports why to the
// Runtime API's /init/error, which the emulator answers the invocation
// with (Runtime.InitError).
func TestBootstrapInitErrors(t *testing.T) {
	endpoint, rie, dir := needBootstraps(t)
	prefix, _ := newStackTables(t, "tbinit")
	sm := newSecretsManager(t, keysSecretID, keysSecret(t))
	const queryTables = `{"httpMethod":"GET","path":"/devstoreaccount1/Tables"}`
	tests := []struct {
		name    string
		fn      string
		event   string
		edit    func(env []string) []string
		wantMsg string
	}{
		{"configuration missing", "querytables", queryTables,
			func(env []string) []string { return without(env, lambdafn.EnvTablePrefix) }, lambdafn.EnvTablePrefix + " is not set"},
		{"unknown secret", "querytables", queryTables, func(env []string) []string {
			return append(without(env, lambdafn.EnvKeysSecret), lambdafn.EnvKeysSecret+"=tablebridge/elsewhere")
		}, "ResourceNotFoundException"},
		// The purge function reports its own configuration's faults.
		{"purge with no rate", deploy.PurgeFunctionName, scheduledNotification,
			func(env []string) []string { return append(env, lambdafn.EnvPurgeRate+"=0") }, lambdafn.EnvPurgeRate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.edit(baseEnv(t, endpoint, sm.srv.URL, prefix))
			f := startRIE(t, rie, tc.fn, filepath.Join(dir, tc.fn, "bootstrap"), env)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := f.invoke(ctx, []byte(tc.event))
			var ie struct{ ErrorMessage, ErrorType string }
			if err == nil || json.Unmarshal(out, &ie) != nil {
				t.Fatalf("invoke: %v %s, want an init failure", err, out)
			}
			if ie.ErrorType != "Runtime.InitError" || !strings.Contains(ie.ErrorMessage, tc.wantMsg) {
				t.Errorf("init error %+v, want Runtime.InitError mentioning %q", ie, tc.wantMsg)
			}
		})
	}
}

func without(env []string, key string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
}
