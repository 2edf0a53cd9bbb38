package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets/secretstest"
)

// seedSecrets appends to fx's store a session of three turns whose
// prompts and tool output carry fake secrets of several kinds, and
// returns it with the secrets.
func seedSecrets(t *testing.T, fx *fixture) (*loom.Session, []string) {
	t.Helper()
	ctx := context.Background()
	st, err := openEngine(ctx, fx.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := secretstest.New(7)
	s := &loom.Session{UserID: "local", Key: "cli:deploy", Title: "deploy the api", Project: fx.proj}
	var values []string
	for i, kind := range []string{"aws-access-key", "github-token", "url-credentials", "stripe-key", "private-key", "dotenv-secret"} {
		sec := g.Secret(kind)
		values = append(values, strings.Split(sec.Value, "\n")[1%len(strings.Split(sec.Value, "\n"))])
		var m *loom.Message
		if i%2 == 0 {
			m = &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "wombat deploy step " + sec.Text}}}
		} else {
			m = &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartTool, CallID: "c" + kind, Name: "bash",
				Status: loom.ToolCompleted, Input: []byte(`{"command":"cat .env"}`), Output: []byte(jsonQuote(sec.Text + "\nwombat done"))}}}
		}
		if err := st.Append(ctx, s, m); err != nil {
			t.Fatal(err)
		}
	}
	return s, values
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteString(`\` + string(r))
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// holdsAny returns the first of values that text holds.
func holdsAny(text string, values []string) string {
	for _, v := range values {
		if strings.Contains(text, v) {
			return v
		}
	}
	return ""
}

type scanJSON struct {
	Secrets         int `json:"secrets"`
	ScannedSessions int `json:"scanned_sessions"`
	ScannedMessages int `json:"scanned_messages"`
	Sessions        []struct {
		SessionID string         `json:"session_id"`
		Title     string         `json:"title"`
		Count     int            `json:"count"`
		Rules     map[string]int `json:"rules"`
		Places    []struct {
			MessageID string `json:"message_id"`
			Seq       int64  `json:"seq"`
			Part      int    `json:"part"`
			Field     string `json:"field"`
			Rule      string `json:"rule"`
			Hint      string `json:"hint"`
		} `json:"places"`
	} `json:"sessions"`
}

// secrets scan reports every seeded secret by session, rule and place
// and never its value; a second scan reads only the last message again;
// redact --dry-run changes nothing; redact --yes replaces them in the
// store, out of search, and (SQLite) out of the store file.
func TestSecretsScanAndRedact(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	s, values := seedSecrets(t, fx)

	r := fx.run(t, "secrets", "scan", "--json")
	if r.code != 0 {
		t.Fatalf("scan: exit %d: %s", r.code, r.stderr)
	}
	if v := holdsAny(r.stdout+r.stderr, values); v != "" {
		t.Fatalf("scan printed the secret %q", v)
	}
	rep := decodeJSON[scanJSON](t, r.stdout)
	if rep.Secrets != 6 || len(rep.Sessions) != 1 || rep.Sessions[0].SessionID != s.ID || len(rep.Sessions[0].Places) != 6 || rep.ScannedMessages != 6 {
		t.Fatalf("scan report %+v, want 6 secrets in %s from 6 messages", rep, s.ID)
	}
	for _, p := range rep.Sessions[0].Places {
		if p.MessageID == "" || p.Seq < 1 || p.Rule == "" || len([]rune(p.Hint)) > 9 {
			t.Errorf("place %+v", p)
		}
	}
	if again := decodeJSON[scanJSON](t, fx.mustRun(t, "secrets", "scan", "--json")); again.Secrets != 6 || again.ScannedMessages != 1 {
		t.Errorf("second scan: %d secrets from %d messages, want 6 from the last message only", again.Secrets, again.ScannedMessages)
	}
	if out := fx.mustRun(t, "secrets", "scan"); !strings.Contains(out, "6 secrets in 1 session") || !strings.Contains(out, "aws-access-key 1") {
		t.Errorf("scan text:\n%s", out)
	}
	if r := fx.run(t, "secrets", "scan", "no-such-session"); r.code != 3 || !strings.Contains(r.stderr, "no-such-session") {
		t.Errorf("scan of a bad session: exit %d, %q", r.code, r.stderr)
	}

	if r := fx.run(t, "secrets", "redact"); r.code != 2 || !strings.Contains(r.stderr, "--yes") {
		t.Errorf("redact without a terminal or --yes: exit %d, %q", r.code, r.stderr)
	}
	dry := fx.mustRun(t, "secrets", "redact", "--dry-run")
	if !strings.Contains(dry, "would redact 6 secrets") || holdsAny(dry, values) != "" {
		t.Errorf("dry run:\n%s", dry)
	}
	if again := decodeJSON[scanJSON](t, fx.mustRun(t, "secrets", "scan", "--full", "--json")); again.Secrets != 6 {
		t.Fatalf("after --dry-run the store holds %d secrets, want the 6 untouched", again.Secrets)
	}

	r = fx.run(t, "secrets", "redact", s.ID[:8], "--yes")
	if r.code != 0 || !strings.Contains(r.stderr, "the original text will be gone") || !strings.Contains(r.stdout, "redacted 6 secrets") {
		t.Fatalf("redact: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if after := decodeJSON[scanJSON](t, fx.mustRun(t, "secrets", "scan", "--json")); after.Secrets != 0 {
		t.Errorf("after redact a scan finds %d secrets", after.Secrets)
	}
	shown := fx.mustRun(t, "session", "show", s.ID, "--full-history")
	if v := holdsAny(shown, values); v != "" || !strings.Contains(shown, "[REDACTED:aws-access-key]") || !strings.Contains(shown, "wombat done") {
		t.Errorf("after redact the session shows %q:\n%s", v, shown)
	}
	for _, v := range values {
		if r := fx.run(t, "search", v, "--all-projects", "--json"); strings.Contains(r.stdout, s.ID) {
			t.Errorf("search %q still finds the session:\n%s", v, r.stdout)
		}
	}
	if list := fx.mustRun(t, "session", "list", "--all-projects", "--json"); holdsAny(list, values) != "" {
		t.Errorf("the session's last prompt keeps a secret: %s", list)
	}
	if !onPostgres() {
		b, err := os.ReadFile(fx.db)
		if err != nil {
			t.Fatal(err)
		}
		if v := holdsAny(string(b), values); v != "" {
			t.Errorf("the store file still holds %q", v)
		}
	}
}

// Markdown and html exports, hand-off and the MCP read tools of a
// session with secrets hold none of them and say how many they
// redacted; jsonl keeps them and says so; --no-redact keeps them.
func TestSecretsNeverLeaveByDefault(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	s, values := seedSecrets(t, fx)

	for _, format := range []string{"markdown", "html"} {
		r := fx.run(t, "session", "export", s.ID, "--format", format)
		if r.code != 0 || holdsAny(r.stdout, values) != "" || !strings.Contains(r.stdout, "REDACTED:") || !strings.Contains(r.stderr, "redacted 6 secrets") {
			t.Errorf("export %s: exit %d, stderr %q, holds %q", format, r.code, r.stderr, holdsAny(r.stdout, values))
		}
		r = fx.run(t, "session", "export", s.ID, "--format", format, "--no-redact")
		if r.code != 0 || holdsAny(r.stdout, values) == "" {
			t.Errorf("export %s --no-redact left the secrets out", format)
		}
	}
	r := fx.run(t, "session", "export", s.ID)
	if r.code != 0 || holdsAny(r.stdout, values) == "" || !strings.Contains(r.stderr, "keeps 6 secrets as stored") {
		t.Errorf("jsonl export: exit %d, stderr %q", r.code, r.stderr)
	}

	r = fx.runWith(t, runOpts{before: allFormats}, "session", "handoff", s.ID, "--to", "codex", "--json", "--dir", fx.project)
	if r.code != 0 || !strings.Contains(r.stderr, "redacted 6 secrets") {
		t.Fatalf("handoff: exit %d, %q", r.code, r.stderr)
	}
	out := decodeJSON[handoffJSON](t, r.stdout)
	written, err := os.ReadFile(out.Path)
	if err != nil {
		t.Fatal(err)
	}
	if v := holdsAny(string(written), values); v != "" || !strings.Contains(string(written), "REDACTED:") {
		t.Errorf("the handed-off file holds %q", v)
	}

	cs := connectStdio(t, fx)
	read := mustCall(t, cs, "read_session", map[string]any{"ref": s.ID})
	if v := holdsAny(read.text+jsonOf(read.data), values); v != "" || !strings.Contains(read.text, "loom redacted 6 secrets") {
		t.Errorf("read_session holds %q or does not count:\n%s", v, read.text)
	}
	found := mustCall(t, cs, "search_sessions", map[string]any{"query": "wombat", "all_projects": true})
	if v := holdsAny(found.text+jsonOf(found.data), values); v != "" {
		t.Errorf("search_sessions holds %q:\n%s", v, found.text)
	}
	list := mustCall(t, cs, "list_sessions", map[string]any{"all_projects": true})
	if v := holdsAny(list.text+jsonOf(list.data), values); v != "" {
		t.Errorf("list_sessions holds %q", v)
	}
	recalled := mustCall(t, cs, "recall", map[string]any{"prompt": "wombat deploy step", "all_projects": true, "tokens": 8000})
	if v := holdsAny(recalled.text+jsonOf(recalled.data), values); v != "" || !strings.Contains(recalled.text, "REDACTED:") || !strings.Contains(recalled.text, "loom redacted") {
		t.Errorf("recall holds %q or does not count:\n%s", v, recalled.text)
	}

	// A recall hook hands the agent's model what it recalls.
	fx.mustExec(t, "recall", "enable")
	in, _ := json.Marshal(map[string]string{"cwd": fx.project, "prompt": "wombat deploy step", "hook_event_name": "UserPromptSubmit"})
	// Not bound by the hook's 100 ms here: a test cannot depend on a
	// clock.
	cmd := exec.Command(loomBinary(t), "recall", "--hook", "claude-code", "--tokens", "8000")
	cmd.Dir, cmd.Env = fx.project, fx.binEnv("LOOM_RECALL_HOOK_TIME=1m")
	r = execCmd(t, cmd, string(in))
	var hook struct {
		HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
	}
	_ = json.Unmarshal([]byte(r.stdout), &hook)
	added := hook.HookSpecificOutput.AdditionalContext
	if v := holdsAny(added, values); r.code != 0 || v != "" || !strings.Contains(added, "REDACTED:") {
		t.Errorf("the recall hook: exit %d, holds %q:\n%s%s", r.code, v, r.stdout, r.stderr)
	}
}

// secrets redact on one machine removes the secrets from the other after
// both sync, with the hub on SQLite and on PostgreSQL.
func TestSecretsRedactSyncs(t *testing.T) {
	t.Parallel()
	if onPostgres() {
		t.Skip("sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	}
	onBothHubs(t, func(t *testing.T, hubDB func(*testing.T) string) {
		a, b, _, _ := syncPair(t, hubDB(t))
		s, values := seedSecrets(t, a)
		a.mustExec(t, "sync")
		b.mustExec(t, "sync")
		if shown := b.mustExec(t, "session", "show", s.ID, "--full-history"); holdsAny(shown, values) == "" {
			t.Fatalf("machine B did not get the session:\n%s", shown)
		}
		a.mustExec(t, "secrets", "redact", "--yes")
		a.mustExec(t, "sync")
		b.mustExec(t, "sync")
		shown := b.mustExec(t, "session", "show", s.ID, "--full-history")
		if v := holdsAny(shown, values); v != "" || !strings.Contains(shown, "[REDACTED:") {
			t.Errorf("after sync machine B still shows %q:\n%s", v, shown)
		}
		if rep := decodeJSON[scanJSON](t, b.mustExec(t, "secrets", "scan", "--json")); rep.Secrets != 0 {
			t.Errorf("machine B holds %d secrets after sync", rep.Secrets)
		}
		if list := b.mustExec(t, "session", "list", "--all-projects", "--json"); holdsAny(list, values) != "" {
			t.Errorf("machine B's last prompt keeps a secret")
		}
	})
}

// writeConfig writes fx's config.toml.
func writeConfig(t *testing.T, fx *fixture, text string) {
	t.Helper()
	dir := filepath.Join(fx.home, "config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// With redact_on_write, a session imported from a file is stored
// redacted, and turning MCP redaction off gives the read tools the text
// as stored.
func TestSecretsRedactOnWrite(t *testing.T) {
	t.Parallel()
	src := newEmptyFixture(t)
	s, values := seedSecrets(t, src)
	file := filepath.Join(t.TempDir(), "deploy.jsonl")
	if err := os.WriteFile(file, []byte(src.mustRun(t, "session", "export", s.ID)), 0o600); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, src, "[mcp]\nredact = false\n")
	plain := mustCall(t, connectStdio(t, src), "read_session", map[string]any{"ref": s.ID})
	if holdsAny(plain.text, values) == "" {
		t.Errorf("with [mcp] redact = false read_session still redacts")
	}

	dst := newEmptyFixture(t)
	writeConfig(t, dst, "[secrets]\nredact_on_write = true\n")
	dst.mustRun(t, "session", "import", file)
	if rep := decodeJSON[scanJSON](t, dst.mustRun(t, "secrets", "scan", "--json")); rep.Secrets != 0 {
		t.Errorf("imported with redact_on_write, the store holds %d secrets", rep.Secrets)
	}
	if shown := dst.mustRun(t, "session", "show", s.ID, "--full-history"); holdsAny(shown, values) != "" || !strings.Contains(shown, "[REDACTED:") {
		t.Errorf("imported with redact_on_write:\n%s", shown)
	}
}
