package cline

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

var _ handoff.Writer = Format{}

// Handoff writes h as a new session of Cline's CLI in its sessions
// directory (see Roots), which `cline --id ID` in h.Dir resumes in its
// terminal interface: <id>/<id>.messages.json, the messages, and
// <id>/<id>.json, the session's record (h.Dir as its working directory,
// the loom session in its metadata's loomHandoff, which Cline keeps when
// it writes the record again). Cline needs no row in its database
// (db/sessions.db) to resume it. A prompt is a user message (wrapped in
// <user_input mode="act"> as Cline wraps what the user types), a reply
// an assistant message of thinking, text and tool_use blocks, each run
// of calls followed by a user message of their tool_results (is_error
// for a failed one); shell commands become run_commands calls and file
// reads read_files calls, and a session imported from Cline keeps its
// calls as they were; any other tool call is told as text. The record
// names the provider and model Cline last used (settings/providers.json
// beside the sessions directory), which it resumes with.
func (Format) Handoff(ctx context.Context, h *handoff.Handoff) (*handoff.Handed, error) {
	roots := Format{}.Roots(h.Env, h.Home)
	if len(roots) == 0 {
		return nil, fmt.Errorf("cline: no home directory to write to")
	}
	now := h.Time()
	id, err := sessionID(now)
	if err != nil {
		return nil, err
	}
	id = h.SessionID(func() string { return id })
	dir := filepath.Join(roots[0], id)
	out := &handoff.Handed{Tool: Tool, SessionID: id,
		Path:   filepath.Join(dir, id+messagesSuffix),
		Resume: handoff.ResumeIn(h.Dir, "cline", "--id", id)}
	tools := handoff.Tools{Target: Tool, Shell: "run_commands", Read: "read_files",
		ShellArgs: func(cmd string) any { return map[string]any{"commands": []string{cmd}} },
		ReadArgs:  func(path string) any { return map[string]any{"files": []any{map[string]any{"path": path}}} }}
	ids := handoff.CallIDs{Prefix: "call_loom"}
	var msgs []map[string]any
	add := func(role string, at time.Time, content []any) map[string]any {
		m := map[string]any{"id": uuid.NewString(), "role": role, "content": content, "ts": at.UnixMilli()}
		msgs = append(msgs, m)
		return m
	}
	prompt := ""
	for _, e := range handoff.Entries(h, out) {
		if e.Role == loom.RoleUser {
			text := `<user_input mode="act">` + e.Text() + `</user_input>`
			if prompt == "" {
				prompt = text
			}
			add("user", e.At, []any{map[string]any{"type": "text", "text": text}})
			continue
		}
		for _, step := range e.Steps(h.IsCall(tools)) {
			blocks, results := h.Blocks(step, tools, &ids, out, true)
			m := add("assistant", e.At, blocks)
			m["id"] = "msg_loom" + strconv.Itoa(len(msgs))
			if e.Model != "" {
				m["modelInfo"] = map[string]any{"id": e.Model, "provider": "loom"}
			}
			if results != nil {
				add("user", e.At, results)
			}
		}
	}
	stamp := handoff.Stamp(now)
	origin := map[string]any{"source": "cli", "mode": "user", "sessionId": id}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cline: %w", err)
	}
	if err := handoff.WriteJSON(ctx, out.Path, map[string]any{"version": 1, "updated_at": stamp, "agent": "lead", "sessionId": id,
		"origin": origin, "messages": msgs}); err != nil {
		os.Remove(dir)
		return nil, err
	}
	provider, model := lastProvider(filepath.Dir(roots[0]))
	record := map[string]any{"version": 1, "session_id": id, "source": "cli", "pid": 0, "started_at": stamp, "ended_at": stamp,
		"exit_code": 0, "status": "completed", "interactive": false, "provider": provider, "model": model,
		"cwd": h.Dir, "workspace_root": h.Dir, "enable_tools": true, "enable_spawn": true, "enable_teams": false,
		"prompt": prompt, "messages_path": out.Path,
		"metadata": map[string]any{"title": h.Session.Title, handoff.OriginField: h.Origin()}}
	if err := handoff.WriteJSON(ctx, filepath.Join(dir, id+".json"), record); err != nil {
		os.Remove(out.Path)
		os.Remove(dir)
		return nil, err
	}
	return out, nil
}

// sessionID is a new id of Cline's form: the time in milliseconds and
// five letters or digits.
func sessionID(now time.Time) (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("cline: %w", err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return strconv.FormatInt(now.UnixMilli(), 10) + "_" + string(b), nil
}

// maxSettings bounds the providers.json read for the last provider.
const maxSettings = 1 << 20

// lastProvider is the provider Cline last used and its model, from
// settings/providers.json in its data directory; "" for what it does
// not say.
func lastProvider(data string) (provider, model string) {
	f, _, err := importer.Open(filepath.Join(data, "settings", "providers.json"), maxSettings)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	var s struct {
		Last      string `json:"lastUsedProvider"`
		Providers map[string]struct {
			Settings struct {
				Model string `json:"model"`
			} `json:"settings"`
		} `json:"providers"`
	}
	if json.NewDecoder(f).Decode(&s) != nil {
		return "", ""
	}
	return s.Last, s.Providers[s.Last].Settings.Model
}
