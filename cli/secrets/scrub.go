package secrets

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/replaylog"
	sec "github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/synclog"
)

// What redact does besides replacing the secrets in the stored
// messages, so that no file of loom's holds them after it (see
// docs/security.md, "loom secrets redact"): this machine's sync log is
// rewritten, the replay logs and the chat history in the state
// directory too, and the store's files are scrubbed.

// redactScope says which sessions' copies outside the messages a
// redaction rewrites: those it acted on (every session of the user
// without SESSION: all), less those it skipped, which another process
// is writing.
type redactScope struct {
	all     bool
	ids     map[string]bool
	skipped map[string]bool
}

func newScope(ref string, sessions []*loom.Session, skipped []string) *redactScope {
	sc := &redactScope{all: ref == "", ids: map[string]bool{}, skipped: map[string]bool{}}
	for _, s := range sessions {
		sc.ids[s.ID] = true
	}
	for _, id := range skipped {
		sc.skipped[id] = true
	}
	return sc
}

func (sc *redactScope) takes(id string) bool {
	return !sc.skipped[id] && (sc.all || sc.ids[id])
}

// beforeRedact marks the store to be scrubbed before anything is
// replaced (loom.Optional.ScrubMarker), so that a redaction stopped
// before its end is scrubbed by the next one, or by the next sync.
func beforeRedact(ctx context.Context, st loom.Engine) error {
	if m := st.Optional().ScrubMarker; m != nil {
		return m.MarkScrub(ctx)
	}
	return nil
}

// afterRedact rewrites, for the sessions scope takes, this machine's
// sync log and its replay logs (and, for all sessions, the chat
// history) with the secrets d finds, and the repeats of those found in
// the store, replaced by the same markers as in the store, and then
// scrubs the store: when the store changed (changed) or the log did, or
// when an earlier redaction or sync left it to scrub.
func afterRedact(ctx context.Context, opts *RedactOptions, st loom.Engine, d *sec.Redactor, scope *redactScope, changed bool) error {
	svc := st.Optional()
	if lg := svc.LocalLog; lg != nil {
		// What a purge of this machine keeps until its next sync, to
		// save work it had not seen in a copy, may hold the secrets
		// found: it is let go now, not rewritten (the copy is then
		// made by the machine whose work it is, as without it).
		n, err := lg.SyncForgetPurged(ctx, math.MaxInt64)
		if err != nil {
			return err
		}
		changed = changed || n > 0
		n, err = lg.RedactLog(ctx, func(payloads [][]byte) ([][]byte, error) {
			return synclog.RedactEncoded(payloads, d, scope.takes)
		})
		if err != nil {
			return err
		}
		changed = changed || n > 0
	}
	if err := redactStateFiles(opts, d, scope); err != nil {
		return err
	}
	n, err := redactOriginals(ctx, st, opts.User, d, scope)
	if err != nil {
		return err
	}
	changed = changed || n > 0
	if changed {
		if sc := svc.Scrubber; sc != nil {
			return sc.Scrub(ctx)
		}
		return nil
	}
	if m := svc.ScrubMarker; m != nil {
		_, err := m.ScrubIfPending(ctx)
		return err
	}
	return nil
}

// redactOriginals rewrites the kept originals of the imported files of
// the sessions scope takes (every kept file with all of them), each
// chunk that holds a secret d finds or a repeat of one, and returns how
// many it rewrote. A chunk is redacted as text: the JSONL of an agent's
// session reads back with the markers in place; a database kept whole
// may no longer open once a secret in it is replaced (docs/durability.md).
func redactOriginals(ctx context.Context, st loom.Engine, user string, d *sec.Redactor, scope *redactScope) (int, error) {
	files, err := st.OriginalFiles(ctx, user, "")
	if err != nil {
		return 0, err
	}
	type chunkAt struct {
		path string
		off  int64
		data []byte
	}
	n := 0
	for _, f := range files {
		// A file of several sessions (a database) goes with all of them.
		if (f.SessionID == "" && !scope.all) || (f.SessionID != "" && !scope.takes(f.SessionID)) {
			continue
		}
		// The chunks to rewrite are collected first: the store is not
		// written while it is read.
		var redo []chunkAt
		err := st.OriginalChunks(ctx, user, f.Path, func(c loom.OriginalChunk) error {
			b, err := importer.DecompressOriginal(c.Data)
			if err != nil {
				return err
			}
			red, found := d.Redact(string(b))
			if found == 0 {
				return nil
			}
			data, err := importer.CompressOriginal([]byte(red))
			if err != nil {
				return err
			}
			redo = append(redo, chunkAt{f.Path, c.Offset, data})
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("redact the kept originals: %w", err)
		}
		for _, c := range redo {
			if err := st.RewriteOriginal(ctx, user, c.path, c.off, c.data); err != nil {
				return n, fmt.Errorf("redact the kept originals: %w", err)
			}
			n++
		}
	}
	return n, nil
}

// redactStateFiles rewrites the replay logs (logs/<user>/<id>.jsonl,
// written for loom's own turns) of the sessions scope takes, and with
// every session the chat history, where they hold secrets.
func redactStateFiles(opts *RedactOptions, d *sec.Redactor, scope *redactScope) error {
	if opts.Dirs == nil {
		return nil
	}
	dirs, err := opts.Dirs()
	if err != nil {
		return err
	}
	logs := filepath.Dir(dirs.SessionLog(opts.User, "x"))
	var files []string
	if scope.all {
		entries, err := os.ReadDir(logs)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("read the replay logs: %w", err)
		}
		for _, e := range entries {
			id, ok := strings.CutSuffix(e.Name(), ".jsonl")
			if ok && e.Type().IsRegular() && scope.takes(id) {
				files = append(files, filepath.Join(logs, e.Name()))
			}
		}
	} else {
		for id := range scope.ids {
			if scope.takes(id) {
				files = append(files, dirs.SessionLog(opts.User, id))
			}
		}
	}
	for _, f := range files {
		if err := rewriteLines(f, func(line string) string { return redactLogLine(d, line) }); err != nil {
			return fmt.Errorf("redact the replay log %s: %w", f, err)
		}
	}
	if scope.all {
		if err := rewriteLines(dirs.HistoryFile(), func(line string) string { return redactHistoryLine(d, line) }); err != nil {
			return fmt.Errorf("redact the chat history %s: %w", dirs.HistoryFile(), err)
		}
	}
	return nil
}

// redactLogLine returns a replay log's line (a replaylog.Entry as JSON)
// with its secrets replaced as the store's parts are.
func redactLogLine(d *sec.Redactor, line string) string {
	red, n := d.Redact(line)
	if n == 0 || json.Valid([]byte(red)) {
		return red
	}
	// A secret that spans a JSON escape: redact the entry's fields.
	var e replaylog.Entry
	if json.Unmarshal([]byte(line), &e) != nil {
		b, _ := json.Marshal(red)
		return string(b)
	}
	p, _ := d.RedactPart(loom.Part{Text: e.Text, Error: e.Error, Input: e.Input, Output: e.Output})
	e.Text, e.Error, e.Input, e.Output = p.Text, p.Error, p.Input, p.Output
	b, err := json.Marshal(e)
	if err != nil {
		return `{"kind":"` + sec.Marker("unreadable") + `"}`
	}
	return string(b)
}

// redactHistoryLine returns a line of the chat history (a prompt, quoted
// when it spans lines) with its secrets replaced.
func redactHistoryLine(d *sec.Redactor, line string) string {
	if strings.HasPrefix(line, `"`) {
		if s, err := strconv.Unquote(line); err == nil {
			if red, n := d.Redact(s); n > 0 {
				return strconv.Quote(red)
			}
			return line
		}
	}
	red, _ := d.Redact(line)
	return red
}

// rewriteLines replaces the file at path, when it exists and redact
// changes a line of it, with its lines redacted, atomically: through a
// file beside it, synced and renamed over it (with its mode), so that a
// crash leaves the old file or the new one, never a mix.
func rewriteLines(path string, redact func(string) string) error {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64<<10), len(raw)+1)
	changed := false
	for sc.Scan() {
		line := sc.Text()
		red := redact(line)
		changed = changed || red != line
		out.WriteString(red)
		out.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if !changed {
		return nil
	}
	if !bytes.HasSuffix(raw, []byte("\n")) && out.Len() > 0 {
		out.Truncate(out.Len() - 1)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(out.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
