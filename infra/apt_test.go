package infra

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// aptStub puts an apt-get on PATH that fails as apt does while another
// process holds the lists' lock, busy times, then succeeds; it logs its
// arguments.
func aptStub(t *testing.T, busy int) (env []string, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	script := `#!/bin/sh
echo "$*" >> "` + log + `"
n=$(wc -l < "` + log + `")
if [ "$n" -le ` + strconv.Itoa(busy) + ` ]; then
	echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
	echo "E: Unable to lock directory /var/lib/apt/lists/" >&2
	exit 100
fi
echo "installed"
`
	if err := os.WriteFile(filepath.Join(dir, "apt-get"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "APT_LOCK_POLL=0.05"), log
}

func runAptGet(t *testing.T, env []string, extra ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", "-c", `source lib/apt.sh; apt_get update -qq`)
	cmd.Env = append(env, extra...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestAptGetWaitsForTheLock: install.sh waits while apt is busy, then
// installs; apt-get is always given dpkg's lock timeout.
func TestAptGetWaitsForTheLock(t *testing.T) {
	env, log := aptStub(t, 3)
	out, err := runAptGet(t, env)
	if err != nil || !strings.Contains(out, "waiting up to 600s for it to finish") || !strings.Contains(out, "installed") {
		t.Fatalf("%v\n%s", err, out)
	}
	calls, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "-o DPkg::Lock::Timeout=600 update -qq") {
		t.Fatalf("apt-get called %d times: %q", len(lines), lines)
	}
}

// TestAptGetSaysWhatToDo: when the lock stays held, it says so and how to
// go on.
func TestAptGetSaysWhatToDo(t *testing.T) {
	env, _ := aptStub(t, 9)
	out, err := runAptGet(t, env, "APT_LOCK_TIMEOUT=0")
	if err == nil || !strings.Contains(out, "Could not get lock") || !strings.Contains(out, "let it finish (or stop it) and run this again") {
		t.Fatalf("%v\n%s", err, out)
	}
}
