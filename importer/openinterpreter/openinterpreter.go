// Package openinterpreter reads the conversations of Open Interpreter
// (the interpreter command of the Python package open-interpreter) for
// loom's importer.
//
// Open Interpreter saves each conversation as one JSON document,
// rewritten after each reply (core/core.py, _streaming_chat), in its
// conversations directory: platformdirs' user_config_dir
// ("open-interpreter")/conversations, ~/.config/open-interpreter/
// conversations ($XDG_CONFIG_HOME's) or ~/Library/Application Support/
// open-interpreter/conversations on macOS. The file is named for the
// first words of the first message and the time it was first saved
// (<words>__<Month>_<DD>_<YYYY>_<HH>-<MM>-<SS>.json, local time), and
// holds the list of its LMC messages: role (user, assistant, computer),
// type (message, code, console, image, confirmation), format and
// content. An assistant's code is the code it ran (format its language);
// the computer's console output that follows is what it printed. No
// message has a time, a model or usage.
//
// A conversation is a session named for its file; every message takes
// the time its name gives (taken as UTC), else the file's. A code
// message is an assistant's execute call (its language and code, as
// Open Interpreter offers the model the execute function), which the
// console output after it completes.
//
// The format is the one Open Interpreter 0.4.3's own code writes, run
// from its source at commit dcfcffa9af13737bee1fa128364a718b56324998
// (testdata/real).
package openinterpreter

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Open Interpreter's conversations. The zero value is
// ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Open Interpreter's name in loom.
const Tool = "open-interpreter"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": the conversation names no model or provider.
func (Format) Provider() string { return "" }

// Roots is the conversations directory: $XDG_CONFIG_HOME/open-interpreter
// (~/.config when unset), and macOS's ~/Library/Application Support.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.ConfigDirs(env, home, "open-interpreter", "conversations")
}

// Bundles lists each conversation file (*.json) under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".json") && !strings.HasPrefix(d.Name(), ".")
	})
}

// message is one LMC message.
type message struct {
	Role    string          `json:"role"`
	Type    string          `json:"type"`
	Format  string          `json:"format"`
	Content json.RawMessage `json:"content"`
}

// Read reads one conversation file.
func (Format) Read(_ context.Context, b importer.Bundle) (*importer.Result, error) {
	return importer.ReadWhole(Tool, b, parse)
}

// savedAt is the time a conversation's file name gives; zero when it
// gives none.
func savedAt(name string) time.Time {
	base := strings.TrimSuffix(filepath.Base(name), ".json")
	i := strings.LastIndex(base, "__")
	if i < 0 {
		return time.Time{}
	}
	t, err := time.Parse("January_02_2006_15-04-05", base[i+2:])
	if err != nil {
		return time.Time{}
	}
	return t
}

// parse reads a conversation's data; modified is its file's time, that
// of the messages when its name gives none.
func parse(name string, data []byte, modified time.Time) *importer.Result {
	res := &importer.Result{}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		res.Unreadablef(name, 0, "not an Open Interpreter conversation: "+importer.Excerpt(err.Error()))
		return res
	}
	res.CheckUTF8(name, 0, data)
	at := savedAt(name)
	if at.IsZero() {
		at = modified
	}
	s := &importer.Session{SourceID: strings.TrimSuffix(filepath.Base(name), ".json"), Kind: loom.KindMain, Path: name,
		CreatedAt: at, UpdatedAt: at}
	calls := importer.ToolCalls{}
	lastCall := ""
	for i, r := range raw {
		problem := func(reason string) { res.Problemf(name, 0, "message "+strconv.Itoa(i)+": "+reason) }
		var m message
		if err := json.Unmarshal(r, &m); err != nil {
			problem(importer.Excerpt(err.Error()))
			continue
		}
		var text string
		if err := json.Unmarshal(m.Content, &text); err != nil {
			res.Skip(m.Role + ":" + importer.TypeName(m.Type) + "-not-text")
			continue
		}
		mid := "m" + strconv.Itoa(i)
		msg := &loom.Message{ID: mid, CreatedAt: at, CompletedAt: &at}
		var blocks []importer.ContentBlock
		switch {
		case m.Type == "message" && m.Role == "user":
			msg.Role = loom.RoleUser
			blocks = []importer.ContentBlock{{Type: "text", Text: text}}
		case m.Type == "message" && m.Role == "assistant":
			msg.Role = loom.RoleAssistant
			blocks = []importer.ContentBlock{{Type: "text", Text: text}}
		case m.Type == "code" && m.Role == "assistant":
			msg.Role = loom.RoleAssistant
			input, _ := json.Marshal(map[string]string{"language": m.Format, "code": text})
			lastCall = mid
			blocks = []importer.ContentBlock{{Type: "tool_use", ID: mid, Name: "execute", Input: input}}
		case m.Type == "console" && m.Role == "computer" && lastCall != "":
			content, _ := json.Marshal(text)
			calls.AddBlocks(res, msg, []importer.ContentBlock{{Type: "tool_result", ToolUseID: lastCall, Content: content}}, at, problem)
			lastCall = ""
			continue
		default:
			res.Skip(importer.TypeName(m.Role) + ":" + importer.TypeName(m.Type))
			continue
		}
		calls.AddBlocks(res, msg, blocks, at, problem)
		if len(msg.Parts) == 0 {
			res.Skip("empty-" + msg.Role + "-message")
			continue
		}
		s.Messages = append(s.Messages, msg)
	}
	if len(s.Messages) == 0 {
		res.Skip("empty-session")
		return res
	}
	res.Sessions = append(res.Sessions, s)
	return res
}
