package localproc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNoModuleRoot reports that no directory at or above the working
// directory holds a go.mod: the tools a harness installs under the module
// root cannot be found from there.
var ErrNoModuleRoot = errors.New("no go.mod")

// ModuleRoot returns the nearest directory at or above the working directory
// that holds go.mod. Tests run in their package's directory, so this finds
// the repository's .tools folder from any of them.
func ModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("%w above %s", ErrNoModuleRoot, wd)
		}
	}
}
