package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/termtest"
	"github.com/loomhq/loom/openai/openaitest"
)

// bin is the loom binary, built once by TestMain from this package, as
// the README's first command builds it.
var bin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "loom-main-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "loom")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build loom: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// stackTrace matches what the Go runtime prints for a panic.
var stackTrace = regexp.MustCompile(`(?m)^(panic: |goroutine \d+ \[)`)

// place is a directory to run loom in, with its own LOOM_HOME.
type place struct {
	dir, home string
	env       []string
}

// newPlace makes a project directory, a git work tree when git is set
// (loom finds the project root from inside a subdirectory of it).
func newPlace(t *testing.T, git bool) *place {
	t.Helper()
	root := t.TempDir()
	p := &place{dir: filepath.Join(root, "proj"), home: filepath.Join(root, "home")}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if git {
		if out, err := exec.Command("git", "init", "-q", p.dir).CombinedOutput(); err != nil {
			t.Skipf("git init: %v %s", err, out)
		}
		p.dir = filepath.Join(p.dir, "sub")
		if err := os.MkdirAll(p.dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Only what loom reads: never the developer's own keys or LOOM_*.
	// Port 9 (discard) has no local model server on it.
	p.env = []string{"LOOM_HOME=" + p.home, "HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "OLLAMA_HOST=127.0.0.1:9"}
	return p
}

// withProvider points loom at a fake OpenAI server that echoes.
func (p *place) withProvider(t *testing.T) *openaitest.Server {
	t.Helper()
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	p.env = append(p.env, "OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=test-key", "LOOM_MODEL=gpt-4o-mini")
	return srv
}

func (p *place) command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	if bin == "" {
		t.Skip("builds and runs the loom binary")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = p.dir
	cmd.Env = p.env
	return cmd
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs loom with stdin on a pipe.
func (p *place) run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := p.command(t, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if stackTrace.MatchString(r.stdout + r.stderr) {
		t.Fatalf("loom %s printed a stack trace:\n%s%s", strings.Join(args, " "), r.stdout, r.stderr)
	}
	return r
}

// The README's first command: bare loom, and loom --new and loom -c,
// with stdin piped, in a git work tree and in a plain directory.
func TestBareLoomPiped(t *testing.T) {
	for _, git := range []bool{true, false} {
		t.Run(fmt.Sprintf("git=%v", git), func(t *testing.T) {
			p := newPlace(t, git)
			p.withProvider(t)
			r := p.run(t, "hello there\n")
			if r.code != 0 || !strings.Contains(r.stdout, "hello there") || !strings.Contains(r.stderr, "session ") {
				t.Fatalf("loom: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			first := sessionID(t, r.stderr)

			// Bare loom again resumes the project's current session.
			r = p.run(t, "second\n")
			if r.code != 0 || !strings.Contains(r.stderr, "resuming session "+first) {
				t.Fatalf("loom again: exit %d\nstderr: %s", r.code, r.stderr)
			}
			// -c continues it too; --new starts another.
			r = p.run(t, "third\n", "-c")
			if r.code != 0 || !strings.Contains(r.stderr, "resuming session "+first) {
				t.Fatalf("loom -c: exit %d\nstderr: %s", r.code, r.stderr)
			}
			r = p.run(t, "fourth\n", "--new")
			if r.code != 0 || sessionID(t, r.stderr) == first {
				t.Fatalf("loom --new: exit %d\nstderr: %s", r.code, r.stderr)
			}
			// Flags of chat are flags of bare loom, checked the same way.
			r = p.run(t, "", "--new", "-c")
			if r.code != 2 || !strings.Contains(r.stderr, "use only one of") {
				t.Fatalf("loom --new -c: exit %d\nstderr: %s", r.code, r.stderr)
			}
		})
	}
}

// -c in a project with no session yet is "not found", not a crash.
func TestContinueWithoutSession(t *testing.T) {
	p := newPlace(t, true)
	p.withProvider(t)
	r := p.run(t, "hello\n", "-c")
	if r.code != 3 || !strings.Contains(r.stderr, "no session to continue") {
		t.Fatalf("loom -c: exit %d\nstderr: %s", r.code, r.stderr)
	}
}

// With no provider, bare loom prints the paragraph on how to configure
// one and exits 1, whatever the flags and the directory.
func TestBareLoomWithoutProvider(t *testing.T) {
	for _, git := range []bool{true, false} {
		for _, args := range [][]string{nil, {"--new"}, {"chat"}} {
			t.Run(fmt.Sprintf("git=%v/%s", git, strings.Join(args, " ")), func(t *testing.T) {
				p := newPlace(t, git)
				r := p.run(t, "hello\n", args...)
				if r.code != 1 || !strings.Contains(r.stderr, "OPENAI_API_KEY") || !strings.Contains(r.stderr, "ANTHROPIC_API_KEY") {
					t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
				}
			})
		}
	}
}

// On a terminal, bare loom, --new and -c start the chat; the prompt line
// the user typed stays on the screen after a one-line reply.
func TestBareLoomOnTerminal(t *testing.T) {
	p := newPlace(t, true)
	p.withProvider(t)
	for i, args := range [][]string{nil, {"--new"}, {"-c"}} {
		t.Run(strings.Join(append([]string{"loom"}, args...), " "), func(t *testing.T) {
			term := termtest.Start(t, p.command(t, args...), 100, 30)
			term.WaitFor(t, "›")
			prompt := fmt.Sprintf("ping %d", i)
			term.Send(prompt + "\r")
			term.WaitFor(t, "echo: "+prompt)
			term.WaitPrompt(t, "›")
			term.Send("/usage\r")
			term.WaitFor(t, "usage ")
			if !strings.Contains(term.Screen(), "› "+prompt) {
				t.Fatalf("the prompt %q is gone from the screen after the reply:\n%s", prompt, term.Screen())
			}
			term.WaitPrompt(t, "›")
			term.Send("\x04")
			if code := term.Wait(t); code != 0 || stackTrace.MatchString(term.Output()) {
				t.Fatalf("exit %d:\n%s", code, term.Output())
			}
		})
	}
}

func sessionID(t *testing.T, stderr string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^session ([0-9a-f-]{36})$`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no session id on stderr:\n%s", stderr)
	}
	return m[1]
}
