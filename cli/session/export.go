package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/export"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/internal/safefile"
	"github.com/loomhq/loom/secrets"
)

// ExportOptions are the options of `loom session export`.
type ExportOptions struct {
	IO *term.IOStreams
	// ReadStore opens the store to read.
	ReadStore func(context.Context) (loom.Engine, error)
	// Resolve finds the live session a reference names.
	Resolve func(ctx context.Context, st loom.Reader, ref string) (*loom.Session, error)
	// Cwd is the working directory.
	Cwd  func() (string, error)
	User string
	JSON bool

	Ref    string
	All    bool
	Format export.Format
	Output string
	// Salvage exports what can be read of a damaged store.
	Salvage bool
	// Secrets returns the secret detector: markdown and html redact
	// secrets unless NoRedact.
	Secrets  func() (*secrets.Detector, error)
	NoRedact bool
	// HidePaths replaces, in markdown and html, the project root, home
	// directories and usernames (share.Hider).
	HidePaths bool
}

func newCmdSessionExport(inv *command.Invocation, runF func(*ExportOptions) error) *cobra.Command {
	opts := &ExportOptions{
		IO:        inv.IO,
		ReadStore: inv.ReadStore,
		Resolve:   inv.Scope().Resolve,
		Cwd:       inv.Cwd,
		Secrets:   command.ConfigLoader(inv.Config).Detector,
	}
	var formatName string
	cmd := &cobra.Command{
		Use:   "export REF | --all",
		Short: "Write sessions to a file, with their sub-agent sessions",
		Long: `Write a session and its sub-agent sessions (or, with --all, every session
of the user) to standard output or a file.

Formats: jsonl (default; one JSON object a line), json (one document),
markdown (for reading) and html (one self-contained page, as the dashboard
shows the session, to share or archive: open it in any browser, offline).
jsonl and json keep everything — ids, seq, times, every part, usage,
lineage — and loom session import reads them back unchanged. The formats
are described in docs/formats.md.

markdown and html replace secrets (API keys, tokens, passwords, private
keys) with [REDACTED:rule] markers and say how many on standard error;
--no-redact keeps them. They keep the absolute paths of this machine
(the project's root, the file a session was imported from, what the
messages say) unless --hide-paths, which replaces the project root by
<project>, home directories by ~ and your usernames by <user>, as loom
share --hide-paths does. jsonl and json are the lossless backup: they keep
secrets as stored, and say so on standard error when there are any. See
docs/security.md.

A session that cannot be read (a damaged store file) fails the export,
naming it. --all --salvage exports what a damaged store still holds: a
message whose stored parts cannot be read becomes a note saying so, a
session that cannot be read at all is left out (with its sub-agent
sessions); each is named on standard error and the exit status is 1.
See docs/reliability.md.`,
		Example: `  loom session export 0196a3b2 > session.jsonl
  loom session export "flaky test" --format markdown -o flaky.md
  loom session export "flaky test" --format html -o flaky.html
  loom session export "flaky test" --format html --hide-paths -o flaky.html
  loom session export "flaky test" --format markdown --no-redact -o flaky.md
  loom session export --all -o backup.jsonl
  loom session export --all --salvage -o rescued.jsonl`,
		Args: command.ArgsBetween(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Ref = args[0]
			}
			if opts.Ref == "" && !opts.All {
				return command.UsageErrorf("give a session reference or --all; usage: %s", cmd.UseLine())
			}
			if opts.Ref != "" && opts.All {
				return command.UsageErrorf("give either a session reference or --all, not both")
			}
			if opts.Salvage && !opts.All {
				return command.UsageErrorf("--salvage goes with --all")
			}
			format, ok := export.ParseFormat(formatName)
			if !ok {
				return command.UsageErrorf("unknown format %q: use jsonl, json, markdown or html", formatName)
			}
			if opts.HidePaths && lossless(format) {
				return command.UsageErrorf("--hide-paths goes with --format markdown or html: %s is the lossless backup, kept as stored", format)
			}
			opts.Format = format
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return exportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&formatName, "format", "f", string(export.JSONL), "jsonl, json, markdown or html")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write to this file instead of standard output")
	cmd.Flags().BoolVar(&opts.All, "all", false, "export every session of the user")
	cmd.Flags().BoolVar(&opts.NoRedact, "no-redact", false, "markdown and html: keep secrets as stored")
	cmd.Flags().BoolVar(&opts.HidePaths, "hide-paths", false, "markdown and html: replace the project root, home directories and usernames (default: kept)")
	cmd.Flags().BoolVar(&opts.Salvage, "salvage", false, "with --all: export what a damaged store still holds, name what it could not read and exit 1")
	return cmd
}

func exportRun(ctx context.Context, opts *ExportOptions) error {
	eng, err := opts.ReadStore(ctx)
	if err != nil {
		return err
	}
	var st loom.Reader = eng
	// Markdown and HTML leave the machine: the store is read through
	// the secrets gate, redacted before anything is rendered.
	gate, err := exportGate(opts)
	if err != nil {
		return err
	}
	if gate != nil {
		gate = gate.Detector().Gate(st)
		st = gate
	}
	var data []*loom.SessionData
	var rescue export.Rescue
	if opts.All {
		// A backup holds every session, archived ones too.
		all, err := st.Sessions(ctx, loom.SessionFilter{UserID: opts.User, Archived: loom.WithArchived})
		if err != nil {
			return err
		}
		if opts.Salvage {
			data, rescue, err = export.LoadReadable(ctx, st, export.Order(all))
		} else {
			data, err = export.Load(ctx, st, export.Order(all))
		}
		if err != nil {
			if ctx.Err() == nil {
				err = fmt.Errorf("%w; loom session export --all --salvage exports what can be read", err)
			}
			return err
		}
	} else {
		s, err := opts.Resolve(ctx, st, opts.Ref)
		if err != nil {
			return err
		}
		if data, err = export.Family(ctx, st, opts.User, s); err != nil {
			return err
		}
	}
	if err := redactExport(opts, data, gate); err != nil {
		return err
	}
	if opts.HidePaths {
		if lossless(opts.Format) {
			return loom.Errorf(loom.EINVALID, "--hide-paths goes with markdown or html: %s is the lossless backup, kept as stored", opts.Format)
		}
		hidePaths(data)
	}
	nmsg := 0
	for _, d := range data {
		nmsg += len(d.Messages)
	}
	write := func(w io.Writer) error { return export.Write(w, opts.Format, data) }
	if opts.Output == "" || opts.Output == "-" {
		var err error
		if opts.IO.IsStdoutTTY() {
			err = writeExportToTerminal(opts.IO.Out, opts.Format, write)
		} else {
			err = write(opts.IO.Out)
		}
		if err != nil {
			return err
		}
		return rescueError(rescue)
	}
	path := opts.Output
	if !filepath.IsAbs(path) {
		wd, err := opts.Cwd()
		if err != nil {
			return err
		}
		path = filepath.Join(wd, path)
	}
	if err := writeFileAtomic(path, write); err != nil {
		return err
	}
	if opts.IO.IsStderrTTY() || opts.IO.IsStdoutTTY() {
		fmt.Fprintf(opts.IO.ErrOut, "Exported %s (%s) to %s\n", human.Plural(len(data), "session"), human.Plural(nmsg, "message"), opts.Output)
	}
	return rescueError(rescue)
}

// lossless reports whether f is a format import reads back: kept as
// stored.
func lossless(f export.Format) bool { return f == export.JSON || f == export.JSONL }

// exportGate returns a gate (over no store yet) when the export is to
// be redacted: markdown and html, unless --no-redact.
func exportGate(opts *ExportOptions) (*secrets.Gate, error) {
	if opts.Secrets == nil || lossless(opts.Format) || opts.NoRedact {
		return nil, nil
	}
	d, err := opts.Secrets()
	if err != nil {
		return nil, err
	}
	return d.Gate(nil), nil
}

// redactExport says on standard error how many secrets a markdown or
// html export had redacted (gate), or how many a jsonl or json export,
// which keeps them, holds.
func redactExport(opts *ExportOptions, data []*loom.SessionData, gate *secrets.Gate) error {
	if gate != nil {
		if n := gate.Redacted(); n > 0 {
			fmt.Fprintf(opts.IO.ErrOut, "loom: redacted %s (--no-redact keeps them)\n", human.Plural(n, "secret"))
		}
		return nil
	}
	if opts.Secrets == nil || !(opts.Format == export.JSON || opts.Format == export.JSONL) {
		return nil
	}
	d, err := opts.Secrets()
	if err != nil {
		return err
	}
	n := 0
	for _, sd := range data {
		for _, m := range sd.Messages {
			n += len(d.ScanMessage(m))
		}
	}
	if n > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "loom: the %s export keeps %s as stored: it is the lossless backup (markdown and html redact them)\n", opts.Format, human.Plural(n, "secret"))
	}
	return nil
}

// rescueError says what an export of a damaged store could not read,
// nil when it read everything.
func rescueError(r export.Rescue) error {
	var said []string
	say := func(us []export.Unreadable, what string) {
		if len(us) == 0 {
			return
		}
		reasons := make([]string, len(us))
		for i, u := range us {
			// The store's errors mostly name the session already.
			if reasons[i] = u.Err.Error(); !strings.Contains(reasons[i], u.ID) {
				reasons[i] = u.ID + ": " + reasons[i]
			}
		}
		said = append(said, human.Plural(len(us), "session")+" "+what+": "+strings.Join(reasons, "; "))
	}
	say(r.Salvaged, "exported with notes in place of messages that could not be read")
	say(r.Left, "left out, not readable")
	if len(said) == 0 {
		return nil
	}
	return fmt.Errorf("the store is damaged; the export holds what could be read: %s", strings.Join(said, "; "))
}

// writeExportToTerminal writes an export meant for a file on a terminal,
// escaped as everything loom prints from the store: Markdown with
// term.Sanitize, JSON with term.SanitizeJSON (the same JSON). A file or a
// pipe gets the export exactly.
func writeExportToTerminal(out io.Writer, format export.Format, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	text := b.Bytes()
	if format == export.JSON || format == export.JSONL {
		text = term.SanitizeJSON(text)
	} else {
		text = []byte(term.Sanitize(string(text)))
	}
	_, err := out.Write(text)
	return err
}

// writeFileAtomic writes a file through a temporary file and a rename, so
// that a failed export never leaves half a file where a good one was.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		// Said of the directory: the temporary file's name is none of
		// the user's.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("write %s: no directory %s", path, dir)
		}
		return fmt.Errorf("write %s: in %s: %w", path, dir, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// importSummary is the JSON shape of what import wrote.
type importSummary struct {
	Sessions []string `json:"sessions"`
	Messages int      `json:"messages"`
	// Held counts the sessions the store held already with every message
	// of the import's: left out.
	Held int `json:"held"`
	// Copies counts the sessions the store held with other messages,
	// imported beside them as new sessions ("T (imported)").
	Copies int `json:"copies"`
}

// importFilesRun imports loom's export files (opts.Files).
func importFilesRun(ctx context.Context, opts *ImportOptions) error {
	var all []*loom.SessionData
	where := map[string]string{}
	// A fork or sub-agent session's parent is in its file, in a file
	// named before it, or in the store as the user's.
	parentKnown := func(id string) (bool, error) {
		if _, ok := where[id]; ok {
			return true, nil
		}
		st, err := opts.ReadStore(ctx)
		if err != nil {
			return false, err
		}
		s, err := st.Session(ctx, id)
		if loom.ErrorCode(err) == loom.ENOTFOUND {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return s.UserID == opts.User, nil
	}
	for _, file := range opts.Files {
		name := file
		if file == "-" {
			name = "<stdin>"
		}
		data, err := readExport(ctx, opts, file, name, parentKnown)
		if err != nil {
			return err
		}
		for _, d := range data {
			if prev, ok := where[d.Session.ID]; ok {
				return loom.Errorf(loom.EINVALID, "%s: session %s is also in %s", name, d.Session.ID, prev)
			}
			where[d.Session.ID] = name
		}
		all = append(all, data...)
	}
	st, err := opts.CreateStore(ctx)
	if err != nil {
		return err
	}
	all, held, err := settleHeld(ctx, st, opts.User, all)
	if err != nil {
		return err
	}
	if len(all) > 0 {
		if err := st.Import(ctx, all); err != nil {
			return err
		}
	}
	sum := importSummary{Sessions: make([]string, len(all)), Held: held.Same, Copies: held.Copies}
	for i, d := range all {
		sum.Sessions[i] = d.Session.ID
		sum.Messages += len(d.Messages)
	}
	if err := importer.MergeAfterImport(ctx, st, sum.Messages); err != nil {
		slog.Warn("import", "err", err)
	}
	var said []string
	if held.Same > 0 {
		said = append(said, human.Plural(held.Same, "session")+" this store holds already left out")
	}
	if held.Copies > 0 {
		said = append(said, human.Plural(held.Copies, "session")+` this store holds with other messages imported beside them as "T (imported)"`)
	}
	if len(said) > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "%s.\n", strings.Join(said, "; "))
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, sum)
	}
	if opts.IO.IsStdoutTTY() {
		fmt.Fprintf(opts.IO.Out, "%s Imported %s (%s)\n", opts.IO.ColorScheme().Green("✓"), human.Plural(len(all), "session"), human.Plural(sum.Messages, "message"))
	} else {
		for _, id := range sum.Sessions {
			fmt.Fprintln(opts.IO.Out, id)
		}
	}
	return nil
}

// readExport reads one file of an import ("-" is standard input). Its
// sessions belong to whoever imports them: a user never sees another
// user's sessions. parent says whether a parent the file does not hold
// is there already (export.ReadOptions.Parent). Only a regular file, or
// a pipe as standard input, is read, within export's limits, and the
// read ends when ctx does, even one blocked on a pipe that says nothing.
func readExport(ctx context.Context, opts *ImportOptions, file, name string, parent func(id string) (bool, error)) ([]*loom.SessionData, error) {
	ro := export.ReadOptions{Name: name, UserID: opts.User, Parent: parent}
	var in io.Reader
	if file == "-" {
		stdin, _ := opts.IO.In.(*os.File)
		if err := safefile.Stdin(stdin, export.MaxSize); err != nil {
			return nil, loom.Errorf(loom.EINVALID, "%s: %v", name, err)
		}
		in = opts.IO.In
	} else {
		path := file
		if !filepath.IsAbs(path) {
			wd, err := opts.Cwd()
			if err != nil {
				return nil, err
			}
			path = filepath.Join(wd, path)
		}
		// Opened without blocking (a named pipe would wait for a writer)
		// and refused unless a regular file within the limit.
		fh, _, err := safefile.Open(path, export.MaxSize)
		if err != nil {
			return nil, loom.Errorf(loom.EINVALID, "read %s: %v", name, unwrapPath(err))
		}
		defer fh.Close()
		in = fh
	}
	type result struct {
		data []*loom.SessionData
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := export.ReadContext(ctx, in, ro)
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-ctx.Done():
		// A read blocked on a silent pipe never returns: the command
		// ends without it.
		return nil, ctx.Err()
	}
}

// unwrapPath is err without the operation and path os adds (the caller
// names the file).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
