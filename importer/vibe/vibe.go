// Package vibe reads the sessions of Mistral Vibe (the vibe command,
// Mistral AI's coding agent) for loom's importer.
//
// Vibe logs each session to a directory of its own under
// ~/.vibe/logs/session ($VIBE_HOME replaces ~/.vibe), named
// session_<date>_<time>_<id>: messages.jsonl holds the conversation in
// the chat-completions form, one message a line (system, user,
// assistant with reasoning_content and tool_calls, tool), and meta.json
// the session's id, the session it continues, its times, working
// directory, git branch, title, model and token totals.
//
// What becomes what: each line is a message under its line number
// (a tool message completes its call, a user message Vibe injected is a
// system message); meta.json's id, title, working directory, branch and
// model name the session, its parent_session_id makes it a fork of the
// session it continues, and its totals (prompt, completion and cached
// tokens; steps less the prompts as model calls, Vibe counting a step
// for each prompt too) are the usage of the session's last reply, Vibe
// keeping no usage per reply. compact() starts a new session whose
// totals go on from its parent's (only clear_history resets them): such
// a session's usage is its totals less those of its parent's
// meta.json, in its directory beside it. Such a session is known by how
// compact() opened it, which changed at 2.11.1 and 2.15.0
// (continuesCompaction); the prompts and summary earlier versions
// opened it with are system messages, what the agent was told. A line that is not a message
// is a problem; the rest is read.
//
// Vibe is a Python program (not on npm): the fixtures in testdata are
// written to the format of Vibe's source (vibe/core/session/ and
// vibe/core/agent_loop.py of mistralai/mistral-vibe at
// ac8f1a09fdfbadb6d4508a555ba6607fd05eb0dc).
package vibe

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Mistral Vibe's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Mistral Vibe's name in loom.
const Tool = "vibe"

// The files of a session's directory, and the variable that moves
// Vibe's directory.
const (
	messagesFile = "messages.jsonl"
	metaFile     = "meta.json"
	envHome      = "VIBE_HOME"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Mistral AI's, whose models Vibe calls unless told
// otherwise.
func (Format) Provider() string { return "mistral" }

// Roots is Vibe's session log directory.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, envHome, ".vibe"), "logs", "session")
}

// Bundles finds each session's messages.jsonl, with its meta.json when
// there is one.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	if filepath.Base(root) == metaFile {
		root = filepath.Join(filepath.Dir(root), messagesFile)
	}
	bs, err := importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool { return d.Name() == messagesFile })
	for i := range bs {
		if m := filepath.Join(filepath.Dir(bs[i].Name()), metaFile); importer.RegularFile(m) == nil {
			bs[i].Files = append(bs[i].Files, m)
		}
	}
	return bs, err
}

// parentMeta is the meta.json of session parent, which the session in
// dir continues, and the parent's directory, when it is beside it. Vibe names a session's directory
// <prefix>_<date>_<time>_<the first 8 characters of its id>
// (vibe/core/session/session_logger.py) beside the others, so the
// parent is the sibling so named whose meta.json holds its id. It is
// read from where Vibe keeps it, not as part of the session's bundle:
// it is its own session's file, and a file of two bundles would be
// read again by every import.
func parentMeta(dir, parent string) (meta, string, bool) {
	if len(parent) < 8 || strings.ContainsAny(parent[:8], `*?[\/`) {
		return meta{}, "", false
	}
	cands, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "*_"+parent[:8]))
	for _, c := range cands {
		p := filepath.Join(c, metaFile)
		if c == dir || importer.RegularFile(p) != nil {
			continue
		}
		if pm, _, ok := readMeta(p); ok && importer.LineID(pm.SessionID) == parent {
			return pm, c, true
		}
	}
	return meta{}, "", false
}

// readMeta reads a meta.json, whose bytes it returns too; ok is false
// when it is not one.
func readMeta(path string) (m meta, data []byte, ok bool) {
	data, err := importer.ReadSmall(path, 16<<20)
	if err != nil || json.Unmarshal(data, &m) != nil {
		return meta{}, nil, false
	}
	return m, data, true
}

// meta is meta.json.
type meta struct {
	SessionID       string `json:"session_id"`
	ParentSessionID string `json:"parent_session_id"`
	StartTime       string `json:"start_time"`
	EndTime         string `json:"end_time"`
	GitBranch       string `json:"git_branch"`
	WorkingDir      string `json:"working_dir"`
	Title           string `json:"title"`
	Model           string `json:"model"`
	Environment     struct {
		WorkingDirectory string `json:"working_directory"`
	} `json:"environment"`
	Config struct {
		ActiveModel string `json:"active_model"`
	} `json:"config"`
	Stats stats `json:"stats"`
}

// stats are meta.json's running totals.
type stats struct {
	Steps      float64 `json:"steps"`
	Prompt     float64 `json:"session_prompt_tokens"`
	Completion float64 `json:"session_completion_tokens"`
	Cached     float64 `json:"session_cached_tokens"`
}

// covers reports whether the totals st include every count of parent's,
// as a compaction's continuation does and a fork (fresh totals) need not.
func covers(st, parent stats) bool {
	return st.Steps >= parent.Steps && st.Prompt >= parent.Prompt && st.Completion >= parent.Completion && st.Cached >= parent.Cached
}

// How compact() opens the session it starts, by Vibe's version
// (vibe/core/agent_loop.py's compact() of mistralai/mistral-vibe at each
// tag): from 2.15.0, with compactionOpening, the injected message of
// vibe/core/compaction.py's render_compaction_context, after the system
// prompt; from 2.11.1 to 2.14.1, with the last prompts (not injected)
// and then the summary as a user message opened by summaryPrefix
// (vibe/core/prompts/compact_summary_prefix.md); before 2.11.1, with the
// summary alone as a user message, no mark on it.
const (
	compactionOpening = "You are continuing a trajectory after a context compaction."
	summaryPrefix     = "Another language model started to solve this problem and produced a summary of its work so far."
)

// continuesCompaction reports whether s, whose parent's directory is
// parentDir, is a session compact() started, in any version's shape,
// and how many of its first messages after the system prompt are the
// compaction's context, not prompts: the prompts 2.11.1 to 2.14.1 copy
// and the summary they and earlier versions leave as user messages (the
// later versions' opening is injected, a system message already). A
// fork (fork()) copies its parent's messages from the first, with fresh
// totals; so a session that opens with a user message its parent did
// not open with, which before 2.11.1 is all a compaction's session
// shows, is a compaction's.
func continuesCompaction(ctx context.Context, s *importer.Session, parentDir string) (n int, ok bool) {
	first, users := "", 0
	for _, msg := range s.Messages {
		text := strings.TrimSpace(importer.Text(msg.Parts))
		if msg.Role == loom.RoleSystem {
			if strings.HasPrefix(text, compactionOpening) {
				return 0, true
			}
			continue
		}
		if msg.Role != loom.RoleUser {
			break
		}
		users++
		if strings.HasPrefix(text, summaryPrefix) {
			return users, true
		}
		if first == "" {
			first = text
		}
	}
	if first == "" || parentDir == "" {
		return 0, false
	}
	opened, found := firstPrompt(ctx, filepath.Join(parentDir, messagesFile))
	if !found || opened == first {
		return 0, false
	}
	return 1, true
}

// firstPrompt is the text of the first user message of a
// messages.jsonl that Vibe did not inject; ok is false when it has none
// that can be read.
func firstPrompt(ctx context.Context, path string) (text string, ok bool) {
	f, _, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		return "", false
	}
	defer f.Close()
	done := errors.New("found")
	_ = importer.Lines(ctx, f, func(n int, line []byte) error {
		var l struct {
			importer.ChatLine
			Injected bool `json:"injected"`
		}
		if json.Unmarshal(line, &l) != nil || l.Role != loom.RoleUser || l.Injected {
			return nil
		}
		text, ok = strings.TrimSpace(importer.Text(importer.TextParts("p", loom.PartText, l.Content))), true
		return done
	}, func(int) {})
	return text, ok
}

// Read reads one session: its messages, then what meta.json says of it.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	if name == "" {
		return nil, errors.New("vibe: empty bundle")
	}
	res := &importer.Result{}
	var m, parent meta
	if len(b.Files) > 1 {
		var ok bool
		var data []byte
		if m, data, ok = readMeta(b.Files[1]); !ok {
			res.Problemf(b.Files[1], 0, "not Vibe's session metadata")
		}
		res.CheckUTF8(b.Files[1], 0, data)
	}
	f, fi, err := importer.Open(name, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("vibe: %w", err)
	}
	defer f.Close()
	start := cmp.Or(importer.ISOTime(m.StartTime), fi.ModTime().UTC())
	t := &importer.Transcript{Res: res}
	err = importer.Lines(ctx, f, func(n int, line []byte) error {
		var l struct {
			importer.ChatLine
			Injected bool `json:"injected"`
		}
		if !res.DecodeLine(name, n, line, &l) {
			return nil
		}
		t.AddChat(strconv.Itoa(n), l.ChatLine, start, l.Injected)
		return nil
	}, res.TooLong(name))
	if err != nil {
		return nil, fmt.Errorf("vibe: %s: %w", name, err)
	}
	id := cmp.Or(importer.LineID(m.SessionID), strings.TrimPrefix(filepath.Base(filepath.Dir(name)), "session_"))
	s := t.Session(id, name)
	if s == nil {
		return res, nil
	}
	s.Title, s.GitBranch = strings.TrimSpace(m.Title), m.GitBranch
	s.Cwd = cmp.Or(m.WorkingDir, m.Environment.WorkingDirectory)
	s.Model, s.Provider = cmp.Or(m.Model, m.Config.ActiveModel), "mistral"
	if end := importer.ISOTime(m.EndTime); !end.IsZero() {
		s.UpdatedAt = end
	}
	if p := importer.LineID(m.ParentSessionID); p != "" && p != id {
		s.Kind, s.ParentSourceID = loom.KindFork, p
	}
	// Vibe counts a step for each prompt as well as for each model call
	// (and a compaction's call): the calls are the steps less the
	// prompts. A session compact() continued carries on its parent's
	// running totals: its own are the difference.
	st := m.Stats
	if s.ParentSourceID != "" {
		if pm, dir, ok := parentMeta(filepath.Dir(name), s.ParentSourceID); ok {
			if n, ok := continuesCompaction(ctx, s, dir); ok {
				parent = pm
				for _, msg := range s.Messages {
					if n == 0 {
						break
					}
					if msg.Role == loom.RoleUser {
						msg.Role = loom.RoleSystem
						n--
					}
				}
			}
		}
	}
	if s.ParentSourceID != "" && importer.LineID(parent.SessionID) == s.ParentSourceID && covers(st, parent.Stats) {
		st.Steps -= parent.Stats.Steps
		st.Prompt -= parent.Stats.Prompt
		st.Completion -= parent.Stats.Completion
		st.Cached -= parent.Stats.Cached
	}
	prompts := int64(0)
	for _, msg := range s.Messages {
		if msg.Role == loom.RoleUser {
			prompts++
		}
	}
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if r := s.Messages[i]; r.Role == loom.RoleAssistant {
			cached := importer.Tokens(st.Cached)
			r.Model = s.Model
			r.Usage = loom.Usage{InputTokens: max(importer.Tokens(st.Prompt)-cached, 0), CacheReadTokens: cached,
				OutputTokens: importer.Tokens(st.Completion), APICalls: max(importer.Tokens(st.Steps)-prompts, 0)}
			break
		}
	}
	res.Sessions = append(res.Sessions, s)
	return res, nil
}
