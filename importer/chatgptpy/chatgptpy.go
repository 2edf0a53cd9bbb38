// Package chatgptpy reads the saved sessions of marcolardera's ChatGPT
// CLI (the chatgpt command of the Python package chatgpt-cli) for
// loom's importer.
//
// chatgpt saves each session as one JSON document, rewritten after each
// reply (src/chatgpt.py, save_history): chatgpt-session-<YYYYmmdd>-
// <HHMMSS>.json (its start, local time) in session-history below its
// config directory, $XDG_CONFIG_HOME/chatgpt-cli (~/.config/chatgpt-cli
// when unset). The document holds the model, the Chat Completions
// messages sent and received (the user's as typed; each reply as the
// API returned its message), and the session's prompt_tokens and
// completion_tokens, summed over its calls. A session continued with
// --restore is saved to a new file that holds the earlier messages
// again.
//
// A session file is a session named for its file; every message takes
// the time its name gives (taken as UTC), else the file's.
//
// The format is the one ChatGPT CLI's own code writes, run from its
// source at commit a6b83030ab553b6ef146a9c3789a1063076435d6
// (testdata/real).
package chatgptpy

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads the sessions ChatGPT CLI saved. The zero value is ready
// to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is marcolardera's ChatGPT CLI's name in loom (chatgpt-cli is
// kardolus's).
const Tool = "chatgpt-py"

const prefix, suffix = "chatgpt-session-", ".json"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "openai": the API ChatGPT CLI calls (OpenAI's, or Azure's
// deployment of it).
func (Format) Provider() string { return "openai" }

// Roots is session-history in the config directory:
// $XDG_CONFIG_HOME/chatgpt-cli, else ~/.config/chatgpt-cli.
func (Format) Roots(env func(string) string, home string) []string {
	if env != nil {
		if x := env("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
			return []string{filepath.Join(x, "chatgpt-cli", "session-history")}
		}
	}
	return importer.Under(home, ".config", "chatgpt-cli", "session-history")
}

// Bundles lists each chatgpt-session-*.json under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasPrefix(d.Name(), prefix) && strings.HasSuffix(d.Name(), suffix)
	})
}

// session is a saved session.
type session struct {
	Model    *string           `json:"model"`
	Messages []json.RawMessage `json:"messages"`
}

// Read reads one session file.
func (Format) Read(_ context.Context, b importer.Bundle) (*importer.Result, error) {
	return importer.ReadWhole(Tool, b, parse)
}

// startedAt is the time a session file's name gives; zero when it
// gives none.
func startedAt(name string) time.Time {
	stamp := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(name), prefix), suffix)
	t, err := time.Parse("20060102-150405", stamp)
	if err != nil {
		return time.Time{}
	}
	return t
}

// parse reads a session's data; modified is its file's time, that of
// the messages when its name gives none.
func parse(name string, data []byte, modified time.Time) *importer.Result {
	res := &importer.Result{}
	var doc session
	if err := json.Unmarshal(data, &doc); err != nil || doc.Model == nil {
		reason := "no model"
		if err != nil {
			reason = importer.Excerpt(err.Error())
		}
		res.Unreadablef(name, 0, "not a ChatGPT CLI session: "+reason)
		return res
	}
	res.CheckUTF8(name, 0, data)
	at := startedAt(name)
	if at.IsZero() {
		at = modified
	}
	model := importer.Clip(*doc.Model, 256)
	s := &importer.Session{SourceID: strings.TrimSuffix(filepath.Base(name), suffix), Kind: loom.KindMain, Path: name,
		Model: model, CreatedAt: at, UpdatedAt: at}
	s.Messages = importer.ChatMessages(res, name, doc.Messages, at, model)
	if len(s.Messages) == 0 {
		res.Skip("empty-session")
		return res
	}
	res.Sessions = append(res.Sessions, s)
	return res
}
