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

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/auth"
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

// Targets the harness checks. Init is process start to the first /next on
// a loaded 2-core machine, so the hard limit is generous; the test logs
// the measured times, which the report quotes.
const (
	maxBootstrapBytes = 12 << 20
	maxInitTime       = 2 * time.Second
	keysSecretID      = "tablebridge/test/account-keys"
)

func functionNames() []string {
	var names []string
	for _, fn := range lambdafn.Functions() {
		names = append(names, fn.Name)
	}
	return names
}

// deployment is a set of running bootstraps over one DynamoDB Local table
// prefix, as sam local runs them.
type deployment struct {
	procs   map[string]*process
	secrets *secretsManager
	prefix  string
	started int               // processes started
	inits   [][]time.Duration // per function in functionNames order, per cold start
}

// baseEnv is the environment Lambda gives a function plus what
// template.yaml sets, pointed at loopback services.
func baseEnv(t testing.TB, endpoint, smURL, prefix string) []string {
	home := t.TempDir()
	return []string{
		"HOME=" + home,
		"AWS_REGION=" + dynamolocal.Region, "AWS_DEFAULT_REGION=" + dynamolocal.Region,
		// DynamoDB Local keeps one database per access key and region; the
		// test's own client uses the same pair.
		"AWS_ACCESS_KEY_ID=tablebridge", "AWS_SECRET_ACCESS_KEY=tablebridge",
		"AWS_CONFIG_FILE=" + filepath.Join(home, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "none"),
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_ENDPOINT_URL_SECRETS_MANAGER=" + smURL,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=512",
		lambdafn.EnvAccountName + "=" + auth.DevStoreAccountName,
		lambdafn.EnvTablePrefix + "=" + prefix,
		lambdafn.EnvKeysSecret + "=" + keysSecretID,
		lambdafn.EnvDynamoDBEndpoint + "=" + endpoint,
		lambdafn.EnvLogLevel + "=info",
	}
}

// keysSecret holds the emulator key as key1 (the events are signed with
// it) and another key as key2.
func keysSecret(t testing.TB) string {
	other := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("tablebridge second key ", 3)))
	b, err := json.Marshal(map[string]string{"accountName": auth.DevStoreAccountName, "key1": auth.DevStoreAccountKey, "key2": other})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// startDeployment creates the catalog table, as the template does, and
// starts every function.
func startDeployment(t *testing.T, dir string) *deployment {
	t.Helper()
	endpoint := dynamolocal.Endpoint(t)
	prefix := dynamolocal.UniqueName("tbfn") + "-"
	ctx := dynamolocal.Context(t, time.Minute)
	if _, err := dynamostore.New(ctx, dynamolocal.Client(t), dynamostore.Options{TablePrefix: prefix}); err != nil {
		t.Fatalf("create the catalog table: %v", err)
	}
	d := &deployment{procs: map[string]*process{}, secrets: newSecretsManager(t, keysSecretID, keysSecret(t)), prefix: prefix}
	env := baseEnv(t, endpoint, d.secrets.srv.URL, prefix)
	// One cold start at a time, so each init time is its own rather than
	// ten processes contending for two cores; three cold starts per
	// function, keeping the last process, since a shared machine is noisy.
	for _, name := range functionNames() {
		var inits []time.Duration
		for attempt := range coldStarts {
			p := startProcess(t, name, filepath.Join(dir, name, "bootstrap"), env)
			d.started++
			init, err := p.ready(ctx)
			if err != nil {
				t.Fatal(err)
			}
			inits = append(inits, init)
			if attempt < coldStarts-1 {
				p.stop()
				continue
			}
			d.procs[name] = p
		}
		d.inits = append(d.inits, inits)
	}
	return d
}

// coldStarts is how many times each function is started.
const coldStarts = 3

func (d *deployment) invoke(ctx context.Context, fn string, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	p := d.procs[fn]
	if p == nil {
		return events.APIGatewayProxyResponse{}, fmt.Errorf("no function %q", fn)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return p.invoke(ctx, ev)
}

// TestBootstraps runs the real bootstrap binaries the way sam local does:
// built with the deployment's flags, each in its own process, fed through a
// Runtime API on loopback, reading the account keys from (a loopback)
// Secrets Manager and storing in DynamoDB Local.
func TestBootstraps(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the bootstraps are linux binaries (provided.al2023)")
	}
	dynamolocal.Endpoint(t) // skip (or fail under CI) before building when DynamoDB Local is missing
	names := functionNames()
	dir := buildBootstraps(t, names)
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(dir, name, "bootstrap"))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("bootstrap %-22s %5.2f MiB (linux/%s, stripped)", name, float64(fi.Size())/(1<<20), runtime.GOARCH)
		if fi.Size() > maxBootstrapBytes {
			t.Errorf("%s bootstrap is %d bytes, over %d", name, fi.Size(), maxBootstrapBytes)
		}
	}

	d := startDeployment(t, dir)
	var all []time.Duration
	for i, name := range names {
		inits := slices.Sorted(slices.Values(d.inits[i]))
		all = append(all, inits...)
		var self map[string]any
		for _, line := range d.procs[name].out.jsonLines() {
			if line["msg"] == "init" {
				self = line
			}
		}
		t.Logf("init %-22s best %6.1f ms, worst %6.1f ms of %d cold starts (process start to first /next); last one's own view: %v ms, DynamoDB %v ms and Secrets Manager %v ms concurrently",
			name, ms(inits[0]), ms(inits[len(inits)-1]), len(inits), self["initMs"], self["storeMs"], self["keysMs"])
		if inits[0] > maxInitTime {
			t.Errorf("%s took at least %v to init", name, inits[0])
		}
	}
	slices.Sort(all)
	t.Logf("init over %d cold starts: min %.1f ms, median %.1f ms, max %.1f ms", len(all), ms(all[0]), ms(all[len(all)/2]), ms(all[len(all)-1]))

	t.Run("events", func(t *testing.T) { runStoredEvents(t, d.invoke) })
	g := newGateway(t, lambdafn.SampleStage, d.invoke)
	t.Run("scenario", func(t *testing.T) { runScenario(t, g, "lambdascenario") })

	t.Run("each function served its own routes", func(t *testing.T) {
		calls := g.invocations()
		for _, fn := range []string{"querytables", "createtable", "readresource", "insertorbatch", "mergeentity", "deleteresource"} {
			if calls[fn] == 0 {
				t.Errorf("the scenario never reached %s: %v", fn, calls)
			}
		}
		if n := g.fails.Load(); n != 0 {
			t.Errorf("%d invocations failed at the Runtime API", n)
		}
	})

	t.Run("keys read once per process", func(t *testing.T) {
		if got, want := d.secrets.calls.Load(), int64(d.started); got != want {
			t.Errorf("GetSecretValue called %d times, want %d (once per process, at init)", got, want)
		}
	})

	t.Run("one JSON log line per request", func(t *testing.T) {
		p := d.procs["readresource"]
		var requests []map[string]any
		for _, line := range p.out.jsonLines() {
			if line["msg"] == "request" {
				requests = append(requests, line)
			}
		}
		if len(requests) == 0 {
			t.Fatalf("no request lines in:\n%s", p.out.String())
		}
		// The last is a read of the deleted table: no capacity consumed.
		last := requests[len(requests)-1]
		for _, key := range []string{"requestId", "lambdaRequestId", "apiRequestId", "account", "operation", "table", "status", "ms"} {
			if _, ok := last[key]; !ok {
				t.Errorf("request line has no %s: %v", key, last)
			}
		}
		if last["status"] != float64(http.StatusNotFound) {
			t.Errorf("last request line %v, want the 404 of the deleted table", last)
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
		for _, line := range p.out.jsonLines() {
			if line["msg"] == "init" {
				t.Logf("readresource logged its own init: %v ms", line["initMs"])
			}
		}
	})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// runStoredEvents feeds each function the events of events/, re-signed
// now, in the order make events lists them, and checks every status.
func runStoredEvents(t *testing.T, invoke invoker) {
	samples, err := lambdafn.Samples(time.Now())
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
				if err := lambdafn.ResignEvent(&ev, dev.Name, dev.Keys[0], time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			resp, err := invoke(context.Background(), s.Function, ev)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != s.WantStatus {
				t.Fatalf("%s: got %d, want %d: %s", s.Operation, resp.StatusCode, s.WantStatus, resp.Body)
			}
		})
	}
}

// TestBootstrapInitErrors: a function that cannot start reports why to the
// Runtime API's /init/error and exits.
func TestBootstrapInitErrors(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the bootstraps are linux binaries (provided.al2023)")
	}
	endpoint := dynamolocal.Endpoint(t)
	dir := buildBootstraps(t, functionNames())
	prefix := dynamolocal.UniqueName("tbinit") + "-"
	ctx := dynamolocal.Context(t, time.Minute)
	if _, err := dynamostore.New(ctx, dynamolocal.Client(t), dynamostore.Options{TablePrefix: prefix}); err != nil {
		t.Fatal(err)
	}
	sm := newSecretsManager(t, keysSecretID, keysSecret(t))
	tests := []struct {
		name    string
		edit    func(env []string) []string
		wantMsg string
	}{
		{"configuration missing", func(env []string) []string { return without(env, lambdafn.EnvTablePrefix) }, lambdafn.EnvTablePrefix + " is not set"},
		{"unknown secret", func(env []string) []string {
			return append(without(env, lambdafn.EnvKeysSecret), lambdafn.EnvKeysSecret+"=tablebridge/elsewhere")
		}, "ResourceNotFoundException"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.edit(baseEnv(t, endpoint, sm.srv.URL, prefix))
			p := startProcess(t, "querytables", filepath.Join(dir, "querytables", "bootstrap"), env)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := p.ready(ctx); err == nil || !strings.Contains(err.Error(), "init failed") {
				t.Fatalf("ready: %v, want an init failure", err)
			}
			p.api.mu.Lock()
			ie := p.api.initErr
			p.api.mu.Unlock()
			if ie.Type != "Runtime.InitError" || ie.Header != "Runtime.InitError" || !strings.Contains(ie.Message, tc.wantMsg) {
				t.Errorf("init error %+v, want Runtime.InitError mentioning %q", ie, tc.wantMsg)
			}
			select {
			case <-p.exited:
				if p.cmd.ProcessState.Success() {
					t.Error("the process exited 0 after a failed init")
				}
			case <-ctx.Done():
				t.Fatal("the process kept running after a failed init")
			}
		})
	}
}

func without(env []string, key string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
}
