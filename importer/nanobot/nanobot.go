// Package nanobot reads the sessions of nanobot's TypeScript port (npm's
// @jcheesepkg/nanobot, the nanobot command) for loom's importer.
//
// nanobot keeps each conversation, by its key (cli:default unless
// `nanobot agent --session` names another; a chat's key on its other
// channels), as ~/.nanobot/sessions/<key, ":" as "_">.jsonl: a first
// line of metadata (_type "metadata", _format "rich", created_at,
// updated_at, metadata), then one line a message in the Chat
// Completions form, the system prompt left out: role user, assistant
// (content, tool_calls whose arguments are a JSON string) or tool
// (content, tool_call_id, name). It writes the whole file again after
// each turn, and once a conversation passes its memory window (50
// messages) it keeps only the last few (at most 10) in the file, what
// came before summarised into its memory files.
//
// Each message is a loom message named by its line's content (a hash
// of the line, and how many lines of the same content come before it),
// not its place; a tool message completes its call. A file trimmed by
// nanobot no longer starts with the messages stored: it is imported as
// a fork of the session, which keeps every message imported before. nanobot keeps
// no time per message, no model and no usage: every message is dated
// when the session was created, and the session is last updated when
// nanobot last saved it. A line that is not JSON is a problem, the rest
// of the file is read.
//
// The format is the one nanobot 0.9.2 wrote when run offline against a
// fake model (testdata/real); the format's description is from its
// package's dist/session/manager.mjs and dist/agent/loop.mjs.
package nanobot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads nanobot's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is nanobot's name in loom.
const Tool = "nanobot"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": nanobot records none.
func (Format) Provider() string { return "" }

// Roots is ~/.nanobot/sessions: nanobot reads no variable for it.
func (Format) Roots(_ func(string) string, home string) []string {
	return importer.Under(home, ".nanobot", "sessions")
}

// Bundles lists each session's file under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".jsonl")
	})
}

// metadata is a session file's first line.
type metadata struct {
	Type      string `json:"_type"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// Read reads one session's file.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, f, fi, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := &importer.Result{}
	t := &importer.Transcript{Res: res}
	var meta metadata
	at := fi.ModTime().UTC()
	seen := map[string]int{}
	_, err = importer.SessionLines(ctx, name, f, res, func(n int, line []byte) {
		if n == 1 {
			if !res.DecodeLine(name, n, line, &meta) {
				return
			}
			if meta.Type == "metadata" {
				if ts := importer.ISOTime(meta.CreatedAt); !ts.IsZero() {
					at = ts
				}
				return
			}
		}
		var l importer.ChatLine
		if !res.DecodeLine(name, n, line, &l) {
			return
		}
		sum := sha256.Sum256(line)
		h := hex.EncodeToString(sum[:8])
		mid := h + "-" + strconv.Itoa(seen[h])
		seen[h]++
		t.AddChat(mid, l, at, false)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", Tool, name, err)
	}
	s := t.Session(importer.LineID(strings.TrimSuffix(filepath.Base(name), ".jsonl")), name)
	if s == nil {
		return res, nil
	}
	if u := importer.ISOTime(meta.UpdatedAt); u.After(s.UpdatedAt) {
		s.UpdatedAt = u
	}
	res.Sessions = append(res.Sessions, s)
	return res, nil
}
