package loadgen

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// DevStoreEndpoint is the storage emulator's table endpoint for its
// development account.
const DevStoreEndpoint = auth.DevStoreTableEndpoint

// Phase names one measured workload.
type Phase string

// The phases, in their default order.
const (
	PhaseInsert Phase = "insert"
	PhaseGet    Phase = "get"
	PhaseQuery  Phase = "query"
	PhaseBatch  Phase = "batch"
)

// AllPhases lists every phase in the default order.
var AllPhases = []Phase{PhaseInsert, PhaseGet, PhaseQuery, PhaseBatch}

// ParsePhases parses a comma-separated phase list such as "insert,get". A
// phase may appear only once.
func ParsePhases(s string) ([]Phase, error) {
	var phases []Phase
	seen := map[Phase]bool{}
	for _, name := range strings.Split(s, ",") {
		p := Phase(strings.ToLower(strings.TrimSpace(name)))
		switch p {
		case PhaseInsert, PhaseGet, PhaseQuery, PhaseBatch:
		case "":
			continue
		default:
			return nil, fmt.Errorf("unknown phase %q (want insert, get, query or batch)", name)
		}
		if seen[p] {
			return nil, fmt.Errorf("phase %q listed twice", p)
		}
		seen[p] = true
		phases = append(phases, p)
	}
	if len(phases) == 0 {
		return nil, errors.New("no phases given")
	}
	return phases, nil
}

// MaxBatchSize is Azure's limit of operations in one entity group transaction.
const MaxBatchSize = 100

// Config describes one benchmark run. Start from DefaultConfig.
type Config struct {
	// Endpoint is the table service URL, path-style for emulators
	// (http://127.0.0.1:10002/devstoreaccount1) or host-style.
	Endpoint string
	// Account and Key (base64) sign the requests with SharedKeyLite.
	Account string
	Key     string
	// DynamoDBEndpoint, when set, makes the run skip the Azure Table
	// protocol and drive DynamoDB (e.g. DynamoDB Local) at this URL
	// directly with aws-sdk-go-v2: the same phases, keys and properties,
	// issued as the DynamoDB calls a hand-written app would make. It is the
	// baseline tablebridge's overhead is measured against. Endpoint,
	// Account and Key are ignored then.
	DynamoDBEndpoint string

	// Clients is the number of concurrent workers.
	Clients int
	// Duration bounds each phase; Ops bounds its operation count. When both
	// are set the phase ends at whichever comes first; at least one must be.
	Duration time.Duration
	Ops      int64
	// RequestTimeout bounds each HTTP request.
	RequestTimeout time.Duration

	Phases []Phase
	// EntitySize is the approximate JSON size of one entity in bytes.
	EntitySize int
	// PartitionSize is the number of rows per partition: the query phase
	// scans partitions of exactly this size.
	PartitionSize int
	// QueryPartitions is how many partitions the seed data set holds.
	QueryPartitions int
	// BatchSize is the number of inserts per entity group transaction.
	BatchSize int
	// TablePrefix starts the name of the table the run creates.
	TablePrefix string
	// KeepTable leaves the table in place after the run.
	KeepTable bool
	// AllowRemote permits a non-loopback endpoint.
	AllowRemote bool
	// Seed makes key choice reproducible; 0 picks one from the clock.
	Seed int64
}

// DefaultConfig returns the defaults of `tablebridge bench`: the emulator
// account on its usual port, 16 clients, 10 s per phase, all phases.
func DefaultConfig() Config {
	return Config{
		Endpoint:        DevStoreEndpoint,
		Account:         auth.DevStoreAccountName,
		Key:             auth.DevStoreAccountKey,
		Clients:         16,
		Duration:        10 * time.Second,
		RequestTimeout:  30 * time.Second,
		Phases:          append([]Phase(nil), AllPhases...),
		EntitySize:      400,
		PartitionSize:   1000,
		QueryPartitions: 8,
		BatchSize:       MaxBatchSize,
		TablePrefix:     "bench",
	}
}

// tablePrefixPattern leaves room for the 8 hex digits the run appends within
// Azure's table name rule ^[A-Za-z][A-Za-z0-9]{2,62}$.
var tablePrefixPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{0,54}$`)

// validate checks the configuration and returns the parsed endpoint (the
// DynamoDB one in direct mode) and the decoded key (nil in direct mode).
func (c *Config) validate() (*url.URL, []byte, error) {
	var errs []error
	direct := c.DynamoDBEndpoint != ""
	endpoint := c.Endpoint
	if direct {
		endpoint = c.DynamoDBEndpoint
	}
	u, err := parseEndpoint(endpoint)
	if err != nil {
		errs = append(errs, err)
	} else if !c.AllowRemote {
		if err := requireLoopbackHost(u.Hostname()); err != nil {
			errs = append(errs, err)
		}
	}
	var key []byte
	if !direct {
		if c.Account == "" {
			errs = append(errs, errors.New("account name is empty"))
		}
		key, err = base64.StdEncoding.DecodeString(c.Key)
		if err != nil {
			errs = append(errs, fmt.Errorf("account key is not base64: %w", err))
		} else if len(key) == 0 {
			errs = append(errs, errors.New("account key is empty"))
		}
	}
	if c.Clients < 1 || c.Clients > 4096 {
		errs = append(errs, fmt.Errorf("clients %d out of range 1..4096", c.Clients))
	}
	if c.Duration < 0 || c.Ops < 0 {
		errs = append(errs, errors.New("duration and ops must not be negative"))
	}
	if c.Duration == 0 && c.Ops == 0 {
		errs = append(errs, errors.New("each phase needs a duration or an op count"))
	}
	if c.RequestTimeout <= 0 {
		errs = append(errs, errors.New("request timeout must be positive"))
	}
	if len(c.Phases) == 0 {
		errs = append(errs, errors.New("no phases given"))
	}
	if c.EntitySize < 0 || c.EntitySize > 900_000 {
		// Azure caps an entity at 1 MiB; stay clear of it with JSON overhead.
		errs = append(errs, fmt.Errorf("entity size %d out of range 0..900000", c.EntitySize))
	}
	if c.BatchSize < 1 || c.BatchSize > MaxBatchSize {
		errs = append(errs, fmt.Errorf("batch size %d out of range 1..%d", c.BatchSize, MaxBatchSize))
	}
	if c.PartitionSize < 1 || c.PartitionSize > 10_000_000 {
		errs = append(errs, fmt.Errorf("partition size %d out of range 1..10000000", c.PartitionSize))
	}
	if c.QueryPartitions < 1 || c.QueryPartitions > 10_000 {
		errs = append(errs, fmt.Errorf("query partitions %d out of range 1..10000", c.QueryPartitions))
	}
	if !tablePrefixPattern.MatchString(c.TablePrefix) {
		errs = append(errs, fmt.Errorf("table prefix %q must be a letter then up to 54 letters or digits", c.TablePrefix))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return u, key, nil
}

func parseEndpoint(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(s, "/"))
	if err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("endpoint %q: scheme must be http or https", s)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("endpoint %q has no host", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("endpoint %q must not carry a query, fragment or user info", s)
	}
	return u, nil
}

// ErrRemoteEndpoint is returned for a non-loopback endpoint without
// AllowRemote: this workplace forbids load on anything but loopback.
var ErrRemoteEndpoint = errors.New("endpoint is not a loopback address (pass -allow-remote to load a remote endpoint)")

// requireLoopbackHost accepts loopback IP literals and "localhost". Other
// names are refused here rather than resolved, and the dialer checks every
// address it actually connects to as well.
func requireLoopbackHost(host string) error {
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %q", ErrRemoteEndpoint, host)
}

// ConnectionInfo is what a storage connection string yields for the bench.
type ConnectionInfo struct {
	Endpoint string
	Account  string
	Key      string
}

// ParseConnectionString reads an Azure Storage connection string
// (auth.ParseConnectionString). A SAS-only connection string is refused:
// the bench signs every request with the account key.
func ParseConnectionString(s string) (ConnectionInfo, error) {
	cs, err := auth.ParseConnectionString(s)
	if err != nil {
		return ConnectionInfo{}, err
	}
	if cs.Key == "" {
		return ConnectionInfo{}, errors.New("connection string: SharedAccessSignature is not supported; the bench needs AccountKey")
	}
	return ConnectionInfo{Endpoint: cs.TableEndpoint, Account: cs.Account, Key: cs.Key}, nil
}
