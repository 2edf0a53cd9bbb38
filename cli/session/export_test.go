package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/export"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/secrets"
)

// awsKey is a secret the default detector finds.
const awsKey = "AKIAQ3EGRB7XK2M4T6ZW"

func (w *world) exportOptions(ios *term.IOStreams, format export.Format) *ExportOptions {
	return &ExportOptions{
		IO: ios, ReadStore: w.open, Resolve: w.scope(ios).Resolve,
		Cwd:     func() (string, error) { return w.root, nil },
		Secrets: func() (*secrets.Detector, error) { return secrets.Default(), nil },
		User:    "local", Format: format,
	}
}

// readBack reads an export back as import does.
func readBack(t *testing.T, r string) []*loom.SessionData {
	t.Helper()
	data, err := export.Read(strings.NewReader(r), export.ReadOptions{Name: "export"})
	if err != nil {
		t.Fatalf("the export does not read back: %v\n%s", err, r)
	}
	return data
}

// Markdown redacts secrets and says how many, unless --no-redact; the
// jsonl backup keeps them, says so, and is written whole to the file
// named, readable by its owner alone.
func TestSessionExportRunSecrets(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.session(t, w.api, "cli:api", "deploy", "deploy with "+awsKey, "deployed")

	ios := piped()
	opts := w.exportOptions(ios, export.Markdown)
	opts.Ref = "deploy"
	if err := exportRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, errOut := outputs(ios)
	if strings.Contains(out, awsKey) || !strings.Contains(out, "deploy with [REDACTED:") || errOut != "loom: redacted 1 secret (--no-redact keeps them)\n" {
		t.Errorf("markdown:\n%s\nstderr %q", out, errOut)
	}

	ios = piped()
	opts = w.exportOptions(ios, export.Markdown)
	opts.Ref, opts.NoRedact = s.ID, true
	if err := exportRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if out, errOut := outputs(ios); !strings.Contains(out, "deploy with "+awsKey) || errOut != "" {
		t.Errorf("markdown --no-redact:\n%s\nstderr %q", out, errOut)
	}

	ios = terminal()
	opts = w.exportOptions(ios, export.JSONL)
	opts.Ref, opts.Output = "cli:api", "backup.jsonl"
	if err := exportRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, errOut = outputs(ios)
	if out != "" || errOut != "loom: the jsonl export keeps 1 secret as stored: it is the lossless backup (markdown and html redact them)\n"+
		"Exported 1 session (2 messages) to backup.jsonl\n" {
		t.Errorf("jsonl -o backup.jsonl: stdout %q, stderr %q", out, errOut)
	}
	path := filepath.Join(w.root, "backup.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data := readBack(t, string(b))
	if len(data) != 1 || data[0].Session.ID != s.ID || len(data[0].Messages) != 2 || data[0].Messages[0].Text() != "deploy with "+awsKey {
		t.Errorf("backup.jsonl holds %d sessions, want %s whole", len(data), s.ID)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup.jsonl: %v, %v; want mode 0600", fi.Mode(), err)
	}
}

// --all exports every session of the user, archived ones too, with
// their forks; a reference that finds nothing exports nothing.
func TestSessionExportRunAll(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.poolTimeout(t)
	b := w.session(t, w.web, "cli:web", "old spike", "try a spike", "spiked")
	archived := true
	if _, err := w.st.UpdateSession(t.Context(), b.ID, loom.SessionUpdate{Archived: &archived}); err != nil {
		t.Fatal(err)
	}
	fork, err := w.st.Fork(t.Context(), a.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}

	ios := piped()
	opts := w.exportOptions(ios, export.JSON)
	opts.All = true
	if err := exportRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ := outputs(ios)
	var got []*loom.Session
	for _, d := range readBack(t, out) {
		got = append(got, d.Session)
	}
	if ids, want := sortedIDs(got...), sortedIDs(a, b, fork); strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Errorf("--all exported %v, want %v", ids, want)
	}

	opts = w.exportOptions(piped(), export.JSONL)
	opts.Ref = "no such session"
	if err := exportRun(t.Context(), opts); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Errorf("an unknown reference: %v", err)
	}
	if out, _ := outputs(opts.IO); out != "" {
		t.Errorf("an unknown reference exported %q", out)
	}
}

// The command fills its options from its flags, and refuses neither or
// both of a reference and --all, --salvage without --all and an unknown
// format.
func TestNewCmdSessionExportOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdSessionExport, "flaky test", "-f", "markdown", "-o", "flaky.md", "--no-redact")
	if got.Ref != "flaky test" || got.Format != export.Markdown || got.Output != "flaky.md" || !got.NoRedact || got.All || got.Secrets == nil {
		t.Errorf("options: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdSessionExport, "--all", "--salvage"); !got.All || !got.Salvage || got.Ref != "" || got.Format != export.JSONL {
		t.Errorf("--all --salvage: %+v", got)
	}
	refused(t, cmdtest.Rejects(t, newCmdSessionExport), "give a session reference or --all")
	refused(t, cmdtest.Rejects(t, newCmdSessionExport, "0196a3b2", "--all"), "not both")
	refused(t, cmdtest.Rejects(t, newCmdSessionExport, "0196a3b2", "--salvage"), "--salvage goes with --all")
	refused(t, cmdtest.Rejects(t, newCmdSessionExport, "0196a3b2", "-f", "pdf"), `unknown format "pdf"`)
}

// The html and markdown exports hold the project's absolute path (and
// what the session says of the machine) unless --hide-paths, which
// replaces the project root by <project>, home directories by ~ and the
// usernames by <user>, everywhere in the file; the lossless formats
// refuse it.
func TestSessionExportRunHidePaths(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.session(t, w.api, "cli:api", "paths", "read "+w.api.Root+"/main.go and /home/alice/notes.txt", "read both")
	for _, format := range []export.Format{export.HTML, export.Markdown} {
		ios := piped()
		opts := w.exportOptions(ios, format)
		opts.Ref = "paths"
		if err := exportRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		if out, _ := outputs(ios); !strings.Contains(out, w.api.Root) {
			t.Errorf("%s export without --hide-paths lacks the project root %s", format, w.api.Root)
		}
		ios = piped()
		opts = w.exportOptions(ios, format)
		opts.Ref, opts.HidePaths = "paths", true
		if err := exportRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		out, _ := outputs(ios)
		if strings.Contains(out, w.api.Root) || strings.Contains(out, "/home/alice") || strings.Contains(out, w.root) {
			t.Errorf("%s export with --hide-paths holds a local path:\n%s", format, out)
		}
		if out = strings.ReplaceAll(out, "&gt;", ">"); !strings.Contains(out, "project>/main.go") || !strings.Contains(out, "~/notes.txt") {
			t.Errorf("%s export with --hide-paths does not say what it replaced:\n%s", format, out)
		}
	}
	ios := piped()
	opts := w.exportOptions(ios, export.JSONL)
	opts.Ref, opts.HidePaths = "paths", true
	if err := exportRun(t.Context(), opts); loom.ErrorCode(err) != loom.EINVALID && !strings.Contains(fmt.Sprint(err), "--hide-paths") {
		t.Errorf("jsonl with --hide-paths: %v, want it refused", err)
	}
}

// An export to a directory that does not exist names that directory,
// not the temporary file the export would have written first, and
// leaves nothing behind.
func TestSessionExportToAMissingDirectory(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.poolTimeout(t)
	opts := w.exportOptions(piped(), export.JSONL)
	dir := filepath.Join(w.root, "no-such-dir")
	opts.Ref, opts.Output = "cli:api", filepath.Join(dir, "backup.jsonl")
	err := exportRun(t.Context(), opts)
	if msg := fmt.Sprint(err); err == nil || !strings.Contains(msg, dir) || strings.Contains(msg, ".backup.jsonl.") || strings.Contains(msg, "\n") {
		t.Errorf("export to a missing directory: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the directory was made: %v", err)
	}
}
