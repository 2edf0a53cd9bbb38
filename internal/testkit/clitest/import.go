package clitest

import (
	"bufio"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer"
)

// Samples is the real session files other agents wrote: the
// repository's testdata/agent-sessions, as an absolute path, so that a
// test package at any depth finds them ("" outside the repository, where
// the tests that read them skip).
var Samples = samples()

func samples() string {
	root, err := findModuleRoot()
	if err != nil {
		return ""
	}
	return filepath.Join(root, "testdata", "agent-sessions")
}

// CopyTree copies the directory src to dst.
func CopyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func ImportReport(t *testing.T, out string) importer.Report {
	t.Helper()
	var rep importer.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("import --json: %v\n%s", err, out)
	}
	return rep
}

func ToolReport(t *testing.T, rep importer.Report, tool string) *importer.ToolReport {
	t.Helper()
	for _, tr := range rep.Tools {
		if tr.Tool == tool {
			return tr
		}
	}
	t.Fatalf("no report for %s in %+v", tool, rep)
	return nil
}

// StartWatch starts `loom session import --from tool --watch` with more
// args, stopped by Ctrl+C when the test ends, and returns its stdout.
func (fx *Fixture) StartWatch(t *testing.T, tool string, args ...string) io.Reader {
	t.Helper()
	cmd := exec.Command(LoomBinary(t), append([]string{"session", "import", "--from", tool, "--watch"}, args...)...)
	cmd.Dir, cmd.Env = fx.Project, fx.BinEnv()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	return stdout
}

// WatchImports starts `loom session import --from tool --watch --json`
// with more args (PATHs) (stopped by Ctrl+C when the test ends) and
// returns its reports as it prints them.
func (fx *Fixture) WatchImports(t *testing.T, tool string, args ...string) <-chan importer.Report {
	t.Helper()
	stdout := fx.StartWatch(t, tool, append([]string{"--json"}, args...)...)
	reports := make(chan importer.Report, 16)
	go func() {
		dec := json.NewDecoder(bufio.NewReader(stdout))
		for {
			var rep importer.Report
			if dec.Decode(&rep) != nil {
				close(reports)
				return
			}
			reports <- rep
		}
	}()
	return reports
}
