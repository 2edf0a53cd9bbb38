// Package kiroide reads the chats of the Kiro IDE (Amazon's editor of
// the VS Code family) for loom's importer; Kiro's CLI is read by
// importer/kiro and the kiro-cli variant of Amazon Q's reader.
//
// The IDE keeps its agent's chats in its extension's global storage,
// <User>/globalStorage/kiro.kiroagent, in two layouts:
//
//   - <workspace hash>/<chat hash>.chat, the earlier one: a JSON
//     document of executionId, actionId, chat (each a role, human, bot
//     or tool, and content, a text) and metadata (modelId, workflow,
//     startTime and endTime in milliseconds);
//   - workspace-sessions/<base64 of the workspace>/<session>.json, the
//     later one: sessionId, title, workspaceDirectory and history, each
//     entry a message (role user, assistant or tool; content a text or
//     a list of blocks), the promptLogs of its model calls (their
//     completion) and the executionId of the run that answered it.
//     That run's log, a JSON document of executionId and actions, is
//     in <first 32 hex digits of the SHA-256 of the workspace
//     directory>/414d1636299d2b9e4ce7e17fb11f63e9/ (the directory
//     sessions.json beside the session names); sessions.json lists the
//     workspace's sessions and is none.
//
// What becomes what: a human or user message a user message (Kiro's
// own instructions, which it sends as the first human messages of a
// .chat, are counted as skipped, as is the bot's "I will follow these
// instructions."; a <kiro-ide-message> wrapper is taken off); a bot or
// assistant message an assistant message: in the later layout its run's
// log gives its text (say actions) and its calls (replace, create and
// readCode, each completed with the action's output), else its content,
// else its prompt logs' completions. A tool message is the run's, not
// the conversation's (counted as skipped). Kiro keeps no time a message:
// each message of a .chat is dated at its start time (the last at its
// end time), and of the later layout at the file's modification time.
// Kiro keeps no token counts there.
//
// Learnt from agentsview's reader of it (kenn-io/agentsview at
// 538600744d1b87614d3746d36a0966c1f2ac1cad, internal/parser/kiro_ide.go
// and kiro_ide_provider.go); the fixtures in testdata are built to that
// format (testdata/README.md).
package kiroide

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads the Kiro IDE's chats. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is the Kiro IDE's name in loom.
const Tool = "kiro-ide"

// maxSession bounds a chat document or a run's log, read whole.
const maxSession = 128 << 20

// execSubdir is the directory, below a workspace's hash, of its runs'
// logs.
const execSubdir = "414d1636299d2b9e4ce7e17fb11f63e9"

// notChats are the directories of kiro.kiroagent whose .chat files are
// no chats of a workspace.
var notChats = map[string]bool{"default": true, "dev_data": true, "index": true, "workspace-sessions": true, execSubdir: true}

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Amazon's Bedrock, which serves Kiro's models.
func (Format) Provider() string { return "amazon-bedrock" }

// Roots are $LOOM_KIRO_IDE_DIR when set, else globalStorage/kiro.kiroagent
// of Kiro's user directory (~/.config/Kiro/User on Linux,
// ~/Library/Application Support/Kiro/User on macOS, %APPDATA%\Kiro\User
// on Windows).
func (Format) Roots(env func(string) string, home string) []string {
	if d := importer.EnvPath(env, home)("LOOM_KIRO_IDE_DIR"); d != "" {
		return []string{d}
	}
	var out []string
	for _, u := range importer.VSCodeUserDirs(env, home, "Kiro") {
		out = append(out, filepath.Join(u, "globalStorage", "kiro.kiroagent"))
	}
	return out
}

// Bundles lists each chat under root, one bundle each: the .chat files
// of a workspace's directory and the session documents of
// workspace-sessions.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		n := d.Name()
		if strings.HasSuffix(n, ".chat") {
			// A workspace's chats; the extension's other directories
			// (its index, defaults, development data, runs' logs) hold
			// none.
			return !notChats[filepath.Base(filepath.Dir(path))]
		}
		return strings.HasSuffix(n, ".json") && n != "sessions.json" &&
			filepath.Base(filepath.Dir(filepath.Dir(path))) == "workspace-sessions"
	})
}

// Read reads one chat, of either layout.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	data, err := importer.ReadSmall(name, maxSession)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	if strings.HasSuffix(name, ".chat") {
		return readChat(ctx, name, data)
	}
	return readSession(ctx, name, data)
}

type chatFile struct {
	ExecutionID string `json:"executionId"`
	Chat        []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"chat"`
	Metadata struct {
		ModelID   string  `json:"modelId"`
		StartTime float64 `json:"startTime"`
		EndTime   float64 `json:"endTime"`
	} `json:"metadata"`
}

// instructions says whether a human message of a .chat is Kiro's own
// instructions (its system prompt, identity and rules), which it sends
// before the user's first words.
func instructions(s string) bool {
	for _, p := range []string{"# System Prompt", "# Identity", "<identity>", "## Included Rules", "You are operating in a workspace"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func readChat(ctx context.Context, name string, data []byte) (*importer.Result, error) {
	var doc chatFile
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s: not the Kiro IDE's chat: %w", Tool, name, err)
	}
	if doc.Chat == nil {
		return nil, fmt.Errorf("%s: %s: not the Kiro IDE's chat: no chat in it", Tool, name)
	}
	res := &importer.Result{}
	res.CheckUTF8(name, 0, data)
	start, end := importer.Millis(doc.Metadata.StartTime), importer.Millis(doc.Metadata.EndTime)
	if start.IsZero() {
		start = modTime(name)
	}
	t := &importer.Transcript{Res: res}
	for i, m := range doc.Chat {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		text := strings.TrimSpace(m.Content)
		mid := strconv.Itoa(i)
		msg := &loom.Message{ID: mid, CreatedAt: start}
		switch m.Role {
		case "human":
			if instructions(text) {
				res.Skip("instructions")
				continue
			}
			if after, ok := strings.CutPrefix(text, "<kiro-ide-message>"); ok {
				text = strings.TrimSpace(strings.TrimSuffix(after, "</kiro-ide-message>"))
			}
			msg.Role = loom.RoleUser
		case "bot":
			if text == "I will follow these instructions." {
				res.Skip("instructions-acknowledged")
				continue
			}
			msg.Role, msg.Model = loom.RoleAssistant, doc.Metadata.ModelID
		case "tool":
			res.Skip("tool")
			continue
		default:
			res.Skip("unknown:" + importer.TypeName(m.Role))
			continue
		}
		if text != "" {
			msg.Parts = []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: text}}
		}
		t.Add(msg)
	}
	if n := len(t.Msgs); n > 0 && end.After(start) {
		last := t.Msgs[n-1]
		last.CreatedAt, last.CompletedAt = end, &end
	}
	id := filepath.Base(filepath.Dir(name)) + ":" + strings.TrimSuffix(filepath.Base(name), ".chat")
	s := t.Session(importer.LineID(id), name)
	if s == nil {
		return res, nil
	}
	s.Model, s.Provider = doc.Metadata.ModelID, "amazon-bedrock"
	res.Keep(s, "session")
	return res, nil
}

type sessionFile struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
	Workspace string `json:"workspaceDirectory"`
	History   []struct {
		Message struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			ID      string          `json:"id"`
		} `json:"message"`
		PromptLogs []struct {
			Completion string `json:"completion"`
		} `json:"promptLogs"`
		ExecutionID string `json:"executionId"`
	} `json:"history"`
}

func readSession(ctx context.Context, name string, data []byte) (*importer.Result, error) {
	var doc sessionFile
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s: not the Kiro IDE's session: %w", Tool, name, err)
	}
	if doc.History == nil {
		return nil, fmt.Errorf("%s: %s: not the Kiro IDE's session: no history in it", Tool, name)
	}
	res := &importer.Result{}
	res.CheckUTF8(name, 0, data)
	at := modTime(name)
	workspace := cmp.Or(doc.Workspace, listedWorkspace(filepath.Dir(name)))
	var runs map[string]string
	t := &importer.Transcript{Res: res}
	for i, h := range doc.History {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		mid := strconv.Itoa(i)
		switch h.Message.Role {
		case "user":
			t.Add(&loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at, Parts: importer.TextParts(mid, loom.PartText, h.Message.Content)})
		case "assistant":
			if runs == nil && h.ExecutionID != "" {
				runs = runLogs(name, workspace)
			}
			parts := run(res, mid, runs[h.ExecutionID], at)
			if !hasText(parts) {
				text := importer.TextParts(mid+"/content", loom.PartText, h.Message.Content)
				if len(text) == 0 {
					var done []string
					for _, pl := range h.PromptLogs {
						if s := strings.TrimSpace(pl.Completion); s != "" {
							done = append(done, s)
						}
					}
					if len(done) > 0 {
						text = []loom.Part{{ID: mid + "/completion", Type: loom.PartText, Text: strings.Join(done, "\n\n")}}
					}
				}
				parts = append(text, parts...)
			}
			t.Add(&loom.Message{ID: mid, Role: loom.RoleAssistant, CreatedAt: at, Parts: parts})
		case "tool":
			res.Skip("tool")
		default:
			res.Skip("unknown:" + importer.TypeName(h.Message.Role))
		}
	}
	s := t.Session(importer.LineID(cmp.Or(doc.SessionID, strings.TrimSuffix(filepath.Base(name), ".json"))), name)
	if s == nil {
		return res, nil
	}
	s.Title, s.Cwd, s.Provider = importer.Clip(strings.TrimSpace(doc.Title), 200), workspace, "amazon-bedrock"
	res.Keep(s, "session")
	return res, nil
}

func hasText(parts []loom.Part) bool {
	for _, p := range parts {
		if p.Type == loom.PartText {
			return true
		}
	}
	return false
}

// listedWorkspace is the workspace directory sessions.json in dir names
// (its first session's), "" when there is none.
func listedWorkspace(dir string) string {
	data, err := importer.ReadSmall(filepath.Join(dir, "sessions.json"), maxSession)
	if err != nil {
		return ""
	}
	var list []struct {
		Workspace string `json:"workspaceDirectory"`
	}
	if json.Unmarshal(data, &list) != nil || len(list) == 0 {
		return ""
	}
	return list[0].Workspace
}

// runLogs are the logs of the runs of workspace's chats, by their
// execution ids: the files of <hash>/414d…/ beside workspace-sessions.
func runLogs(session, workspace string) map[string]string {
	out := map[string]string{}
	if workspace == "" {
		return out
	}
	sum := sha256.Sum256([]byte(workspace))
	dir := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(session))), hex.EncodeToString(sum[:])[:32], execSubdir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := importer.ReadSmall(path, maxSession)
		if err != nil {
			continue
		}
		var head struct {
			ExecutionID string `json:"executionId"`
		}
		if json.Unmarshal(data, &head) == nil && head.ExecutionID != "" {
			out[head.ExecutionID] = path
		}
	}
	return out
}

type action struct {
	ActionID   string          `json:"actionId"`
	ActionType string          `json:"actionType"`
	Input      json.RawMessage `json:"input"`
	Output     struct {
		Message string `json:"message"`
	} `json:"output"`
}

// run is the parts of the run whose log is at path ("" for none): its
// say actions' texts and its file actions as calls, each completed with
// its output. A log that cannot be read is a problem of the session's
// file.
func run(res *importer.Result, mid, path string, at time.Time) []loom.Part {
	if path == "" {
		return nil
	}
	data, err := importer.ReadSmall(path, maxSession)
	var log struct {
		Actions []action `json:"actions"`
	}
	if err == nil {
		err = json.Unmarshal(data, &log)
	}
	if err != nil {
		res.Problemf(path, 0, "message "+mid+": its run's log: "+err.Error())
		return nil
	}
	res.CheckUTF8(path, 0, data)
	var parts []loom.Part
	for j, a := range log.Actions {
		pid := mid + "/" + strconv.Itoa(j)
		switch a.ActionType {
		case "say":
			if strings.TrimSpace(a.Output.Message) != "" {
				parts = append(parts, loom.Part{ID: pid, Type: loom.PartText, Text: a.Output.Message})
			}
		case "replace", "create", "readCode":
			p := importer.ToolCall(pid, a.ActionID, a.ActionType, a.Input)
			out, _ := json.Marshal(a.Output.Message)
			done := at
			p.Status, p.Output, p.EndedAt = loom.ToolCompleted, out, &done
			parts = append(parts, p)
		}
	}
	return parts
}

// modTime is the modification time of the file at path, now when it
// cannot be had.
func modTime(path string) time.Time {
	if fi, err := os.Stat(path); err == nil {
		return fi.ModTime().UTC()
	}
	return time.Now().UTC()
}
