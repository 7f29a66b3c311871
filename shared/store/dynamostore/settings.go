package dynamostore

import (
	"log/slog"
	"net"
	"net/url"
	"time"
)

// Settings are what a deployment says about its DynamoDB store. The
// functions read them from the environment (lambdafn.LoadConfig) and
// `tablebridge serve -store dynamodb` from its flags and the same
// environment variables for protection; Options is the one place that
// turns them into the store's Options, so the two doors treat the same
// tables the same way (issue 23, item 6).
type Settings struct {
	// Endpoint is an explicit DynamoDB endpoint, "" for AWS's.
	Endpoint     string
	TablePrefix  string
	CatalogTable string // "" for TablePrefix + "catalog"
	SharedTable  string // "" for TablePrefix + "entities"
	// ConfirmTable as in Options: set where several processes serve one
	// deployment (the functions).
	ConfirmTable bool
	// RequestTimeout and PurgeEvery as in Options; zero for the defaults
	// (no background purge: the functions have a purge function).
	RequestTimeout time.Duration
	PurgeEvery     time.Duration
	// PurgeGrace and PurgeRate as in Options; zero for the defaults.
	PurgeGrace time.Duration
	PurgeRate  int
	MoveSettle time.Duration
	Logger     *slog.Logger
}

// Options returns the store's Options for s. A missing catalog table (and
// shared table) is created, at start and whenever a request finds it
// gone, only with an explicit local endpoint: a DynamoDB Local restarted
// in memory loses them, and making them again is the first start over.
// Anywhere else they are stack resources with point-in-time recovery, and
// creating a lost catalog empty would silently drop the list of tables, so
// New fails and requests answer 503 until it is restored.
func (s Settings) Options() Options {
	local := IsLocalEndpoint(s.Endpoint)
	return Options{
		TablePrefix:     s.TablePrefix,
		CatalogTable:    s.CatalogTable,
		SharedTable:     s.SharedTable,
		ConfirmTable:    s.ConfirmTable,
		RequestTimeout:  s.RequestTimeout,
		PurgeEvery:      s.PurgeEvery,
		PurgeGrace:      s.PurgeGrace,
		PurgeRate:       s.PurgeRate,
		MoveSettle:      s.MoveSettle,
		Logger:          s.Logger,
		RecreateCatalog: local,
		RequireCatalog:  !local,
	}
}

// IsLocalEndpoint reports whether endpoint is explicit and on this machine
// (a loopback address or localhost): DynamoDB Local, not AWS.
func IsLocalEndpoint(endpoint string) bool {
	if endpoint == "" {
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
