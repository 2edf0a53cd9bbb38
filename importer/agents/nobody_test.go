package agents

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// nobody is the user the import runs as when the tests run as root, who
// reads any file whatever its mode: a file without read permission can
// only be tested so.
const nobody = 65534

// asNobodyEnv names, in the child the test starts as nobody, the agent
// and the root to import; its report is printed after resultMark.
const (
	asNobodyEnv = "LOOM_TEST_IMPORT_AS_NOBODY"
	resultMark  = "IMPORT-REPORT: "
)

var (
	nobodyBinOnce sync.Once
	nobodyBin     string
	nobodyBinErr  error
)

// testBinaryForNobody is a copy of this test binary that nobody may run:
// the one go test built sits in root's 0700 directories.
func testBinaryForNobody() (string, error) {
	nobodyBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "loom-agents-nobody-")
		if err != nil {
			nobodyBinErr = err
			return
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			nobodyBinErr = err
			return
		}
		src, err := os.Open(os.Args[0])
		if err != nil {
			nobodyBinErr = err
			return
		}
		defer src.Close()
		bin := filepath.Join(dir, "agents.test")
		dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			nobodyBinErr = err
			return
		}
		if _, err := io.Copy(dst, src); err != nil {
			dst.Close()
			nobodyBinErr = err
			return
		}
		nobodyBinErr = dst.Close()
		nobodyBin = bin
	})
	return nobodyBin, nobodyBinErr
}

// removeNobodyBinary removes the copy testBinaryForNobody made, if any.
func removeNobodyBinary() {
	if nobodyBin != "" {
		os.RemoveAll(filepath.Dir(nobodyBin))
	}
}

// importAsNobody imports root with f in a copy of this test binary run
// as nobody (TestImportAsNobody), root's tree given to nobody first,
// and returns its report. file keeps its mode (none, for the case that
// uses it), so that nobody, its owner, cannot read it either.
func importAsNobody(t *testing.T, f importer.Format, root string) *importer.ToolReport {
	t.Helper()
	bin, err := testBinaryForNobody()
	if err != nil {
		t.Fatalf("a test binary nobody may run: %v", err)
	}
	// Let nobody through root's 0700 temporary directories to root.
	for dir := root; dir != "/"; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(dir, fi.Mode().Perm()|0o011)
		}
	}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Lchown(p, nobody, nobody)
		}
		return nil
	})
	cmd := exec.Command(bin, "-test.run=^TestImportAsNobody$", "-test.count=1")
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append(os.Environ(), asNobodyEnv+"="+f.Tool()+"\n"+root, "TMPDIR=/tmp", "HOME=/tmp")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the import as nobody: %v\n%s", err, out.String())
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, resultMark); ok {
			var tr importer.ToolReport
			if err := json.Unmarshal([]byte(rest), &tr); err != nil {
				t.Fatalf("the import as nobody's report: %v", err)
			}
			return &tr
		}
	}
	t.Fatalf("the import as nobody gave no report:\n%s", out.String())
	return nil
}

// TestImportAsNobody is the child of importAsNobody: it imports the root
// its environment names, as nobody, and prints the report.
func TestImportAsNobody(t *testing.T) {
	spec := os.Getenv(asNobodyEnv)
	if spec == "" {
		t.Skip("run by TestBadInputIsOneLinePerFile as nobody, when the tests run as root")
	}
	tool, root, _ := strings.Cut(spec, "\n")
	for _, f := range Formats() {
		if f.Tool() == tool {
			tr := importertest.Import(t, importertest.Store(t), f, root)
			data, err := json.Marshal(tr)
			if err != nil {
				t.Fatal(err)
			}
			os.Stdout.WriteString(resultMark + string(data) + "\n")
			return
		}
	}
	t.Fatalf("no reader %q", tool)
}
