package retention

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	geminifmt "github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/sqlite"
)

func place(t *testing.T, env map[string]string) Place {
	home, system := t.TempDir(), t.TempDir()
	return Place{Getenv: func(k string) string { return env[k] }, Home: home, System: system}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestClaudeCodePolicy: cleanupPeriodDays from the user's settings
// (under CLAUDE_CONFIG_DIR when set, comments allowed), the machine's
// managed settings winning, 30 days by default, and a value Claude Code
// refuses (it then skips its clean-up) reported as a problem.
func TestClaudeCodePolicy(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the managed settings' path is Linux's here")
	}
	pl := place(t, nil)
	if p := (claudeCode{}).policy(pl); !p.Deletes || p.MaxDays != 30 || p.File != "" || p.Problem != "" {
		t.Errorf("default: %+v", p)
	}
	user := filepath.Join(pl.Home, ".claude", "settings.json")
	write(t, user, "{\n  // a year\n  \"cleanupPeriodDays\": 365, \"url\": \"http://x//y\"\n}")
	if p := (claudeCode{}).policy(pl); p.MaxDays != 365 || p.File != user {
		t.Errorf("user's 365 days: %+v", p)
	}
	write(t, filepath.Join(pl.System, "etc", "claude-code", "managed-settings.json"), `{"cleanupPeriodDays": 14}`)
	if p := (claudeCode{}).policy(pl); p.MaxDays != 14 || !strings.Contains(p.File, "managed-settings.json") {
		t.Errorf("managed 14 days over the user's 365: %+v", p)
	}
	moved := place(t, map[string]string{"CLAUDE_CONFIG_DIR": ""})
	moved.Getenv = func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return filepath.Join(moved.Home, "elsewhere")
		}
		return ""
	}
	write(t, filepath.Join(moved.Home, "elsewhere", "settings.json"), `{"cleanupPeriodDays": 3}`)
	if p := (claudeCode{}).policy(moved); p.MaxDays != 3 {
		t.Errorf("CLAUDE_CONFIG_DIR's 3 days: %+v", p)
	}
	for _, bad := range []string{`0`, `-1`, `1.5`, `"30"`} {
		write(t, user, `{"cleanupPeriodDays": `+bad+`}`)
		os.Remove(filepath.Join(pl.System, "etc", "claude-code", "managed-settings.json"))
		if p := (claudeCode{}).policy(pl); p.Problem == "" {
			t.Errorf("cleanupPeriodDays %s: no problem: %+v", bad, p)
		}
	}
	write(t, user, `{"cleanupPeriodDays": `)
	if p := (claudeCode{}).policy(pl); p.Problem == "" {
		t.Errorf("a settings file cut short: %+v", p)
	}
}

// TestGeminiPolicy: general.sessionRetention merged over Gemini CLI's
// defaults (on, 30d) from its system defaults, the user's settings and
// the system settings, each overriding the one before; what Gemini CLI
// refuses turns its clean-up off, reported as a problem.
func TestGeminiPolicy(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the system settings' path is Linux's here")
	}
	pl := place(t, nil)
	if p := (gemini{}).policy(pl); !p.Deletes || p.MaxAge != 30*24*time.Hour || p.Problem != "" {
		t.Errorf("default: %+v", p)
	}
	user := filepath.Join(pl.Home, ".gemini", "settings.json")
	system := filepath.Join(pl.System, "etc", "gemini-cli", "settings.json")
	cases := []struct {
		user, system string
		age          time.Duration
		count        int
		deletes      bool
		problem      string
	}{
		{user: `{"general": {"sessionRetention": {"maxAge": "2w"}}}`, age: 14 * 24 * time.Hour, deletes: true},
		{user: `{"general": {"sessionRetention": {"maxAge": "2m"}}}`, age: 60 * 24 * time.Hour, deletes: true},
		{user: `{"general": {"sessionRetention": {"enabled": false}}}`},
		{user: `{"general": {"sessionRetention": {"maxAge": "2w"}}}`, system: `{"general": {"sessionRetention": {"maxAge": "36h"}}}`, age: 36 * time.Hour, deletes: true},
		{user: `{"general": {"sessionRetention": {"maxCount": 5}}}`, age: 30 * 24 * time.Hour, count: 5, deletes: true},
		{user: `{"general": {"sessionRetention": {"maxAge": "30 days"}}}`, deletes: true, problem: "not <number>"},
		{user: `{"general": {"sessionRetention": {"maxAge": "12h"}}}`, deletes: true, problem: "minRetention"},
		{user: `{"general": {"sessionRetention": {"maxAge": "12h", "minRetention": "6h"}}}`, age: 12 * time.Hour, deletes: true},
		{user: `{"general": {"sessionRetention": {"maxCount": 0}}}`, deletes: true, problem: "maxCount"},
		{user: `{"general": {"sessionRetention": {"maxAge": ""}}}`, deletes: true, problem: "neither"},
	}
	for _, c := range cases {
		write(t, user, c.user)
		os.Remove(system)
		if c.system != "" {
			write(t, system, c.system)
		}
		p := (gemini{}).policy(pl)
		if p.Deletes != c.deletes || c.problem == "" && (p.MaxAge != c.age || p.MaxCount != c.count || p.Problem != "") ||
			c.problem != "" && !strings.Contains(p.Problem, c.problem) {
			t.Errorf("user %s, system %s: %+v", c.user, c.system, p)
		}
	}
}

// TestReadChat: a chat as Gemini CLI's clean-up reads it (0.61's
// loadConversationRecord and getAllSessionFiles): the last lastUpdated
// set (none: zero, the time it reads it), in the older one-document
// form the start without one and the file's time without either; a file
// with no session id and project hash in its JSON lines is read as one
// document; no session id, no message it would resume (none, a user's
// that is context it adds or a command, a model's with nothing, those
// a rewind dropped) or a sub-agent's is deleted.
func TestReadChat(t *testing.T) {
	dir := t.TempDir()
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const head = `{"sessionId":"s","projectHash":"p","startTime":"2026-03-01T00:00:00.000Z","lastUpdated":"2026-03-01T00:00:00.000Z"}` + "\n"
	march1 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		data, invalid string
		want          time.Time
	}{
		{data: head + `{"id":"m1","type":"user","content":"hi"}
{"$set":{"lastUpdated":"2026-03-05T10:00:00.000Z"}}`, want: time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC)},
		{data: `{"sessionId":"s","startTime":"2026-03-01T00:00:00.000Z","messages":[{"id":"m","type":"user","content":"hi"}]}`, want: march1},
		{data: `{"sessionId":"s","messages":[{"id":"m","type":"user","content":[{"text":"hi"}]}]}`, want: mtime},
		{data: `{"sessionId":"s","projectHash":"p"}
{"id":"m1","type":"gemini","content":"","toolCalls":[{"id":"c"}]}`},
		// Not one document, and no project hash in its lines.
		{data: `{"sessionId":"s"}
{"id":"m1","type":"user","content":"hi"}`, invalid: "no session id"},
		{data: `{"projectHash":"p"}
{"id":"m1","type":"user","content":"hi"}`, invalid: "no session id"},
		{data: head + `{"id":"m1","type":"user","content":"hi"}` + "\n" + `{"$set":{"kind":"subagent"}}`, want: march1, invalid: "sub-agent"},
		{data: head, want: march1, invalid: "no message"},
		// The stub a resume in a later minute writes: the context
		// Gemini CLI adds, no message of the user's.
		{data: head + `{"$set":{"messages":[{"id":"c","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI.</session_context>"}]}],"lastUpdated":"2026-03-01T00:00:00.000Z"}}`, want: march1, invalid: "no message"},
		{data: head + `{"id":"m1","type":"user","content":"/help"}` + "\n" + `{"id":"m2","type":"gemini","content":" "}`, want: march1, invalid: "no message"},
		{data: head + `{"id":"m1","type":"user","content":"hi"}` + "\n" + `{"$rewindTo":"m1"}`, want: march1, invalid: "no message"},
		{data: head + `{"id":"m1","type":"user","content":"hi"}` + "\n" + `{"$set":{"messages":[]}}`, want: march1, invalid: "no message"},
	} {
		p := filepath.Join(dir, "chat.jsonl")
		write(t, p, c.data)
		info, err := readChat(p, mtime)
		if err != nil || !info.lastUpdated.Equal(c.want) || !strings.Contains(info.invalid, c.invalid) || (c.invalid == "") != (info.invalid == "") {
			t.Errorf("%s:\n%+v, %v", c.data, info, err)
		}
	}
}

// TestGeminiShortIDGoesTogether: every chat of a short id is deleted
// when the first of them is (Gemini CLI's clean-up deletes each file
// ending in the short id of one it deletes), a stub with no message to
// resume is deleted now and takes its session's other files with it,
// a file of another name (no session- prefix) is none of Gemini CLI's,
// and the files of one session count once and are held as the
// session's file with messages is.
func TestGeminiShortIDGoesTogether(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chats")
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	at := func(d float64) string {
		return now.Add(-time.Duration(d * float64(24*time.Hour))).Format(time.RFC3339Nano)
	}
	chat := func(id string, d float64, text string) string {
		return `{"sessionId":"` + id + `","projectHash":"p","startTime":"` + at(d) + `","lastUpdated":"` + at(d) + `","kind":"main"}` + "\n" +
			`{"id":"m1","type":"user","content":[{"text":"` + text + `"}]}` + "\n"
	}
	files := map[string]string{
		// One session, started 10 days ago and resumed 2 days ago in
		// a later minute: its stub holds Gemini CLI's context only.
		"session-2026-05-22T12-00-aaaaaaaa.jsonl": chat("aaaaaaaa-1", 10, "hello"),
		"session-2026-05-30T12-00-aaaaaaaa.jsonl": chat("aaaaaaaa-1", 2, "<session_context>here</session_context>"),
		// Two sessions of one short id: the older goes in 20 days,
		// the newer with it.
		"session-2026-05-22T12-00-bbbbbbbb.jsonl": chat("bbbbbbbb-1", 10, "one"),
		"session-2026-05-31T12-00-bbbbbbbb.jsonl": chat("bbbbbbbb-2", 1, "two"),
		// Its own, kept 29 days more.
		"session-2026-05-31T12-00-cccccccc.jsonl": chat("cccccccc-1", 1, "three"),
		// Not a name Gemini CLI lists.
		"notes-2026-05-31T12-00-aaaaaaaa.jsonl": chat("aaaaaaaa-1", 2, "<session_context>x</session_context>"),
	}
	var cov []importer.Coverage
	for name, data := range files {
		write(t, filepath.Join(dir, name), data)
		held := importer.HeldWhole
		if strings.HasSuffix(name, "-22T12-00-aaaaaaaa.jsonl") {
			held = importer.HeldBehind
		}
		cov = append(cov, importer.Coverage{Tool: "gemini", Bundle: importer.Bundle{Files: []string{filepath.Join(dir, name)}}, Held: held})
	}
	p := Policy{Agent: "gemini", Deletes: true, MaxAge: 30 * 24 * time.Hour}
	due, sessions, err := (gemini{}).due(t.Context(), p, cov, now)
	if err != nil {
		t.Fatal(err)
	}
	if sessions != 4 {
		t.Errorf("%d sessions; want 4", sessions)
	}
	got := map[string]Session{}
	for _, s := range due {
		got[filepath.Base(s.Path)] = s
	}
	in20 := now.Add(20 * 24 * time.Hour)
	for name, want := range map[string]struct {
		at   time.Time
		held importer.Held
	}{
		"session-2026-05-22T12-00-aaaaaaaa.jsonl": {now, importer.HeldBehind},
		"session-2026-05-30T12-00-aaaaaaaa.jsonl": {now, importer.HeldBehind},
		"session-2026-05-22T12-00-bbbbbbbb.jsonl": {in20, importer.HeldWhole},
		"session-2026-05-31T12-00-bbbbbbbb.jsonl": {in20, importer.HeldWhole},
		"session-2026-05-31T12-00-cccccccc.jsonl": {now.Add(29 * 24 * time.Hour), importer.HeldWhole},
	} {
		s, ok := got[name]
		if !ok || !s.DeletesAt.Equal(want.at) || s.Held != want.held {
			t.Errorf("%s: %+v (named: %v); want deleted at %s, held %s", name, s, ok, want.at, want.held)
		}
	}
	if len(got) != 5 {
		t.Errorf("named %d files; want 5: %v", len(got), got)
	}
	if a, b := got["session-2026-05-22T12-00-aaaaaaaa.jsonl"], got["session-2026-05-30T12-00-aaaaaaaa.jsonl"]; a.Key() != b.Key() {
		t.Errorf("one session's files under two keys: %s, %s", a.Key(), b.Key())
	}
}

// TestGeminiCountsSessionsWithItsCleanUpOff: with Gemini CLI's clean-up
// off, the two files of a session resumed in a later minute are still
// one session, and none is named.
func TestGeminiCountsSessionsWithItsCleanUpOff(t *testing.T) {
	pl := place(t, nil)
	write(t, filepath.Join(pl.Home, ".gemini", "settings.json"), `{"general": {"sessionRetention": {"enabled": false}}}`)
	dir := filepath.Join(pl.Home, ".gemini", "tmp", "p", "chats")
	head := `{"sessionId":"aaaaaaaa-1","projectHash":"p","lastUpdated":"2026-05-01T00:00:00Z"}` + "\n"
	write(t, filepath.Join(dir, "session-2026-05-01T00-00-aaaaaaaa.jsonl"), head+`{"id":"m","type":"user","content":"hi"}`+"\n")
	write(t, filepath.Join(dir, "session-2026-05-01T00-05-aaaaaaaa.jsonl"), head)
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "loom.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rep, err := Check(t.Context(), st, "u", []importer.Format{geminifmt.Format{}}, pl, time.Now(), 365*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Agents) != 1 || rep.Agents[0].Sessions != 1 || len(rep.Agents[0].AtRisk) != 0 || rep.Agents[0].Deletes {
		t.Fatalf("%+v", rep.Agents)
	}
}
