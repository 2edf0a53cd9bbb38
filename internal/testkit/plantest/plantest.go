// Package plantest is what the engines' plan tests share: a store's
// history written as Claude Code files, what a user does on a large
// store (the import, the hook, listings, references, searches, a
// recall), and a recorder of the statements the store runs while doing
// it, so that each engine can explain every one of them.
package plantest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/recall"
)

// Template is how many sessions Import writes and imports: an engine's
// test copies them in SQL up to the size it wants.
const Template = 400

// User is the user the sessions are imported for.
const User = "alice"

// Import writes Template Claude Code sessions under dir and imports them
// into st, and returns the importer and its target for Workload.
func Import(t *testing.T, st loom.Engine, dir string) (*importer.Importer, []importer.Target) {
	t.Helper()
	for i := range Template {
		WriteClaudeSession(t, dir, i, 4)
	}
	im := &importer.Importer{Store: st, UserID: User}
	target := []importer.Target{{Format: claudecode.Format{}, Roots: []string{dir}, Explicit: true}}
	if _, err := im.Run(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	return im, target
}

// Workload does what a user does on st, whose sessions Import began:
// the import of new files, of a grown one and an unchanged re-run, the
// hook's import of one file, listings (by user, after a cursor, by
// project, key, parent, text), references (id, prefix, key, title),
// newest messages, searches (a rare word, common words, in a project,
// in a session) and a recall.
func Workload(t *testing.T, st loom.Engine, im *importer.Importer, target []importer.Target, dir string) {
	t.Helper()
	ctx := context.Background()
	for i := Template; i < Template+3; i++ {
		WriteClaudeSession(t, dir, i, 3)
	}
	WriteClaudeSession(t, dir, 7, 6) // grown
	for range 2 {
		if _, err := im.Run(ctx, target); err != nil {
			t.Fatal(err)
		}
	}
	hook := []importer.Target{{Format: claudecode.Format{}, Roots: []string{WriteClaudeSession(t, dir, 8, 7)}, Explicit: true}}
	if _, err := im.Run(ctx, hook); err != nil {
		t.Fatal(err)
	}
	list, err := st.Sessions(ctx, loom.SessionFilter{UserID: User, Limit: 50})
	if err != nil || len(list) != 50 {
		t.Fatalf("list: %d, %v", len(list), err)
	}
	one := list[0]
	for _, f := range []loom.SessionFilter{
		{UserID: User, Limit: 50, Before: &loom.Cursor{UpdatedAt: list[49].UpdatedAt, ID: list[49].ID}},
		{UserID: User, ProjectID: one.Project.ID, Limit: 50},
		{UserID: User, Key: one.Key, Limit: 10, Archived: loom.WithArchived},
		{UserID: User, ParentID: one.ID, Limit: 50},
		{UserID: User, Text: "zyzzogeton", Limit: 50},
	} {
		if _, err := st.Sessions(ctx, f); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Summaries(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	for _, ref := range []string{one.ID, one.ID[:8], one.Key, one.Title} {
		st.Resolve(ctx, ref, loom.ResolveScope{UserID: User, ProjectID: one.Project.ID})
	}
	if _, err := st.Messages(ctx, one.ID, loom.MessageQuery{Limit: 50}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []loom.SearchQuery{
		{Text: "zyzzogeton", UserID: User},
		{Text: "session store index", UserID: User},
		{Text: "session store index", UserID: User, ProjectID: one.Project.ID},
		{Text: "fork", UserID: User, SessionID: one.ID},
	} {
		if _, err := st.Search(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := recall.Recall(ctx, st, recall.Options{Prompt: "how does the store index a session", UserID: User, ProjectID: one.Project.ID}); err != nil {
		t.Fatal(err)
	}
}

// SessionID is the Claude Code session id of the i-th session.
func SessionID(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// WriteClaudeSession writes (or rewrites, longer) the i-th Claude Code
// session under dir with turns turns, in one of 20 projects, and returns
// its path. One session in 97 holds a rare word, zyzzogeton.
func WriteClaudeSession(t *testing.T, dir string, i, turns int) string {
	t.Helper()
	project := fmt.Sprintf("p%02d", i%20)
	cwd := "/home/dev/projects/" + project
	sid := SessionID(i)
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
	var b strings.Builder
	parent := "null"
	line := func(n int, typ string, message any) {
		id := fmt.Sprintf("%08d-0000-4000-8000-%012d", i, n)
		m, _ := json.Marshal(message)
		fmt.Fprintf(&b, `{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":%q,"sessionId":%q,"version":"2.1.39","type":%q,"message":%s,"uuid":%q,"timestamp":%q}`+"\n",
			parent, cwd, sid, typ, m, id, at.Add(time.Duration(n)*time.Second).Format("2006-01-02T15:04:05.000Z"))
		parent = `"` + id + `"`
	}
	rare := ""
	if i%97 == 0 {
		rare = " zyzzogeton"
	}
	for turn := range turns {
		call := fmt.Sprintf("toolu_%08d%04d", i, turn)
		line(4*turn, "user", map[string]any{"role": "user", "content": fmt.Sprintf("how does the store index session %d turn %d%s", i, turn, rare)})
		line(4*turn+1, "assistant", map[string]any{"model": "claude-sonnet-4-5", "id": "msg_a" + call, "type": "message", "role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": "reading the search index of the fork"},
				map[string]any{"type": "tool_use", "id": call, "name": "Read", "input": map[string]string{"file_path": cwd + "/store.go"}}},
			"stop_reason": "tool_use", "usage": map[string]int{"input_tokens": 10, "output_tokens": 20}})
		line(4*turn+2, "user", map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": call, "content": "package store // the session index"}}})
		line(4*turn+3, "assistant", map[string]any{"model": "claude-sonnet-4-5", "id": "msg_b" + call, "type": "message", "role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": "the store keeps one row a message"}}, "stop_reason": "end_turn",
			"usage": map[string]int{"input_tokens": 12, "output_tokens": 30}})
	}
	p := filepath.Join(dir, "-home-dev-projects-"+project, sid+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Statement is a statement a store ran, with its arguments.
type Statement struct {
	SQL  string
	Args []any
}

// Recorder keeps the statements an engine's driver hands it while it is
// started, each text once (with the arguments of its first run), and
// only those that read or write rows.
type Recorder struct {
	mu   sync.Mutex
	on   bool
	seen map[string]bool
	ran  []Statement
}

// Start forgets what was recorded and records from now on.
func (r *Recorder) Start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on, r.seen, r.ran = true, map[string]bool{}, nil
}

// Stop stops recording and returns what was recorded.
func (r *Recorder) Stop() []Statement {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return slices.Clone(r.ran)
}

// Add records query run with args.
func (r *Recorder) Add(query string, args []any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.on || r.seen[query] {
		return
	}
	head := strings.ToUpper(strings.TrimSpace(query))
	for _, verb := range []string{"SELECT", "WITH", "UPDATE", "DELETE", "INSERT", "REPLACE"} {
		if strings.HasPrefix(head, verb) {
			r.seen[query] = true
			r.ran = append(r.ran, Statement{query, slices.Clone(args)})
			return
		}
	}
}

// OneLine is s with its white space folded, for a failure's message.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
