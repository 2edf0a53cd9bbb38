package releasetest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// engine runs images: the command `docker` that README.md's run line
// calls, found first on PATH in dir.
type engine struct {
	name string // docker, or podman standing in for it
	dir  string // holds the docker command the tests run
	// shared is whether images, containers and volumes are the
	// machine's (a Docker daemon's), not the test's own.
	shared bool
}

// findEngine is docker where its daemon answers; else podman, in a store
// of the test's own in a temporary directory, called through a `docker`
// command in front of it (podman takes docker's command line); else
// nothing.
//
// podman is given two settings this machine needs and a user's machine
// has anyway: the limits on open files and processes of the test's
// process (podman asks for 1,048,576 open files, which a process without
// CAP_SYS_RESOURCE cannot raise its limit to, as where CI runs), and
// runc where it is installed (crun, podman's first choice, refuses the
// hybrid cgroup layout of cgroup v1 with an empty v2 beside it).
func findEngine(t *testing.T) (engine, bool) {
	t.Helper()
	if _, err := exec.LookPath("docker"); err == nil && exec.Command("docker", "info").Run() == nil {
		return engine{name: "docker", shared: true}, true
	}
	podman, err := exec.LookPath("podman")
	if err != nil {
		return engine{}, false
	}
	base := t.TempDir()
	dir := filepath.Join(base, "bin")
	for _, d := range []string{dir, filepath.Join(base, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var nofile, nproc syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	const rlimitNproc = 6 // RLIMIT_NPROC on Linux
	if err := syscall.Getrlimit(rlimitNproc, &nproc); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("[containers]\ndefault_ulimits = [\"nofile=%d:%d\", \"nproc=%d:%d\"]\n",
		min(nofile.Max, 1<<20), min(nofile.Max, 1<<20), min(nproc.Max, 4096), min(nproc.Max, 4096))
	if _, err := exec.LookPath("runc"); err == nil {
		conf += "[engine]\nruntime = \"runc\"\n"
	}
	confPath := filepath.Join(base, "containers.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\n# podman, with a store of its own, in docker's place\nCONTAINERS_CONF=%s exec %s --root %s --runroot %s --tmpdir %s \"$@\"\n",
		confPath, podman, filepath.Join(base, "root"), filepath.Join(base, "run"), filepath.Join(base, "tmp"))
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e := engine{name: "podman", dir: dir}
	t.Cleanup(func() {
		// Leave no container running nor anything mounted in the store
		// that the temporary directory's removal would trip on.
		_, _ = e.docker(context.Background(), "rm", "-f", "--all")
		_, _ = e.docker(context.Background(), "volume", "prune", "-f")
		_, _ = e.docker(context.Background(), "rmi", "-a", "-f")
	})
	return e, true
}

// docker runs the engine's docker command.
func (e engine) docker(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	bin := "docker"
	if e.dir != "" {
		bin = filepath.Join(e.dir, "docker")
	}
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("docker %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// path is PATH with the engine's docker first.
func (e engine) path() string {
	if e.dir == "" {
		return os.Getenv("PATH")
	}
	return e.dir + string(os.PathListSeparator) + os.Getenv("PATH")
}

// runImage loads the image from the release's tar, gives it the name
// README.md's run line uses (as publishing it as :latest does), runs
// `loom version` in it, and then runs README.md's run line as written:
// the hub answers on the port the line publishes with the token its log
// shows, and started again on the same volume it keeps its home (the
// same token).
func (r release) runImage(t *testing.T, e engine, tarPath, name, runLine string) {
	t.Helper()
	ctx := context.Background()
	t.Logf("running the image with %s", e.name)
	if out, err := e.docker(ctx, "load", "-i", tarPath); err != nil {
		t.Fatal(err)
	} else if !strings.Contains(out, name) {
		t.Errorf("docker load named no %s: %s", name, out)
	}
	fields := strings.Fields(runLine)
	ref := fields[len(fields)-1]
	if _, err := e.docker(ctx, "tag", name, ref); err != nil {
		t.Fatal(err)
	}
	out, err := e.docker(ctx, "run", "--rm", ref, "version")
	if err != nil || !strings.HasPrefix(out, "loom v"+r.version+" (") {
		t.Errorf("docker run --rm %s version: %q, %v", ref, out, err)
	}

	m := regexp.MustCompile(` -p ([0-9]+):[0-9]+ `).FindStringSubmatch(runLine)
	v := regexp.MustCompile(` -v ([a-z-]+):/`).FindStringSubmatch(runLine)
	if m == nil || v == nil {
		t.Fatalf("README.md's run line publishes no port or names no volume: %s", runLine)
	}
	port, volume := m[1], v[1]
	if ln, err := net.Listen("tcp", ":"+port); err != nil {
		t.Skipf("port %s is taken on this machine (%v): README.md's run line publishes it, so it is not run", port, err)
	} else {
		_ = ln.Close()
	}
	if e.shared {
		if _, err := e.docker(ctx, "volume", "inspect", volume); err == nil {
			t.Skipf("Docker already has a volume %s: README.md's run line would use it, so it is not run", volume)
		}
		t.Cleanup(func() { _, _ = e.docker(ctx, "volume", "rm", "-f", volume) })
	}

	first := r.runReadmeLine(t, e, runLine, port)
	again := r.runReadmeLine(t, e, runLine, port)
	if again != first {
		t.Errorf("started again on the volume %s, the hub showed %q, not %q", volume, again, first)
		return
	}
	t.Logf("%s: the hub answered on port %s with the token it showed, twice, the second time with the first's token kept in the volume %s", runLine, port, volume)
}

// runReadmeLine runs README.md's run line as written, waits for the hub
// to show its address, asks the hub for its sessions with the token it
// showed, and removes the container; it returns the address shown.
func (r release) runReadmeLine(t *testing.T, e engine, runLine, port string) string {
	t.Helper()
	ctx := context.Background()
	env := []string{"PATH=" + e.path()}
	if e.shared {
		// The user's Docker: its client finds the daemon through these.
		for _, k := range []string{"HOME", "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG"} {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	res := sh(t, runLine, env...)
	id := strings.TrimSpace(res.stdout)
	if res.err != nil || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(id) {
		t.Fatalf("%s: %q, %v\n%s", runLine, res.stdout, res.err, res.stderr)
	}
	defer func() { _, _ = e.docker(ctx, "rm", "-f", id) }()

	var shown string
	deadline := time.Now().Add(time.Minute)
	for shown == "" {
		logs, err := e.docker(ctx, "logs", id)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(logs, "\n") {
			if s, ok := strings.CutPrefix(line, "loom serve: "); ok {
				shown = s
			}
		}
		if shown == "" {
			if time.Now().After(deadline) {
				t.Fatalf("the hub showed no address in a minute; docker logs:\n%s", logs)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	u, err := url.Parse(shown)
	token := ""
	if err == nil {
		token = u.Query().Get("token")
	}
	if err != nil || u.Port() != port || token == "" {
		t.Fatalf("the hub showed %q, no address on port %s with a token", shown, port)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+port+"/api/v1/sessions", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	var resp *http.Response
	for {
		resp, err = http.DefaultClient.Do(req)
		if err == nil || time.Now().After(deadline) || !errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the hub on port %s: %v", port, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/v1/sessions with the token the hub showed: %s", resp.Status)
	}
	return shown
}
