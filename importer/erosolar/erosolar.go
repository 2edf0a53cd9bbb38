// Package erosolar reads the sessions of Erosolar (npm's erosolar-cli,
// the erosolar command) for loom's importer.
//
// Erosolar keeps a conversation only when its interactive shell saves
// it (`/sessions save <title>`): ~/.erosolar/sessions/<id>.json, one
// JSON document of the session's id, title, profile, provider, model,
// workspaceRoot, createdAt, updatedAt and messages, listed in
// index.json beside it. Its messages are the whole history the shell
// holds, in its own form: role system (its prompt), user, assistant
// (content, toolCalls of id, name and arguments as an object) or tool
// (content, toolCallId, name). Saving again writes the whole document
// again. Its autosave (`/sessions autosave on`) keeps one document a
// profile, <profile>-autosave.json, that the next conversation
// overwrites; Erosolar lists it with none of its sessions, and neither
// is it read here.
//
// Each message is a loom message named by its place, a tool message
// completing its call. Erosolar keeps no time per message, no usage
// and no reasoning: every message is dated when the session was
// created, and the session is last updated when it was last saved.
//
// The format is the one erosolar-cli 2.1.315 wrote when run offline
// against a fake model (testdata/real); its description is from its
// package's dist/core/sessionStore.js.
package erosolar

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Erosolar's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Erosolar's name in loom.
const Tool = "erosolar"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": a session names its provider.
func (Format) Provider() string { return "" }

// Roots is the sessions directory of Erosolar's data directory,
// $EROSOLAR_DATA_DIR or else ~/.erosolar.
func (Format) Roots(env func(string) string, home string) []string {
	if d := importer.EnvPath(env, home)("EROSOLAR_DATA_DIR"); d != "" {
		return []string{filepath.Join(d, "sessions")}
	}
	return importer.Under(home, ".erosolar", "sessions")
}

// Bundles lists each saved session's document under root: not the
// index, nor a profile's autosave.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		n := d.Name()
		return strings.HasSuffix(n, ".json") && n != "index.json" && !strings.HasSuffix(n, "-autosave.json")
	})
}

// snapshot is a saved session's document.
type snapshot struct {
	ID            string    `json:"id"`
	Title         string    `json:"title"`
	Provider      string    `json:"provider"`
	Model         string    `json:"model"`
	WorkspaceRoot string    `json:"workspaceRoot"`
	CreatedAt     string    `json:"createdAt"`
	UpdatedAt     string    `json:"updatedAt"`
	Messages      []message `json:"messages"`
}

// message is one message of a snapshot, in Erosolar's own form.
type message struct {
	Role       string               `json:"role"`
	Content    json.RawMessage      `json:"content"`
	ToolCalls  []importer.NamedCall `json:"toolCalls"`
	ToolCallID string               `json:"toolCallId"`
}

// chat is m in the Chat Completions form the importer adds.
func (m message) chat() importer.ChatLine {
	l := importer.ChatLine{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
	l.ToolCalls = make([]importer.ChatCall, len(m.ToolCalls))
	for i, c := range m.ToolCalls {
		// The document is indented: a call's arguments are kept as
		// the model sent them, on one line.
		args := c.Arguments
		var b bytes.Buffer
		if json.Compact(&b, args) == nil {
			args = b.Bytes()
		}
		l.ToolCalls[i] = importer.ChatCall{ID: c.ID, Function: importer.ChatFunction{Name: c.Name, Arguments: args}}
	}
	return l
}

// Read reads one saved session.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	data, mod, err := importer.ReadDocument(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &importer.Result{}
	var doc snapshot
	if err := json.Unmarshal(data, &doc); err != nil {
		res.Problemf(name, 0, "not an Erosolar session: "+importer.Excerpt(err.Error()))
		return res, nil
	}
	res.CheckUTF8(name, 0, data)
	at := importer.ISOTime(doc.CreatedAt)
	if at.IsZero() {
		at = mod
	}
	model := importer.Clip(doc.Model, 256)
	t := &importer.Transcript{Res: res}
	for i, m := range doc.Messages {
		if added := t.AddChat(strconv.Itoa(i), m.chat(), at, false); added != nil && added.Role == loom.RoleAssistant {
			added.Model = model
		}
	}
	s := t.Session(cmp.Or(importer.LineID(doc.ID), strings.TrimSuffix(filepath.Base(name), ".json")), name)
	if s == nil {
		return res, nil
	}
	s.Title, s.Cwd, s.Model, s.Provider = importer.Clip(doc.Title, 256), doc.WorkspaceRoot, model, importer.Clip(doc.Provider, 256)
	if u := importer.ISOTime(doc.UpdatedAt); u.After(s.UpdatedAt) {
		s.UpdatedAt = u
	}
	res.Sessions = append(res.Sessions, s)
	return res, nil
}
