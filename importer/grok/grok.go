// Package grok reads the sessions of Grok Build (xAI's coding agent,
// the grok command of @xai-official/grok) for loom's importer.
//
// Grok keeps each session in a directory of its own,
// ~/.grok/sessions/<URL-encoded working directory>/<session id>/
// ($GROK_HOME replaces ~/.grok), as its documentation lays out:
// summary.json is the index entry (title, model, times, the session a
// fork or restore came from), chat_history.jsonl the raw chat messages
// sent to the model, one a line (system, user, reasoning, assistant
// with tool_calls, tool_result), and updates.jsonl the session's update
// stream, whose usage updates give each turn's tokens.
//
// What becomes what: each chat line a message, numbered in the whole
// history; a reply's reasoning, text and calls one assistant message; a
// tool result completes its call. A prompt is a user line with a
// prompt_index, without the <user_query> tags Grok wraps it in; the
// user lines without one are Grok's context (the user's environment
// and rules, reminders) and system messages, as is a user message Grok
// made itself (a synthetic_reason other than an interjection); the
// system prompt, the same in every session, is not kept. A compaction
// rewrites chat_history.jsonl to its summary and what follows: the
// history before it is read from the compaction's request
// (compaction_requests/, the history the summary was asked of), and the
// summary is a summary message. Each turn's usage (input less cached,
// cached, output and reasoning tokens, model calls) is the update
// stream's turn_completed for the prompt it answered, on the turn's
// last reply. A sub-agent is a session of its own, named by a directory
// of its parent's subagents/; it is read with its parent, linked to the
// spawn_subagent call whose result names it, and its calls and tokens,
// which Grok also counts in the parent's turn, are taken out of that
// turn's. The working directory is summary.json's (or the group
// directory's name decoded, or its .cwd file); its title, model and
// parent_session_id (a fork of that session) name the session. The
// other files (plan, rewind points, signals, usage.json, compaction
// checkpoints) are not read. Grok's own side calls (the title, the
// dashboard's line for each turn, the compaction's summary) are in no
// file's usage.
//
// The layout is Grok's own documentation, shipped in the program npm
// installs (@xai-official/grok 1.0.41, ~/.grok/docs); the files in
// testdata/real are what that program wrote, run offline against a
// fake model as a custom model of ~/.grok/config.toml.
package grok

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Grok's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Grok Build's name in loom.
const Tool = "grok"

const (
	historyFile = "chat_history.jsonl"
	summaryFile = "summary.json"
	updatesFile = "updates.jsonl"
	usageFile   = "usage.json"
	requestsDir = "compaction_requests"
	// spawnTool is Grok's tool that runs a sub-agent.
	spawnTool = "spawn_subagent"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is xAI's.
func (Format) Provider() string { return "xai" }

// Roots is Grok's sessions directory.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, "GROK_HOME", ".grok"), "sessions")
}

// Bundles finds each session's chat history, with its summary, update
// stream, usage file and compaction requests when they are there, and
// the sessions of the sub-agents it ran (each named by a directory of
// its subagents/): a sub-agent's session is read with its parent's.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	if n := filepath.Base(root); n == summaryFile || n == updatesFile || n == usageFile {
		root = filepath.Join(filepath.Dir(root), historyFile)
	}
	bs, err := importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool { return d.Name() == historyFile })
	byID := map[string]int{}
	for i, b := range bs {
		byID[filepath.Base(filepath.Dir(b.Name()))] = i
	}
	child := make([]bool, len(bs))
	kids := make([][]int, len(bs))
	for i, b := range bs {
		entries, _ := os.ReadDir(filepath.Join(filepath.Dir(b.Name()), "subagents"))
		for _, e := range entries {
			if j, ok := byID[e.Name()]; ok && e.IsDir() && j != i && !child[j] {
				child[j] = true
				kids[i] = append(kids[i], j)
			}
		}
	}
	var out []importer.Bundle
	for i, b := range bs {
		if child[i] {
			continue
		}
		files := sessionFiles(b.Name())
		for _, j := range kids[i] {
			files = append(files, sessionFiles(bs[j].Name())...)
		}
		out = append(out, importer.Bundle{Files: files})
	}
	return out, err
}

// sessionFiles is the chat history at history and the files beside it
// that its session is read with.
func sessionFiles(history string) []string {
	dir := filepath.Dir(history)
	files := []string{history}
	for _, n := range []string{summaryFile, updatesFile} {
		if p := filepath.Join(dir, n); importer.RegularFile(p) == nil {
			files = append(files, p)
		}
	}
	reqs, _ := filepath.Glob(filepath.Join(dir, requestsDir, "*.json"))
	slices.Sort(reqs)
	return append(files, reqs...)
}

type chatLine struct {
	Type            string              `json:"type"`
	Role            string              `json:"role"`
	Content         json.RawMessage     `json:"content"`
	Summary         json.RawMessage     `json:"summary"`
	SyntheticReason string              `json:"synthetic_reason"`
	ModelID         string              `json:"model_id"`
	PromptIndex     *int                `json:"prompt_index"`
	ToolCallID      string              `json:"tool_call_id"`
	IsError         bool                `json:"is_error"`
	ToolCalls       []importer.FlatCall `json:"tool_calls"`
}

type summary struct {
	Title   string `json:"generated_title"`
	Summary string `json:"summary"`
	Model   string `json:"current_model_id"`
	ModelID string `json:"model_id"`
	Created string `json:"created_at"`
	Updated string `json:"updated_at"`
	Parent  string `json:"parent_session_id"`
	Branch  string `json:"head_branch"`
	Cwd     string `json:"cwd"`
	Info    struct {
		Cwd string `json:"cwd"`
	} `json:"info"`
	GitRoot string `json:"git_root_dir"`
}

// Read reads one session and the sub-agents it ran.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	res := &importer.Result{}
	var dirs []string
	files := map[string][]string{}
	for _, p := range b.Files {
		dir := filepath.Dir(p)
		if filepath.Base(dir) == requestsDir {
			dir = filepath.Dir(dir)
		}
		if _, ok := files[dir]; !ok {
			dirs = append(dirs, dir)
		}
		files[dir] = append(files[dir], p)
	}
	var main *read
	for i, dir := range dirs {
		r, err := readSession(ctx, dir, files[dir], res)
		if err != nil {
			if i == 0 {
				return nil, err
			}
			res.Problemf(dir, 0, err.Error())
			continue
		}
		if r == nil {
			continue
		}
		if i == 0 {
			main = r
			continue
		}
		if main == nil || !main.link(r) {
			res.Skip("orphan-subagent")
			continue
		}
	}
	if main == nil {
		return res, nil
	}
	main.finish()
	res.Sessions = append(res.Sessions, main.s)
	for _, c := range main.children {
		c.finish()
		res.Sessions = append(res.Sessions, c.s)
	}
	return res, nil
}

// read is one session as read, before its usage is placed.
type read struct {
	s *importer.Session
	// prompt is the prompt index of each message's turn (-1 before the
	// first prompt).
	prompt []int
	// usage is each prompt's turn's usage, as the update stream
	// reports it; total the session's.
	usage map[int]loom.Usage
	total loom.Usage
	// finished is the prompt during which each sub-agent (by session id)
	// finished.
	finished map[string]int
	// spawned is the tool part, by message index, whose result names
	// each sub-agent (by session id).
	spawned  map[string][2]int
	children []*read
}

// link makes c a sub-agent of r when one of r's calls ran it: its call
// gets an agent part, and its calls and tokens, which Grok counts in
// the turn of r that ran it too, are taken out of that turn's.
func (r *read) link(c *read) bool {
	loc, ok := r.spawned[c.s.SourceID]
	if !ok {
		return false
	}
	m := r.s.Messages[loc[0]]
	importer.AddAgentPart(m, m.Parts[loc[1]], c.s.SourceID)
	c.s.Kind, c.s.ParentSourceID = loom.KindSubagent, r.s.SourceID
	turn, ok := r.finished[c.s.SourceID]
	if !ok {
		turn = r.prompt[loc[0]]
	}
	if u, ok := r.usage[turn]; ok {
		u.InputTokens = max(u.InputTokens-c.total.InputTokens, 0)
		u.CacheReadTokens = max(u.CacheReadTokens-c.total.CacheReadTokens, 0)
		u.OutputTokens = max(u.OutputTokens-c.total.OutputTokens, 0)
		u.ReasoningTokens = max(u.ReasoningTokens-c.total.ReasoningTokens, 0)
		u.APICalls = max(u.APICalls-c.total.APICalls, 0)
		r.usage[turn] = u
	}
	r.children = append(r.children, c)
	return true
}

// finish puts each turn's usage on the turn's last reply.
func (r *read) finish() {
	last := map[int]*loom.Message{}
	for i, m := range r.s.Messages {
		if m.Role == loom.RoleAssistant && r.prompt[i] >= 0 {
			last[r.prompt[i]] = m
		}
	}
	for turn, u := range r.usage {
		if m := last[turn]; m != nil {
			m.Usage = u
		}
	}
}

// compactionRequest is a file of compaction_requests/: the history a
// compaction summarised, and the summary it made (none when it failed).
type compactionRequest struct {
	Created string            `json:"created_at"`
	History []json.RawMessage `json:"chat_history"`
	Summary json.RawMessage   `json:"summary"`
	Error   json.RawMessage   `json:"error"`
}

// readSession reads the session in dir from its files: the chat
// history, which after a compaction holds only what followed it, is
// made whole again from the histories its compaction requests were
// sent with.
func readSession(ctx context.Context, dir string, files []string, res *importer.Result) (*read, error) {
	name := filepath.Join(dir, historyFile)
	sum, updates, reqs := sideFiles(files, res)
	live, modTime, err := readHistory(ctx, name, res)
	if err != nil {
		return nil, err
	}
	lines := wholeHistory(reqs, live, name, res)
	h := &chat{
		res: res, t: &importer.Transcript{Res: res}, r: &read{spawned: map[string][2]int{}},
		at:      cmp.Or(importer.ISOTime(sum.Created), modTime),
		prompts: slices.ContainsFunc(lines, func(l line) bool { return l.PromptIndex != nil }),
		turn:    -1, callNames: map[string]string{},
	}
	for i, l := range lines {
		if l.lost {
			h.t.Break()
		} else {
			h.line(strconv.Itoa(i+1), l)
		}
	}
	r, t := h.r, h.t
	s := t.Session(filepath.Base(dir), name)
	if s == nil {
		return nil, nil
	}
	s.Title, s.GitBranch = strings.TrimSpace(cmp.Or(sum.Title, sum.Summary)), sum.Branch
	s.Model, s.Provider = cmp.Or(sum.Model, sum.ModelID), "xai"
	s.Cwd = cmp.Or(sum.Cwd, sum.Info.Cwd, groupDir(filepath.Dir(dir)), sum.GitRoot)
	if p := importer.LineID(sum.Parent); p != "" && p != s.SourceID {
		s.Kind, s.ParentSourceID = loom.KindFork, p
	}
	r.s = s
	if updates != "" {
		r.readUpdates(ctx, updates, res)
	}
	return r, nil
}

// sideFiles reads the files of a session beside its chat history: its
// summary, the path of its update stream (empty when it has none) and
// the compaction requests that made a summary, oldest first.
func sideFiles(files []string, res *importer.Result) (sum summary, updates string, reqs []compactionRequest) {
	for _, p := range files {
		switch {
		case filepath.Base(filepath.Dir(p)) == requestsDir:
			var q compactionRequest
			data, err := importer.ReadSmall(p, importer.MaxFile)
			if err != nil || json.Unmarshal(data, &q) != nil {
				res.Problemf(p, 0, "not Grok's compaction request")
				continue
			}
			res.CheckUTF8(p, 0, data)
			if s := importer.JSONText(q.Summary); strings.TrimSpace(s) != "" && importer.IsNull(q.Error) && len(q.History) > 0 {
				reqs = append(reqs, q)
			}
		case filepath.Base(p) == summaryFile:
			if data, err := importer.ReadSmall(p, 16<<20); err != nil || json.Unmarshal(data, &sum) != nil {
				res.Problemf(p, 0, "not Grok's session summary")
			} else {
				res.CheckUTF8(p, 0, data)
			}
		case filepath.Base(p) == updatesFile:
			updates = p
		}
	}
	slices.SortStableFunc(reqs, func(a, b compactionRequest) int { return strings.Compare(a.Created, b.Created) })
	return sum, updates, reqs
}

// readHistory is the lines of the chat history at name, and the time
// the file was last written.
func readHistory(ctx context.Context, name string, res *importer.Result) ([]line, time.Time, error) {
	f, fi, err := importer.Open(name, importer.MaxFile)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("grok: %w", err)
	}
	defer f.Close()
	var live []line
	err = importer.Lines(ctx, f, func(n int, raw []byte) error {
		var l chatLine
		switch {
		case res.DecodeLine(name, n, raw, &l):
			live = append(live, line{chatLine: l, n: n})
		case len(bytes.TrimSpace(raw)) > 0:
			// A line that could not be read keeps its place: the
			// messages after it keep their ids.
			live = append(live, line{n: n, lost: true})
		}
		return nil
	}, func(n int) {
		res.TooLong(name)(n)
		live = append(live, line{n: n, lost: true})
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("grok: %s: %w", name, err)
	}
	return live, fi.ModTime().UTC(), nil
}

// line is a chat line and its number in the chat history (0 for one
// read from a compaction request).
type line struct {
	chatLine
	n int
	// lost is a line that could not be read, kept for its place.
	lost bool
}

// wholeHistory is the session's whole history: that of its first
// compaction's request, what each later request's history held after
// the summary before it, and what the live history holds from the last
// summary on (the lines before it repeat the system prompt, the
// environment and the first prompt). A live history without a summary
// was not compacted: it is the whole.
func wholeHistory(reqs []compactionRequest, live []line, name string, res *importer.Result) []line {
	at := slices.IndexFunc(live, func(l line) bool { return l.isSummary() })
	if at < 0 {
		// The summary may be a line that could not be read: the
		// history is whole again from its place.
		at = slices.IndexFunc(live, func(l line) bool { return l.lost })
	}
	if at < 0 || len(reqs) == 0 {
		return live
	}
	var out []line
	for k, q := range reqs {
		var h []line
		for _, raw := range q.History {
			var l chatLine
			if json.Unmarshal(raw, &l) != nil {
				res.Problemf(name, 0, "a line of a compaction request that is not Grok's chat line")
				continue
			}
			h = append(h, line{chatLine: l})
		}
		// The request's last message asks for the summary.
		if len(h) > 0 && cmp.Or(h[len(h)-1].Type, h[len(h)-1].Role) == "user" {
			h = h[:len(h)-1]
		}
		if k > 0 {
			i := slices.IndexFunc(h, func(l line) bool { return l.isSummary() })
			if i < 0 {
				continue
			}
			h = h[i:]
		}
		out = append(out, h...)
	}
	return append(out, live[at:]...)
}

// summaryLead is how the message that holds a compaction's summary
// begins.
const summaryLead = "This session is being continued from a previous conversation"

func (l line) isSummary() bool {
	return cmp.Or(l.Type, l.Role) == "user" && isSummary(importer.TextParts("", loom.PartText, l.Content))
}

func isSummary(parts []loom.Part) bool {
	return len(parts) > 0 && strings.HasPrefix(strings.TrimSpace(parts[0].Text), summaryLead)
}

// userQuery is a prompt without the <user_query> tags Grok wraps it in.
func userQuery(s string) string {
	t := strings.TrimSpace(s)
	if in, ok := strings.CutPrefix(t, "<user_query>"); ok {
		if in, ok := strings.CutSuffix(in, "</user_query>"); ok {
			return strings.TrimSpace(in)
		}
	}
	return s
}

// subagentID is the sub-agent session a spawn_subagent result names.
func subagentID(out string) string {
	_, rest, ok := strings.Cut(out, "subagent_id: ")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, "\n")
	return importer.LineID(strings.TrimSpace(id))
}

// groupDir is the working directory a group directory is named for:
// its name URL-decoded, or the .cwd file of a name too long for that.
func groupDir(group string) string {
	if data, err := importer.ReadSmall(filepath.Join(group, ".cwd"), 64<<10); err == nil {
		return strings.TrimSpace(string(data))
	}
	if d, err := url.PathUnescape(filepath.Base(group)); err == nil && filepath.IsAbs(d) {
		return d
	}
	return ""
}
