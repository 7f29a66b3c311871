package container_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/localproc"
	"github.com/tablebridge/tablebridge/internal/serveproc"
	"github.com/tablebridge/tablebridge/shared/auth"
)

const installHint = "run infra/container/install.sh (make tools; as root it installs Debian's buildah, podman and runc)"

// podmanRun is how podman runs containers on this kind of machine: Debian's
// runc, because crun refuses its cgroup setup, and rlimits it can set.
var podmanRun = []string{"--runtime", "runc", "run", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"}

type tools struct{ podman, buildah string }

func requireTools(t *testing.T) tools {
	t.Helper()
	tl := tools{
		podman:  serveproc.Require(t, "podman", installHint, nil, "podman"),
		buildah: serveproc.Require(t, "buildah", installHint, nil, "buildah"),
	}
	serveproc.Require(t, "runc", installHint, nil, "runc", "/usr/sbin/runc")
	return tl
}

// run runs a command and returns its trimmed standard output; a failure
// fails the test with its output.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// buildImage builds the image under a tag of this test's own and removes
// it when the test ends.
func buildImage(t *testing.T, tl tools) string {
	t.Helper()
	root, err := localproc.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	image := fmt.Sprintf("localhost/tablebridge-test:%d", os.Getpid())
	run(t, filepath.Join(root, "infra", "container", "build.sh"), image)
	t.Cleanup(func() { _ = exec.Command(tl.podman, "rmi", "-f", image).Run() })
	return image
}

// container is one running container and the loopback port its 10002 is
// published on.
type container struct {
	name string
	port int
}

// start runs the image detached with the volume on /data, publishing 10002
// on a free loopback port, and waits for its first answer, which it
// returns the time to. extra are more serve flags.
func start(t *testing.T, tl tools, image, volume, scheme string, client *http.Client, extra ...string) (container, time.Duration) {
	t.Helper()
	port, err := localproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	c := container{name: fmt.Sprintf("tablebridge-test-%d-%d", os.Getpid(), port), port: port}
	args := append(append([]string{}, podmanRun...), "-d", "--name", c.name,
		"-p", fmt.Sprintf("127.0.0.1:%d:10002", port), "-v", volume+":/data", image)
	began := time.Now()
	run(t, tl.podman, append(args, extra...)...)
	t.Cleanup(func() { _ = exec.Command(tl.podman, "rm", "-f", c.name).Run() })
	// Any HTTP answer (403 without a signature) means the server is up.
	url := fmt.Sprintf("%s://127.0.0.1:%d/devstoreaccount1/Tables", scheme, port)
	deadline := began.Add(2 * time.Minute)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			return c, time.Since(began)
		}
		if time.Now().After(deadline) {
			logs, _ := exec.Command(tl.podman, "logs", c.name).CombinedOutput()
			t.Fatalf("no answer from the container on %s within 2 minutes: %v\n%s", url, err, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM (podman stop, which would SIGKILL after 30 s) and
// asserts a clean exit: status 0, and not killed.
func stop(t *testing.T, tl tools, c container) {
	t.Helper()
	run(t, tl.podman, "stop", "-t", "30", c.name)
	state := run(t, tl.podman, "inspect", "--format", "{{.State.ExitCode}} {{.State.OOMKilled}}", c.name)
	if state != "0 false" {
		logs, _ := exec.Command(tl.podman, "logs", c.name).CombinedOutput()
		t.Fatalf("container stopped with exit code and OOM %q, want 0 false\n%s", state, logs)
	}
	logs := run(t, tl.podman, "logs", c.name)
	if !strings.Contains(logs, "tablebridge shutting down") {
		t.Errorf("serve did not log its shutdown on SIGTERM:\n%s", logs)
	}
}

func sdkClient(t *testing.T, connStr string, transport *http.Client) *aztables.ServiceClient {
	t.Helper()
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}
	if transport != nil {
		opts.Transport = transport
	}
	svc, err := aztables.NewServiceClientFromConnectionString(connStr, opts)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func connectionString(scheme string, port int) string {
	return fmt.Sprintf("DefaultEndpointsProtocol=%s;AccountName=%s;AccountKey=%s;TableEndpoint=%s://127.0.0.1:%d/%s;",
		scheme, auth.DevStoreAccountName, auth.DevStoreAccountKey, scheme, port, auth.DevStoreAccountName)
}

func TestContainerImage(t *testing.T) {
	t.Parallel()
	tl := requireTools(t)
	image := buildImage(t, tl)

	t.Run("Image", func(t *testing.T) {
		got := run(t, tl.podman, "image", "inspect", "--format",
			"{{.Size}}|{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.Volumes}}|{{json .Config.ExposedPorts}}|{{.Config.StopSignal}}", image)
		parts := strings.Split(got, "|")
		if len(parts) != 6 {
			t.Fatalf("image inspect: %q", got)
		}
		size, _ := strconv.ParseInt(parts[0], 10, 64)
		t.Logf("image size: %d bytes (%.1f MB)", size, float64(size)/1e6)
		if parts[1] == "" || strings.HasPrefix(parts[1], "0:") || parts[1] == "root" {
			t.Errorf("image runs as %q; want a non-root user", parts[1])
		}
		for _, want := range []struct{ what, got, want string }{
			{"entrypoint", parts[2], `["/tablebridge","serve","-listen","0.0.0.0:10002","-data","/data"]`},
			{"volumes", parts[3], `{"/data":{}}`},
			{"ports", parts[4], `{"10002/tcp":{}}`},
			{"stop signal", parts[5], "SIGTERM"},
		} {
			if want.got != want.want {
				t.Errorf("%s %s; want %s", want.what, want.got, want.want)
			}
		}
		// FROM scratch: the binary, the CA certificates and /data only.
		ctr := run(t, tl.buildah, "from", "--name", fmt.Sprintf("tablebridge-test-files-%d", os.Getpid()), image)
		defer exec.Command(tl.buildah, "rm", ctr).Run()
		mnt := run(t, tl.buildah, "mount", ctr)
		defer exec.Command(tl.buildah, "umount", ctr).Run()
		var files []string
		_ = filepath.Walk(mnt, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				rel, _ := filepath.Rel(mnt, p)
				files = append(files, rel)
			}
			return nil
		})
		if strings.Join(files, " ") != "etc/ssl/certs/ca-certificates.crt tablebridge" {
			t.Errorf("image files %q; want the binary and the CA certificates only", files)
		}
	})

	t.Run("ServesAndKeepsData", func(t *testing.T) {
		volume := fmt.Sprintf("tablebridge-test-%d", os.Getpid())
		t.Cleanup(func() { _ = exec.Command(tl.podman, "volume", "rm", "-f", volume).Run() })
		c, firstAnswer := start(t, tl, image, volume, "http", http.DefaultClient)
		t.Logf("podman run to first answer: %v", firstAnswer)
		// The server process itself runs unprivileged.
		// (podman top needs ps in the image; the host's /proc tells.)
		pid := run(t, tl.podman, "inspect", "--format", "{{.State.Pid}}", c.name)
		status, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(status), "\nUid:\t65532\t65532\t65532\t65532\n") {
			t.Errorf("the server process's status says %q; want uid 65532", status)
		}
		ctx := t.Context()
		svc := sdkClient(t, connectionString("http", c.port), nil)
		if _, err := svc.CreateTable(ctx, "InContainer", nil); err != nil {
			t.Fatal(err)
		}
		tc := svc.NewClient("InContainer")
		if _, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Int64","N":"9223372036854775807"}`), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err == nil || !strings.Contains(err.Error(), "EntityAlreadyExists") {
			t.Fatalf("second insert: %v; want EntityAlreadyExists", err)
		}
		stop(t, tl, c)
		run(t, tl.podman, "rm", c.name)

		// The same volume in a new container: the entity is still there.
		c2, _ := start(t, tl, image, volume, "http", http.DefaultClient)
		svc = sdkClient(t, connectionString("http", c2.port), nil)
		got, err := svc.NewClient("InContainer").GetEntity(ctx, "p", "r", nil)
		if err != nil {
			t.Fatalf("after a restart on the same volume: %v", err)
		}
		if !strings.Contains(string(got.Value), `"N":"9223372036854775807"`) {
			t.Errorf("entity %s", got.Value)
		}
		stop(t, tl, c2)
	})

	t.Run("HTTPS", func(t *testing.T) {
		volume := fmt.Sprintf("tablebridge-test-tls-%d", os.Getpid())
		t.Cleanup(func() { _ = exec.Command(tl.podman, "volume", "rm", "-f", volume).Run() })
		// The first answer is a TLS handshake, certificate unchecked: the
		// certificate is read from the volume once the server made it.
		insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		c, _ := start(t, tl, image, volume, "https", insecure, "-tls-self-signed")
		certFile := filepath.Join(t.TempDir(), "cert.pem")
		run(t, tl.podman, "cp", c.name+":/data/tls/cert.pem", certFile)
		certPEM, err := os.ReadFile(certFile)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(certPEM) {
			t.Fatal("the container's certificate does not parse")
		}
		trusted := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		svc := sdkClient(t, connectionString("https", c.port), trusted)
		if _, err := svc.CreateTable(t.Context(), "OverTLS", nil); err != nil {
			t.Fatal(err)
		}
		stop(t, tl, c)
	})
}
