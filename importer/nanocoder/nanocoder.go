// Package nanocoder reads the sessions of Nanocoder (npm's
// @nanocollective/nanocoder, the nanocoder command) for loom's
// importer.
//
// Nanocoder saves each session as one JSON document,
// <session id>.json, in the sessions directory of its data directory
// ($NANOCODER_DATA_DIR, else $XDG_DATA_HOME/nanocoder, else
// ~/.local/share/nanocoder; ~/Library/Application Support/nanocoder on
// macOS, %APPDATA%\nanocoder on Windows), with an index, sessions.json,
// beside them that is not read. A document holds the session's id,
// title, createdAt, lastAccessedAt, provider, model, workingDirectory
// and messages, in the Chat Completions form: role user, assistant
// (content, reasoning, tool_calls whose arguments are an object) or
// tool (content, tool_call_id, name). Nanocoder rewrites the whole
// document after each turn.
//
// Each message is a loom message under its index; a tool message
// completes its call. Nanocoder keeps no time per message, so every
// message is dated when the session was created and the session is
// last updated when Nanocoder last saved it; it keeps no usage. A
// document that is not JSON is a problem.
//
// The format is the one Nanocoder 1.30.0 wrote when run offline against
// a fake model (testdata/real).
package nanocoder

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Nanocoder's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Nanocoder's name in loom.
const Tool = "nanocoder"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": a session names its provider.
func (Format) Provider() string { return "" }

// Roots is Nanocoder's sessions directory, where its data directory is
// on this system.
func (Format) Roots(env func(string) string, home string) []string {
	get := importer.EnvPath(env, home)
	if d := get("NANOCODER_DATA_DIR"); d != "" {
		return []string{filepath.Join(d, "sessions")}
	}
	if d := get("XDG_DATA_HOME"); d != "" {
		return []string{filepath.Join(d, "nanocoder", "sessions")}
	}
	if home == "" {
		return nil
	}
	switch runtime.GOOS {
	case "darwin":
		return []string{filepath.Join(home, "Library", "Application Support", "nanocoder", "sessions")}
	case "windows":
		return []string{filepath.Join(importer.AppConfigDir(get, home), "nanocoder", "sessions")}
	}
	return []string{filepath.Join(home, ".local", "share", "nanocoder", "sessions")}
}

// index is the file that lists the sessions, beside them.
const index = "sessions.json"

// Bundles lists each session's document under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".json") && d.Name() != index
	})
}

// document is a session's file.
type document struct {
	ID               string              `json:"id"`
	Title            string              `json:"title"`
	CreatedAt        string              `json:"createdAt"`
	LastAccessedAt   string              `json:"lastAccessedAt"`
	Provider         string              `json:"provider"`
	Model            string              `json:"model"`
	WorkingDirectory string              `json:"workingDirectory"`
	Messages         []importer.ChatLine `json:"messages"`
}

// Read reads one session's document.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, f, fi, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, importer.MaxFile))
	if err != nil {
		return nil, fmt.Errorf("nanocoder: %s: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &importer.Result{}
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		res.Problemf(name, 0, "not a Nanocoder session: "+importer.Excerpt(err.Error()))
		return res, nil
	}
	res.CheckUTF8(name, 0, data)
	created := importer.RFC3339Time(doc.CreatedAt)
	if created.IsZero() {
		created = fi.ModTime().UTC()
	}
	t := &importer.Transcript{Res: res}
	for i, l := range doc.Messages {
		if m := t.AddChat(strconv.Itoa(i), l, created, false); m != nil && m.Role == loom.RoleAssistant {
			m.Model = importer.Clip(doc.Model, 256)
		}
	}
	id := cmp.Or(importer.LineID(doc.ID), strings.TrimSuffix(filepath.Base(name), ".json"))
	s := t.Session(id, name)
	if s == nil {
		return res, nil
	}
	s.Title, s.Cwd = importer.Clip(doc.Title, 256), doc.WorkingDirectory
	s.Model, s.Provider = importer.Clip(doc.Model, 256), importer.Clip(doc.Provider, 256)
	if last := importer.RFC3339Time(doc.LastAccessedAt); last.After(s.UpdatedAt) {
		s.UpdatedAt = last
	}
	res.Sessions = append(res.Sessions, s)
	return res, nil
}
