package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/paths"
)

func newCmdLog(inv *command.Invocation) *cobra.Command {
	return command.Group(&cobra.Command{
		Use:   "log <command>",
		Short: "Read the replay logs of agent turns",
		Example: `  loom log stream
  loom log stream --follow | jq .`,
	}, newCmdLogStream(inv, nil))
}

// LogStreamOptions are the options of `loom log stream`.
type LogStreamOptions struct {
	IO *term.IOStreams
	// Dirs says where loom keeps its files.
	Dirs func() (paths.Dirs, error)
	// Cwd is the working directory.
	Cwd func() (string, error)

	Follow  bool
	LogsDir string
	// Poll is how often --follow looks for new entries.
	Poll time.Duration
}

// newCmdLogStream builds loom log stream. runF, when not nil, is called
// with the options instead of running the command (for tests).
func newCmdLogStream(inv *command.Invocation, runF func(*LogStreamOptions) error) *cobra.Command {
	opts := &LogStreamOptions{
		IO:   inv.IO,
		Dirs: inv.Dirs,
		Cwd:  inv.Cwd,
		Poll: 250 * time.Millisecond,
	}
	cmd := &cobra.Command{
		Use:   "stream",
		Short: "Print every replay-log entry, oldest first",
		Long: `Print the entries of every replay log (state/logs/<user>/<session>.jsonl),
all files merged, oldest first by timestamp. With --follow, keep printing
entries as they are appended and as new sessions start, until interrupted.

On a terminal each entry is one readable line; otherwise entries are
printed as the JSON lines they are stored as, for jq.`,
		Example: `  loom log stream
  loom log stream --follow
  loom log stream --logs-dir /srv/logs | jq 'select(.kind == "final_result")'`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return logStreamRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "F", false, "keep printing new entries until interrupted")
	cmd.Flags().StringVar(&opts.LogsDir, "logs-dir", "", "read logs from this directory (default: the state directory's logs)")
	return cmd
}

// logEntry is one line of a replay log.
type logEntry struct {
	at   time.Time
	file string
	n    int // line number, to keep a file's order among equal times
	raw  []byte
}

// logTail remembers how far each log file has been read.
type logTail struct {
	dir     string
	offsets map[string]int64
}

// poll reads the complete lines appended to every log since the last
// poll. A line still being written (no newline yet) waits for the next.
func (t *logTail) poll() ([]logEntry, error) {
	var files []string
	err := filepath.WalkDir(t.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read logs: %w", err)
	}
	var out []logEntry
	for _, path := range files {
		entries, err := t.readFrom(path)
		if err != nil {
			return nil, err
		}
		out = append(out, entries...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].at.Equal(out[j].at) {
			return out[i].at.Before(out[j].at)
		}
		if out[i].file != out[j].file {
			return out[i].file < out[j].file
		}
		return out[i].n < out[j].n
	})
	return out, nil
}

func (t *logTail) readFrom(path string) ([]logEntry, error) {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read logs: %w", err)
	}
	defer fh.Close()
	off := t.offsets[path]
	if fi, err := fh.Stat(); err == nil && fi.Size() < off {
		off = 0 // truncated or replaced: start again
	}
	if _, err := fh.Seek(off, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read logs: %w", err)
	}
	data, err := io.ReadAll(fh)
	if err != nil {
		return nil, fmt.Errorf("read logs: %w", err)
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil, nil
	}
	data = data[:end+1]
	t.offsets[path] = off + int64(len(data))
	var out []logEntry
	for i, line := range bytes.Split(data[:len(data)-1], []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		e := logEntry{file: path, n: i, raw: append([]byte(nil), line...)}
		var head struct {
			Timestamp string `json:"timestamp"`
		}
		if json.Unmarshal(line, &head) == nil {
			e.at, _ = loom.ParseTime(head.Timestamp)
		}
		out = append(out, e)
	}
	return out, nil
}

func logStreamRun(ctx context.Context, opts *LogStreamOptions) error {
	dir := opts.LogsDir
	if dir == "" {
		d, err := opts.Dirs()
		if err != nil {
			return err
		}
		dir = d.LogsDir()
	} else if !filepath.IsAbs(dir) {
		wd, err := opts.Cwd()
		if err != nil {
			return err
		}
		dir = filepath.Join(wd, dir)
	}
	t := &logTail{dir: dir, offsets: map[string]int64{}}
	poll := opts.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	for {
		entries, err := t.poll()
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := printLogEntry(opts.IO, e); err != nil {
				return err
			}
		}
		if !opts.Follow {
			return nil
		}
		select {
		case <-ctx.Done():
			// Following ends when the user interrupts it: that is
			// success, not an error.
			return nil
		case <-time.After(poll):
		}
	}
}

// printLogEntry prints an entry as its JSON line, or on a terminal as one
// readable line: time, session, kind and the gist of the entry, escaped
// for the terminal (the log holds what the model wrote).
func printLogEntry(ios *term.IOStreams, e logEntry) error {
	if !ios.IsStdoutTTY() {
		_, err := fmt.Fprintf(ios.Out, "%s\n", e.raw)
		return err
	}
	var v map[string]any
	if json.Unmarshal(e.raw, &v) != nil {
		_, err := fmt.Fprintf(ios.Out, "%s\n", term.SanitizeLine(string(e.raw)))
		return err
	}
	cs := ios.ColorScheme()
	session := term.SanitizeLine(strings.TrimSuffix(filepath.Base(e.file), ".jsonl"))
	if len(session) > term.ShortIDLen {
		session = session[:term.ShortIDLen]
	}
	when := ""
	if !e.at.IsZero() {
		when = e.at.Local().Format("15:04:05.000")
	}
	kind, _ := v["kind"].(string)
	if typ, ok := v["type"].(string); ok && kind == "step" {
		kind += ":" + typ
	}
	gist := ""
	for _, k := range []string{"text", "name", "tool", "error"} {
		if s, ok := v[k].(string); ok && s != "" {
			gist = s
			break
		}
	}
	line := fmt.Sprintf("%s %s %s %s", cs.Gray(when), cs.Cyan(session), cs.Bold(term.SanitizeLine(kind)), command.Truncate(term.SanitizeLine(gist), max(20, ios.TerminalWidth()-45)))
	_, err := fmt.Fprintln(ios.Out, strings.TrimRight(line, " "))
	return err
}
