package lambdafn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/oauth"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// envRuntimeAPI is where Lambda's Runtime API listens (host:port).
const envRuntimeAPI = "AWS_LAMBDA_RUNTIME_API"

// initTimeout bounds init: Lambda allows 10 s for it.
const initTimeout = 8 * time.Second

// Main runs the function named name (its directory under functions/): it
// reads the configuration from the environment, builds the clients, reads
// the account keys and builds the handler, all once, then serves events
// through the Lambda Runtime API until Lambda stops the process. It returns
// only when init fails, after reporting the failure to the Runtime API
// (/runtime/init/error), so Lambda shows the reason instead of a bare exit.
func Main(name string) error {
	started := time.Now()
	api := os.Getenv(envRuntimeAPI)
	if api == "" {
		return fmt.Errorf("lambdafn: %s is not set: this program is a Lambda bootstrap; run it in Lambda, sam local, or the functions test harness", envRuntimeAPI)
	}
	applyMemoryLimit(os.Getenv)
	h, log, times, err := setup(name, os.Getenv)
	if err != nil {
		if rerr := reportInitError(api, err); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return err
	}
	// One line per cold start; storeMs (DynamoDB, catalog check) and
	// keysMs (Secrets Manager) ran concurrently.
	log.LogAttrs(context.Background(), slog.LevelInfo, "init",
		slog.Float64("initMs", millis(time.Since(started))),
		slog.Float64("storeMs", millis(times.store)), slog.Float64("keysMs", millis(times.keys)))
	lambda.Start(h)
	return nil
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func setup(name string, getenv func(string) string) (*Handler, *slog.Logger, initTimes, error) {
	fn, err := deploy.FunctionByName(name)
	if err != nil {
		return nil, nil, initTimes{}, err
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return nil, nil, initTimes{}, err
	}
	log := slog.New(NewLogHandler(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))).
		With(slog.String("function", fn.Name))
	ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	h, times, err := setupTimed(ctx, fn, cfg, log)
	return h, log, times, err
}

// initTimes is how long init waited for each dependency.
type initTimes struct{ store, keys time.Duration }

// setupTimed builds fn's handler from cfg: the DynamoDB store (checking that
// the catalog table is there) and the account keys (from Secrets Manager),
// concurrently, since both wait on the network.
func setupTimed(ctx context.Context, fn deploy.Function, cfg Config, log *slog.Logger) (*Handler, initTimes, error) {
	var (
		wg      sync.WaitGroup
		times   initTimes
		st      *dynamostore.Store
		stErr   error
		account auth.Account
		roles   []oauth.Assignment
		keysErr error
	)
	// One AWS config for both clients: loading the chain is the CPU-heavy
	// part of init, and the DynamoDB and Secrets Manager calls then run
	// side by side.
	awsCfg, err := dynamostore.LoadAWSConfig(ctx, cfg.Store)
	if err != nil {
		return nil, times, err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		st, stErr = openStore(ctx, awsCfg, cfg)
		times.store = time.Since(start)
	}()
	start := time.Now()
	if cfg.UseEmulatorKey {
		account = auth.DevStoreAccount()
	} else {
		account, roles, keysErr = readAccount(ctx, awsCfg, cfg)
	}
	times.keys = time.Since(start)
	wg.Wait()
	if err := errors.Join(stErr, keysErr); err != nil {
		return nil, times, err
	}
	tokens, err := tokenVerifier(cfg.OAuth, roles)
	if err != nil {
		return nil, times, err
	}
	emf := newEMFWriter(os.Stdout, emfNamespace(cfg.StackName), fn.Name)
	h, err := NewHandler(fn, st, []auth.Account{account}, Options{BasePath: cfg.BasePath,
		HTTP: httpapi.Options{Logger: log, LogRequests: true, Tokens: tokens, Observe: emf.observe}})
	if err != nil {
		return nil, times, err
	}
	return h, times, nil
}

// tokenVerifier builds the verified-mode bearer token verifier of the
// configuration, with the role assignments of the environment and of the
// keys secret; nil when no issuer is configured. The issuers are
// discovered on the first token, not at init: init stays within Lambda's
// budget, and a slow issuer delays only token requests. The verifier lives
// as long as the execution environment, and with it the cached keys.
func tokenVerifier(cfg *oauth.Config, secretRoles []oauth.Assignment) (auth.TokenVerifier, error) {
	if cfg == nil {
		if len(secretRoles) > 0 {
			return nil, fmt.Errorf("lambdafn: the keys secret assigns oauthRoles but %s is not set", EnvOAuthIssuers)
		}
		return nil, nil
	}
	full := *cfg
	full.Roles = append(append([]oauth.Assignment(nil), cfg.Roles...), secretRoles...)
	v, err := oauth.NewVerified(&full, oauth.VerifiedOptions{})
	if err != nil {
		return nil, fmt.Errorf("lambdafn: bearer tokens: %w", err)
	}
	return v, nil
}

// readAccount reads the account keys from Secrets Manager, with the
// standard AWS configuration chain (the function's role in Lambda).
func readAccount(ctx context.Context, awsCfg aws.Config, cfg Config) (auth.Account, []oauth.Assignment, error) {
	return fetchAccount(ctx, secretsmanager.NewFromConfig(awsCfg), cfg.KeysSecret, cfg.AccountName)
}

// openStore builds the DynamoDB client with the store's bounded retries and
// the consumed-capacity middleware, and the store.
func openStore(ctx context.Context, awsCfg aws.Config, cfg Config) (*dynamostore.Store, error) {
	client := dynamostore.NewClientFromConfig(awsCfg, cfg.Store, MeterCapacity)
	st, err := dynamostore.New(ctx, client, cfg.Store)
	if err != nil {
		return nil, fmt.Errorf("lambdafn: DynamoDB store: %w", err)
	}
	return st, nil
}

// reportInitError posts an init failure to the Runtime API ("Initialization
// error" in the Lambda Runtime API reference); Lambda then logs it and
// stops the execution environment.
func reportInitError(api string, initErr error) error {
	body, _ := json.Marshal(struct {
		ErrorMessage string `json:"errorMessage"`
		ErrorType    string `json:"errorType"`
	}{initErr.Error(), initErrorType})
	req, err := http.NewRequest(http.MethodPost, "http://"+api+"/2018-06-01/runtime/init/error", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("lambdafn: report init error: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Lambda-Runtime-Function-Error-Type", initErrorType)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("lambdafn: report init error: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("lambdafn: report init error: the Runtime API answered %s", resp.Status)
	}
	return nil
}

// initErrorType is the errorType of an init failure.
const initErrorType = "Runtime.InitError"
