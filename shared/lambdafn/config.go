package lambdafn

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/oauth"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// Environment variables a function reads at init. template.yaml sets them.
const (
	// EnvAccountName is the storage account the deployment serves (Azure's
	// rule: 3 to 24 lower-case letters and digits).
	EnvAccountName = "TABLEBRIDGE_ACCOUNT_NAME"
	// EnvTablePrefix starts every DynamoDB table name of the deployment.
	EnvTablePrefix = "TABLEBRIDGE_TABLE_PREFIX"
	// EnvCatalogTable names the catalog table; TablePrefix + "catalog"
	// when empty (dynamostore.Options.CatalogTable). template.yaml creates
	// it.
	EnvCatalogTable = "TABLEBRIDGE_CATALOG_TABLE"
	// EnvKeysSecret is the ARN or name of the Secrets Manager secret that
	// holds the account keys (see parseSecret).
	EnvKeysSecret = "TABLEBRIDGE_ACCOUNT_KEYS_SECRET"
	// EnvUseEmulatorKey, when true, serves the storage emulator's public
	// account devstoreaccount1 instead of reading a secret: for sam local
	// against DynamoDB Local only.
	EnvUseEmulatorKey = "TABLEBRIDGE_USE_EMULATOR_KEY"
	// EnvDynamoDBEndpoint overrides the DynamoDB endpoint (DynamoDB Local;
	// dynamostore.Options.Endpoint); empty means AWS. It is the variable
	// make test exports too.
	EnvDynamoDBEndpoint = "TABLEBRIDGE_DYNAMODB_ENDPOINT"
	// EnvSharedTable names the DynamoDB table that holds every Azure table
	// Create Table creates (template.yaml's EntityTable); TablePrefix +
	// "entities" when empty (dynamostore.Options.SharedTable).
	EnvSharedTable = "TABLEBRIDGE_SHARED_TABLE"
	// EnvBasePath is the HTTP API's mapping key on the custom domain
	// (template.yaml's HttpApiBasePath), empty without a custom domain or
	// with a root mapping. HTTP API events leave it out of rawPath, but the
	// client signed it; REST API events carry their own base path.
	EnvBasePath = "TABLEBRIDGE_BASE_PATH"
	// EnvOAuthIssuers lists, comma-separated, the OpenID issuers whose
	// bearer tokens the deployment accepts (verified mode: signatures
	// checked against each issuer's discovery document and JWKS). Empty:
	// bearer tokens are refused.
	EnvOAuthIssuers = "TABLEBRIDGE_OAUTH_ISSUERS"
	// EnvOAuthAudiences lists, comma-separated, the token audiences
	// accepted; empty accepts Azure Storage's (https://storage.azure.com).
	EnvOAuthAudiences = "TABLEBRIDGE_OAUTH_AUDIENCES"
	// EnvOAuthRoles holds role assignments as a JSON array (the "roles" of
	// shared/oauth.Config); the keys secret's "oauthRoles" adds to them.
	EnvOAuthRoles = "TABLEBRIDGE_OAUTH_ROLES"
	// EnvStackName names the stack: the functions' metrics go to the
	// CloudWatch namespace tablebridge/<stack> (emfNamespace).
	EnvStackName = "TABLEBRIDGE_STACK_NAME"
	// EnvPurgeGrace is how long after Delete Table the purge function
	// leaves the table's items (a Go duration; default 1m,
	// dynamostore.Options.PurgeGrace). Longer keeps a deleted table's items
	// for a recovery by hand. Shorter than the functions' timeout (30 s)
	// may leave behind the item of a write that was in flight at the
	// delete: stored and billed, but never read, since a table created
	// again under the name has a new id.
	EnvPurgeGrace = "TABLEBRIDGE_PURGE_GRACE"
	// EnvPurgeRate is how many items a second the purge function deletes,
	// for the deployment (dynamostore.Options.PurgeRate; default 4,000);
	// template.yaml's PurgeRate parameter sets it.
	EnvPurgeRate = "TABLEBRIDGE_PURGE_RATE"
	// EnvLogLevel is debug, info (the default), warn or error.
	EnvLogLevel = "TABLEBRIDGE_LOG_LEVEL"
	// envLambdaLogLevel is Lambda's own log level setting (advanced logging
	// controls), used when EnvLogLevel is unset.
	envLambdaLogLevel = "AWS_LAMBDA_LOG_LEVEL"
)

// Config is a function's configuration, read once at init.
type Config struct {
	AccountName    string
	KeysSecret     string
	UseEmulatorKey bool
	BasePath       string
	// StackName is EnvStackName.
	StackName string
	LogLevel  slog.Level
	// OAuth configures bearer tokens; nil when EnvOAuthIssuers is empty.
	// Its Roles are completed at init from the keys secret.
	OAuth *oauth.Config
	// Store is the DynamoDB store's configuration: EnvDynamoDBEndpoint,
	// EnvTablePrefix, EnvCatalogTable, EnvSharedTable, EnvPurgeGrace and
	// EnvPurgeRate, unset ones left to the store's defaults.
	Store dynamostore.Options
}

// LoadConfig reads the configuration through getenv (os.Getenv in a
// function) and reports every problem at once.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		AccountName: strings.TrimSpace(getenv(EnvAccountName)),
		KeysSecret:  strings.TrimSpace(getenv(EnvKeysSecret)),
		BasePath:    strings.Trim(strings.TrimSpace(getenv(EnvBasePath)), "/"),
		StackName:   strings.TrimSpace(getenv(EnvStackName)),
		Store: dynamostore.Options{
			Endpoint:     strings.TrimSpace(getenv(EnvDynamoDBEndpoint)),
			TablePrefix:  strings.TrimSpace(getenv(EnvTablePrefix)),
			CatalogTable: strings.TrimSpace(getenv(EnvCatalogTable)),
			SharedTable:  strings.TrimSpace(getenv(EnvSharedTable)),
			// Each execution environment caches look-ups of its own:
			// confirm them, so a table deleted elsewhere is missing at
			// once.
			ConfirmTable: true,
		},
	}
	var errs []error
	if v := strings.TrimSpace(getenv(EnvUseEmulatorKey)); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want true or false", EnvUseEmulatorKey, v))
		}
		c.UseEmulatorKey = b
	}
	if v := strings.TrimSpace(getenv(EnvPurgeGrace)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a positive duration such as 1m or 24h", EnvPurgeGrace, v))
		}
		c.Store.PurgeGrace = d
	}
	if v := strings.TrimSpace(getenv(EnvPurgeRate)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a positive number of items a second", EnvPurgeRate, v))
		}
		c.Store.PurgeRate = n
	}
	if c.Store.TablePrefix == "" {
		errs = append(errs, fmt.Errorf("%s is not set", EnvTablePrefix))
	}
	switch {
	case c.UseEmulatorKey:
		if c.KeysSecret != "" {
			errs = append(errs, fmt.Errorf("%s and %s=true exclude each other", EnvKeysSecret, EnvUseEmulatorKey))
		}
		if c.AccountName == "" {
			c.AccountName = auth.DevStoreAccountName
		}
		if c.AccountName != auth.DevStoreAccountName {
			errs = append(errs, fmt.Errorf("%s=true serves %s only, not %q", EnvUseEmulatorKey, auth.DevStoreAccountName, c.AccountName))
		}
	case c.KeysSecret == "":
		errs = append(errs, fmt.Errorf("%s is not set (the Secrets Manager secret of the account keys)", EnvKeysSecret))
	}
	if !validAccountName(c.AccountName) {
		errs = append(errs, fmt.Errorf("%s=%q: an account name is 3 to 24 lower-case letters and digits", EnvAccountName, c.AccountName))
	}
	if oc, err := loadOAuthConfig(getenv); err != nil {
		errs = append(errs, err)
	} else {
		c.OAuth = oc
	}
	level, err := parseLogLevel(getenv(EnvLogLevel), getenv(envLambdaLogLevel))
	if err != nil {
		errs = append(errs, err)
	}
	c.LogLevel = level
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("lambdafn: configuration: %w", errors.Join(errs...))
	}
	return c, nil
}

// loadOAuthConfig reads the bearer token settings.
func loadOAuthConfig(getenv func(string) string) (*oauth.Config, error) {
	issuers := splitList(getenv(EnvOAuthIssuers))
	audiences := splitList(getenv(EnvOAuthAudiences))
	roles := strings.TrimSpace(getenv(EnvOAuthRoles))
	if len(issuers) == 0 {
		if len(audiences) > 0 || roles != "" {
			return nil, fmt.Errorf("%s and %s need %s", EnvOAuthAudiences, EnvOAuthRoles, EnvOAuthIssuers)
		}
		return nil, nil
	}
	doc := map[string]any{"issuers": issuers, "audiences": audiences}
	if roles != "" {
		doc["roles"] = json.RawMessage(roles)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvOAuthRoles, err)
	}
	c, err := oauth.ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("%s/%s/%s: %w", EnvOAuthIssuers, EnvOAuthAudiences, EnvOAuthRoles, err)
	}
	return c, nil
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// validAccountName is Azure's rule for storage account names.
func validAccountName(s string) bool {
	if len(s) < 3 || len(s) > 24 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// parseLogLevel reads ours, else Lambda's level (TRACE..FATAL), else info.
func parseLogLevel(ours, lambdas string) (slog.Level, error) {
	if v := strings.TrimSpace(ours); v != "" {
		var l slog.Level
		if err := l.UnmarshalText([]byte(v)); err != nil {
			return slog.LevelInfo, fmt.Errorf("%s=%q: want debug, info, warn or error", EnvLogLevel, v)
		}
		return l, nil
	}
	switch strings.ToUpper(strings.TrimSpace(lambdas)) {
	case "TRACE", "DEBUG":
		return slog.LevelDebug, nil
	case "WARN":
		return slog.LevelWarn, nil
	case "ERROR", "FATAL":
		return slog.LevelError, nil
	}
	return slog.LevelInfo, nil
}
