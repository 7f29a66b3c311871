package azurite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tablebridge/tablebridge/internal/localproc"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// Environment variables the harness reads.
const (
	// EnvEndpoint names a running Azurite table endpoint to use instead of
	// starting one: the account URL, e.g.
	// http://127.0.0.1:10002/devstoreaccount1.
	EnvEndpoint = "TABLEBRIDGE_AZURITE_ENDPOINT"
	// EnvDir overrides the folder of the installed npm package (the one
	// holding package.json and dist/).
	EnvDir = "TABLEBRIDGE_AZURITE_DIR"
	// EnvCI makes a missing Azurite a test failure instead of a skip.
	EnvCI = localproc.EnvCI
)

// The emulator's well-known development account. Azurite accepts it by
// default ("Use the Azurite emulator for local Azure Storage development").
const (
	AccountName = auth.DevStoreAccountName
	AccountKey  = auth.DevStoreAccountKey
)

// ErrNotInstalled reports that Node.js or the azurite package is missing.
var ErrNotInstalled = errors.New("azurite: Azurite is not installed")

// installHint tells a developer how to get Azurite.
const installHint = "install it with infra/azurite/install.sh (or make tools; needs npm and Node.js)"

// packageDir is where infra/azurite/install.sh puts the package, relative to
// the module root.
const packageDir = ".tools/azurite/node_modules/azurite"

// tableMain is the table service's entry point inside the package (its
// "azurite-table" bin).
const tableMain = "dist/src/table/main.js"

// startTimeout bounds how long Start waits for Node.js to answer. It usually
// takes 1-2 s; a loaded machine needs more.
const startTimeout = 60 * time.Second

// Instance is one running Azurite table service.
type Instance struct {
	// Endpoint is the account URL, path-style as the emulator spells it:
	// http://127.0.0.1:PORT/devstoreaccount1.
	Endpoint string
	// Port is the TCP port it listens on.
	Port int

	proc *localproc.Process
}

func connectionString(endpoint string) string {
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;",
		AccountName, AccountKey, endpoint)
}

// Find returns the folder of the installed azurite package:
// $TABLEBRIDGE_AZURITE_DIR when set, else .tools/azurite/node_modules/azurite
// under the module root, found by walking up from the working directory.
func Find() (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, tableMain)); err != nil {
			return "", fmt.Errorf("%w: %s=%s has no %s", ErrNotInstalled, EnvDir, dir, tableMain)
		}
		return dir, nil
	}
	root, err := localproc.ModuleRoot()
	if errors.Is(err, localproc.ErrNoModuleRoot) {
		return "", fmt.Errorf("%w: %v", ErrNotInstalled, err)
	}
	if err != nil {
		return "", fmt.Errorf("azurite: %w", err)
	}
	pkg := filepath.Join(root, packageDir)
	if _, err := os.Stat(filepath.Join(pkg, tableMain)); err != nil {
		return "", fmt.Errorf("%w under %s", ErrNotInstalled, filepath.Join(root, ".tools"))
	}
	return pkg, nil
}

// Start runs an in-memory Azurite table service on a free loopback port and
// returns once it answers HTTP. It returns an error wrapping ErrNotInstalled
// when Node.js or the package is missing. The caller must Stop the instance.
func Start(ctx context.Context) (*Instance, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%w: node is not on PATH", ErrNotInstalled)
	}
	dir, err := Find()
	if err != nil {
		return nil, err
	}
	// Azurite cannot report a port it chose itself (--tablePort 0 prints
	// 0), so localproc picks one, and tries another when Node exits at once
	// because something took it first.
	proc, err := localproc.Start(ctx, localproc.Spec{
		Name:           "Azurite",
		ErrPrefix:      "azurite",
		Program:        node,
		Args:           func(port int) []string { return args(dir, port) },
		WorkDirPattern: "tablebridge-azurite-",
		// An unsigned GET is refused (403), which proves the service is
		// up.
		ProbePath:    "/" + AccountName + "/Tables",
		StartTimeout: startTimeout,
	})
	if err != nil {
		return nil, err
	}
	return &Instance{Endpoint: proc.URL + "/" + AccountName, Port: proc.Port, proc: proc}, nil
}

// args are the table service's flags: loopback only, nothing on disk
// (--inMemoryPersistence refuses --location, so the working directory is a
// throwaway folder for anything else it writes), any x-ms-version the SDKs
// send, unknown headers ignored, and no telemetry.
func args(dir string, port int) []string {
	return []string{
		filepath.Join(dir, tableMain),
		"--tableHost", "127.0.0.1",
		"--tablePort", strconv.Itoa(port),
		"--inMemoryPersistence",
		"--skipApiVersionCheck",
		"--loose",
		"--disableTelemetry",
	}
}

// Stop kills the process and waits for it to exit. It is safe to call more
// than once.
func (i *Instance) Stop() { i.proc.Stop() }

// Done is closed when the process exits, whether Stop killed it or not.
func (i *Instance) Done() <-chan struct{} { return i.proc.Done() }
