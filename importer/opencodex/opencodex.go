// Package opencodex reads the sessions of Open Codex (npm's open-codex,
// the open-codex command: a fork of the first, TypeScript, Codex CLI
// that speaks the Chat Completions API of any provider) for loom's
// importer.
//
// Open Codex saves a session from its terminal interface as a JSON
// document, ~/.codex/sessions/rollout-<date>-<id>.json, beside the
// rollout-*.jsonl files the Codex CLI of today writes under
// ~/.codex/sessions/<year>/<month>/<day>/ (the codex reader's). The
// document is {session: {timestamp, id, instructions}, items: [...]},
// the items the Chat Completions messages of the conversation so far:
// role user (content, a list of text parts), assistant (content,
// tool_calls whose arguments are a JSON string) and tool (content,
// tool_call_id). It is written two seconds after the last item
// arrived, each time to a new file with a new id and the whole
// conversation in it: a session of three pauses is three files, each
// one's items the start of the next one's. /clear starts a new
// conversation.
//
// So the files of a directory are read together, as one bundle: each
// file joins the conversation whose last file's items are the start of
// its own (the longest such), or starts one. A conversation is a
// session whose id is its first file's, read from its last file; each
// message is dated when the first file that holds it was written. Open
// Codex keeps no model, provider, working directory or usage. A file
// that is not such a document is a problem of its own; the others are
// read. A document whose items each have a type (the Responses API's
// items, as the first Codex CLI saved them) is not Open Codex's: it is
// counted as skipped.
//
// The format is the one Open Codex 0.1.31 wrote when run offline against
// a fake model (testdata/real).
package opencodex

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom/importer"
)

// Format reads Open Codex's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Open Codex's name in loom.
const Tool = "open-codex"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": a session names no provider, and Open Codex has none
// of its own.
func (Format) Provider() string { return "" }

// Roots is ~/.codex/sessions: Open Codex reads no variable for it.
func (Format) Roots(_ func(string) string, home string) []string {
	return importer.Under(home, ".codex", "sessions")
}

// isRollout says whether name is one of Open Codex's documents (not the
// rollout-*.jsonl lines of the Codex CLI).
func isRollout(name string) bool {
	return strings.HasPrefix(name, "rollout-") && strings.HasSuffix(name, ".json")
}

// Bundles lists the documents under root, those of a directory as one
// bundle (their conversations are found across files), its main file
// the one written first, which stays while later ones are added.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	bs, err := importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return isRollout(d.Name())
	})
	type file struct {
		path string
		mod  time.Time
	}
	byDir := map[string][]file{}
	var dirs []string
	for _, b := range bs {
		p := b.Name()
		var mod time.Time
		if fi, err := os.Stat(p); err == nil {
			mod = fi.ModTime()
		}
		dir := filepath.Dir(p)
		if byDir[dir] == nil {
			dirs = append(dirs, dir)
		}
		byDir[dir] = append(byDir[dir], file{p, mod})
	}
	out := make([]importer.Bundle, 0, len(dirs))
	for _, dir := range dirs {
		files := byDir[dir]
		slices.SortFunc(files, func(a, b file) int {
			return cmp.Or(a.mod.Compare(b.mod), cmp.Compare(a.path, b.path))
		})
		b := importer.Bundle{Files: make([]string, 0, len(files))}
		for _, f := range files {
			b.Files = append(b.Files, f.path)
		}
		out = append(out, b)
	}
	return out, err
}

// document is one saved file.
type document struct {
	Session struct {
		Timestamp string `json:"timestamp"`
		ID        string `json:"id"`
	} `json:"session"`
	Items []json.RawMessage `json:"items"`
}

// snapshot is a document as read: where, when, and its items, each
// in a canonical form so that two files' items compare as bytes.
type snapshot struct {
	path  string
	id    string
	at    time.Time
	items [][]byte
	// damaged says the file held bytes that are not UTF-8, decoded as
	// U+FFFD: its items are matched with the other files' loosely
	// (sameItem).
	damaged bool
}

// conversation is the snapshots of one conversation, in order.
type conversation []*snapshot

func (c conversation) last() *snapshot { return c[len(c)-1] }

// startsWith says whether items begin with all of prefix; loose
// when either comes from a damaged file (sameItem).
func startsWith(items, prefix [][]byte, loose bool) bool {
	if len(prefix) > len(items) {
		return false
	}
	for i, p := range prefix {
		if !bytes.Equal(items[i], p) && (!loose || !sameItem(items[i], p)) {
			return false
		}
	}
	return true
}

// replacement is U+FFFD as UTF-8, what JSON decoding makes of bytes
// that are not UTF-8.
var replacement = []byte("\uFFFD")

// sameItem says whether items a and b, in canonical form, are one item
// of which one copy (or both) had bytes that are not UTF-8: equal but
// where one holds U+FFFD, which stands for nothing in the other (bytes
// inserted) or for one letter that is not ASCII (a letter cut). So a
// text damaged in one file still tells that file's place in its
// conversation.
func sameItem(a, b []byte) bool {
	if !bytes.Contains(a, replacement) && !bytes.Contains(b, replacement) {
		return false
	}
	for len(a) > 0 || len(b) > 0 {
		switch {
		case bytes.HasPrefix(a, replacement) && !bytes.HasPrefix(b, replacement):
			a = a[len(replacement):]
			if len(b) > 0 && b[0] >= utf8.RuneSelf && !bytes.HasPrefix(a, b[:runeLen(b)]) {
				b = b[runeLen(b):]
			}
		case bytes.HasPrefix(b, replacement) && !bytes.HasPrefix(a, replacement):
			a, b = b, a
		case len(a) > 0 && len(b) > 0 && a[0] == b[0]:
			a, b = a[1:], b[1:]
		default:
			return false
		}
	}
	return true
}

// runeLen is the length of the first letter of p, at least 1.
func runeLen(p []byte) int {
	_, n := utf8.DecodeRune(p)
	return max(n, 1)
}

// Read reads the documents of one bundle: a session per conversation.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	res := &importer.Result{}
	var snaps []*snapshot
	for _, name := range b.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, err := readSnapshot(res, name)
		if errors.Is(err, errResponses) {
			res.Skip("responses-rollout")
			continue
		}
		if err != nil {
			res.Unreadablef(name, 0, err.Error())
			continue
		}
		if len(s.items) == 0 {
			res.Skip("empty-rollout")
			continue
		}
		snaps = append(snaps, s)
	}
	// Oldest first: a conversation's files in the order they were
	// written, each one's items the start of the next one's.
	slices.SortStableFunc(snaps, func(x, y *snapshot) int {
		return cmp.Or(x.at.Compare(y.at), cmp.Compare(len(x.items), len(y.items)), cmp.Compare(x.path, y.path))
	})
	var convs []conversation
	for _, s := range snaps {
		best := -1
		for i, c := range convs {
			if l := c.last(); startsWith(s.items, l.items, s.damaged || l.damaged) && (best < 0 || len(l.items) > len(convs[best].last().items)) {
				best = i
			}
		}
		if best < 0 {
			convs = append(convs, conversation{s})
			continue
		}
		convs[best] = append(convs[best], s)
	}
	for _, c := range convs {
		if s := session(res, c); s != nil {
			res.Sessions = append(res.Sessions, s)
		}
	}
	return res, nil
}

// errResponses says a document's items are the Responses API's, each
// with a type: the first Codex CLI's own, not Open Codex's.
var errResponses = errors.New("responses-rollout")

// readSnapshot reads one document; an error says why it is none.
func readSnapshot(res *importer.Result, name string) (*snapshot, error) {
	f, fi, err := importer.Open(name, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, importer.MaxFile))
	if err != nil {
		return nil, err
	}
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not an Open Codex session: %s", importer.Excerpt(err.Error()))
	}
	s := &snapshot{path: name, id: importer.LineID(doc.Session.ID), at: importer.ISOTime(doc.Session.Timestamp), damaged: !utf8.Valid(data)}
	if s.id == "" {
		s.id = strings.TrimSuffix(filepath.Base(name), ".json")
	}
	if s.at.IsZero() {
		s.at = fi.ModTime().UTC()
	}
	for _, it := range doc.Items {
		// The canonical form: keys sorted, no space, whatever the
		// writer's order and indentation.
		var v any
		if err := json.Unmarshal(it, &v); err != nil {
			return nil, fmt.Errorf("not an Open Codex session: %s", importer.Excerpt(err.Error()))
		}
		if m, ok := v.(map[string]any); ok && m["type"] != nil {
			return nil, errResponses
		}
		c, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("not an Open Codex session: %s", importer.Excerpt(err.Error()))
		}
		s.items = append(s.items, c)
	}
	if s.damaged {
		res.CheckUTF8(name, 0, data)
	}
	return s, nil
}

// session is conversation c as a session: the messages of its last
// file, each dated by the first file that holds it, under the id of its
// first file.
func session(res *importer.Result, c conversation) *importer.Session {
	last := c.last()
	t := &importer.Transcript{Res: res}
	k := 0
	for i, raw := range last.items {
		for k < len(c)-1 && len(c[k].items) <= i {
			k++
		}
		var l importer.ChatLine
		if err := json.Unmarshal(raw, &l); err != nil {
			res.Problemf(last.path, 0, "item "+strconv.Itoa(i+1)+": "+importer.Excerpt(err.Error()))
			continue
		}
		t.AddChat(strconv.Itoa(i), l, c[k].at, false)
	}
	s := t.Session(c[0].id, last.path)
	if s == nil {
		return nil
	}
	s.UpdatedAt = last.at
	return s
}
