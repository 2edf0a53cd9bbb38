package secrets_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/secrets/secretstest"
)

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

type scanJSON struct {
	Secrets         int               `json:"secrets"`
	ScannedSessions int               `json:"scanned_sessions"`
	ScannedMessages int               `json:"scanned_messages"`
	Sessions        []sessionFindings `json:"sessions"`
}

// sessionFindings is a session's in a scan's and a redaction's report.
type sessionFindings struct {
	SessionID string         `json:"session_id"`
	Title     string         `json:"title"`
	Count     int            `json:"count"`
	Rules     map[string]int `json:"rules"`
	Echoes    int            `json:"echoes"`
	Places    []struct {
		MessageID string `json:"message_id"`
		Seq       int64  `json:"seq"`
		Part      int    `json:"part"`
		Field     string `json:"field"`
		Rule      string `json:"rule"`
		Hint      string `json:"hint"`
		ID        string `json:"id"`
		Echo      bool   `json:"echo"`
	} `json:"places"`
}

// secrets scan reports every seeded secret by session, rule and place
// and never its value; a second scan reads only the last message again;
// redact --dry-run changes nothing; redact --yes replaces them in the
// store, out of search, and (SQLite) out of the store file.
func TestSecretsScanAndRedact(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	s, values := clitest.SeedSecrets(t, fx)

	r := fx.Run(t, "secrets", "scan", "--json")
	if r.Code != 0 {
		t.Fatalf("scan: exit %d: %s", r.Code, r.Stderr)
	}
	if v := secretstest.HoldsAny(r.Stdout+r.Stderr, values); v != "" {
		t.Fatalf("scan printed the secret %q", v)
	}
	rep := clitest.DecodeJSON[scanJSON](t, r.Stdout)
	if rep.Secrets != 6 || len(rep.Sessions) != 1 || rep.Sessions[0].SessionID != s.ID || len(rep.Sessions[0].Places) != 6 || rep.ScannedMessages != 6 {
		t.Fatalf("scan report %+v, want 6 secrets in %s from 6 messages", rep, s.ID)
	}
	for _, p := range rep.Sessions[0].Places {
		if p.MessageID == "" || p.Seq < 1 || p.Rule == "" || len([]rune(p.Hint)) > 9 {
			t.Errorf("place %+v", p)
		}
	}
	if again := clitest.DecodeJSON[scanJSON](t, fx.MustRun(t, "secrets", "scan", "--json")); again.Secrets != 6 || again.ScannedMessages != 1 {
		t.Errorf("second scan: %d secrets from %d messages, want 6 from the last message only", again.Secrets, again.ScannedMessages)
	}
	if out := fx.MustRun(t, "secrets", "scan"); !strings.Contains(out, "6 secrets in 1 session") || !strings.Contains(out, "aws-access-key 1") {
		t.Errorf("scan text:\n%s", out)
	}
	if r := fx.Run(t, "secrets", "scan", "no-such-session"); r.Code != 3 || !strings.Contains(r.Stderr, "no-such-session") {
		t.Errorf("scan of a bad session: exit %d, %q", r.Code, r.Stderr)
	}

	if r := fx.Run(t, "secrets", "redact"); r.Code != 2 || !strings.Contains(r.Stderr, "--yes") {
		t.Errorf("redact without a terminal or --yes: exit %d, %q", r.Code, r.Stderr)
	}
	dry := fx.MustRun(t, "secrets", "redact", "--dry-run")
	if !strings.Contains(dry, "would redact 6 secrets") || secretstest.HoldsAny(dry, values) != "" {
		t.Errorf("dry run:\n%s", dry)
	}
	if again := clitest.DecodeJSON[scanJSON](t, fx.MustRun(t, "secrets", "scan", "--full", "--json")); again.Secrets != 6 {
		t.Fatalf("after --dry-run the store holds %d secrets, want the 6 untouched", again.Secrets)
	}

	r = fx.Run(t, "secrets", "redact", s.ID[:8], "--yes")
	if r.Code != 0 || !strings.Contains(r.Stderr, "the original text will be gone") || !strings.Contains(r.Stdout, "redacted 6 secrets") {
		t.Fatalf("redact: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if after := clitest.DecodeJSON[scanJSON](t, fx.MustRun(t, "secrets", "scan", "--json")); after.Secrets != 0 {
		t.Errorf("after redact a scan finds %d secrets", after.Secrets)
	}
	shown := fx.MustRun(t, "session", "show", s.ID, "--full-history")
	if v := secretstest.HoldsAny(shown, values); v != "" || !strings.Contains(shown, "[REDACTED:aws-access-key]") || !strings.Contains(shown, "wombat done") {
		t.Errorf("after redact the session shows %q:\n%s", v, shown)
	}
	for _, v := range values {
		if r := fx.Run(t, "search", v, "--all-projects", "--json"); strings.Contains(r.Stdout, s.ID) {
			t.Errorf("search %q still finds the session:\n%s", v, r.Stdout)
		}
	}
	if list := fx.MustRun(t, "session", "list", "--all-projects", "--json"); secretstest.HoldsAny(list, values) != "" {
		t.Errorf("the session's last prompt keeps a secret: %s", list)
	}
	if !clitest.OnPostgres() {
		b, err := os.ReadFile(fx.DB)
		if err != nil {
			t.Fatal(err)
		}
		if v := secretstest.HoldsAny(string(b), values); v != "" {
			t.Errorf("the store file still holds %q", v)
		}
	}
}

// Markdown and html exports, hand-off and the MCP read tools of a
// session with secrets hold none of them and say how many they
// redacted; jsonl keeps them and says so; --no-redact keeps them.
func TestSecretsNeverLeaveByDefault(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	s, values := clitest.SeedSecrets(t, fx)

	for _, format := range []string{"markdown", "html"} {
		r := fx.Run(t, "session", "export", s.ID, "--format", format)
		if r.Code != 0 || secretstest.HoldsAny(r.Stdout, values) != "" || !strings.Contains(r.Stdout, "REDACTED:") || !strings.Contains(r.Stderr, "redacted 6 secrets") {
			t.Errorf("export %s: exit %d, stderr %q, holds %q", format, r.Code, r.Stderr, secretstest.HoldsAny(r.Stdout, values))
		}
		r = fx.Run(t, "session", "export", s.ID, "--format", format, "--no-redact")
		if r.Code != 0 || secretstest.HoldsAny(r.Stdout, values) == "" {
			t.Errorf("export %s --no-redact left the secrets out", format)
		}
	}
	r := fx.Run(t, "session", "export", s.ID)
	if r.Code != 0 || secretstest.HoldsAny(r.Stdout, values) == "" || !strings.Contains(r.Stderr, "keeps 6 secrets as stored") {
		t.Errorf("jsonl export: exit %d, stderr %q", r.Code, r.Stderr)
	}

	r = fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "handoff", s.ID, "--to", "codex", "--json", "--dir", fx.Project)
	if r.Code != 0 || !strings.Contains(r.Stderr, "redacted 6 secrets") {
		t.Fatalf("handoff: exit %d, %q", r.Code, r.Stderr)
	}
	out := clitest.DecodeJSON[clitest.HandoffJSON](t, r.Stdout)
	written, err := os.ReadFile(out.Path)
	if err != nil {
		t.Fatal(err)
	}
	if v := secretstest.HoldsAny(string(written), values); v != "" || !strings.Contains(string(written), "REDACTED:") {
		t.Errorf("the handed-off file holds %q", v)
	}

	cs := clitest.ConnectStdio(t, fx)
	read := clitest.MustCall(t, cs, "read_session", map[string]any{"ref": s.ID})
	if v := secretstest.HoldsAny(read.Text+jsonOf(read.Data), values); v != "" || !strings.Contains(read.Text, "loom redacted 6 secrets") {
		t.Errorf("read_session holds %q or does not count:\n%s", v, read.Text)
	}
	found := clitest.MustCall(t, cs, "search_sessions", map[string]any{"query": "wombat", "all_projects": true})
	if v := secretstest.HoldsAny(found.Text+jsonOf(found.Data), values); v != "" {
		t.Errorf("search_sessions holds %q:\n%s", v, found.Text)
	}
	list := clitest.MustCall(t, cs, "list_sessions", map[string]any{"all_projects": true})
	if v := secretstest.HoldsAny(list.Text+jsonOf(list.Data), values); v != "" {
		t.Errorf("list_sessions holds %q", v)
	}
	recalled := clitest.MustCall(t, cs, "recall", map[string]any{"prompt": "wombat deploy step", "all_projects": true, "tokens": 8000})
	if v := secretstest.HoldsAny(recalled.Text+jsonOf(recalled.Data), values); v != "" || !strings.Contains(recalled.Text, "REDACTED:") || !strings.Contains(recalled.Text, "loom redacted") {
		t.Errorf("recall holds %q or does not count:\n%s", v, recalled.Text)
	}

	// A recall hook hands the agent's model what it recalls.
	fx.MustExec(t, "recall", "enable")
	in, _ := json.Marshal(map[string]string{"cwd": fx.Project, "prompt": "wombat deploy step", "hook_event_name": "UserPromptSubmit"})
	// Not bound by the hook's 100 ms here: a test cannot depend on a
	// clock.
	cmd := exec.Command(clitest.LoomBinary(t), "recall", "--hook", "claude-code", "--tokens", "8000")
	cmd.Dir, cmd.Env = fx.Project, fx.BinEnv("LOOM_RECALL_HOOK_TIME=1m")
	r = clitest.ExecCmd(t, cmd, string(in))
	var hook struct {
		HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
	}
	_ = json.Unmarshal([]byte(r.Stdout), &hook)
	added := hook.HookSpecificOutput.AdditionalContext
	if v := secretstest.HoldsAny(added, values); r.Code != 0 || v != "" || !strings.Contains(added, "REDACTED:") {
		t.Errorf("the recall hook: exit %d, holds %q:\n%s%s", r.Code, v, r.Stdout, r.Stderr)
	}
}

// secrets redact on one machine removes the secrets from the other after
// both sync, with the hub on SQLite and on PostgreSQL.
func TestSecretsRedactSyncs(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	clitest.OnBothHubs(t, func(t *testing.T, hubDB func(*testing.T) string) {
		a, b, _, _ := clitest.SyncPair(t, hubDB(t))
		s, values := clitest.SeedSecrets(t, a)
		a.MustExec(t, "sync")
		b.MustExec(t, "sync")
		if shown := b.MustExec(t, "session", "show", s.ID, "--full-history"); secretstest.HoldsAny(shown, values) == "" {
			t.Fatalf("machine B did not get the session:\n%s", shown)
		}
		a.MustExec(t, "secrets", "redact", "--yes")
		a.MustExec(t, "sync")
		b.MustExec(t, "sync")
		shown := b.MustExec(t, "session", "show", s.ID, "--full-history")
		if v := secretstest.HoldsAny(shown, values); v != "" || !strings.Contains(shown, "[REDACTED:") {
			t.Errorf("after sync machine B still shows %q:\n%s", v, shown)
		}
		if rep := clitest.DecodeJSON[scanJSON](t, b.MustExec(t, "secrets", "scan", "--json")); rep.Secrets != 0 {
			t.Errorf("machine B holds %d secrets after sync", rep.Secrets)
		}
		if list := b.MustExec(t, "session", "list", "--all-projects", "--json"); secretstest.HoldsAny(list, values) != "" {
			t.Errorf("machine B's last prompt keeps a secret")
		}
	})
}

// exportedSecrets seeds a store with a session holding secrets
// (clitest.SeedSecrets) and exports it to a file.
func exportedSecrets(t *testing.T) (src *clitest.Fixture, s *loom.Session, values []string, file string) {
	t.Helper()
	src = clitest.NewEmptyFixture(t)
	s, values = clitest.SeedSecrets(t, src)
	file = filepath.Join(t.TempDir(), "deploy.jsonl")
	if err := os.WriteFile(file, []byte(src.MustRun(t, "session", "export", s.ID)), 0o600); err != nil {
		t.Fatal(err)
	}
	return src, s, values, file
}

// With redact_on_write, a session imported from a file is stored
// redacted, and turning MCP redaction off gives the read tools the text
// as stored.
func TestSecretsRedactOnWrite(t *testing.T) {
	t.Parallel()
	src, s, values, file := exportedSecrets(t)
	clitest.WriteConfig(t, src, "[mcp]\nredact = false\n")
	plain := clitest.MustCall(t, clitest.ConnectStdio(t, src), "read_session", map[string]any{"ref": s.ID})
	if secretstest.HoldsAny(plain.Text, values) == "" {
		t.Errorf("with [mcp] redact = false read_session still redacts")
	}

	dst := clitest.NewEmptyFixture(t)
	clitest.WriteConfig(t, dst, "[secrets]\nredact_on_write = true\n")
	dst.MustRun(t, "session", "import", file)
	if rep := clitest.DecodeJSON[scanJSON](t, dst.MustRun(t, "secrets", "scan", "--json")); rep.Secrets != 0 {
		t.Errorf("imported with redact_on_write, the store holds %d secrets", rep.Secrets)
	}
	if shown := dst.MustRun(t, "session", "show", s.ID, "--full-history"); secretstest.HoldsAny(shown, values) != "" || !strings.Contains(shown, "[REDACTED:") {
		t.Errorf("imported with redact_on_write:\n%s", shown)
	}
}

// A value allowed by the id a scan shows is reported no more, nor
// redacted, nor replaced on the way out; taken off the list, it is
// reported again.
func TestSecretsAllow(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	s, values := clitest.SeedSecrets(t, fx)
	before := clitest.DecodeJSON[scanJSON](t, fx.MustRun(t, "secrets", "scan", "--json"))
	if before.Secrets != len(values) {
		t.Fatalf("scan found %d secrets, want %d", before.Secrets, len(values))
	}
	place := before.Sessions[0].Places[0]
	if len(place.ID) != 16 {
		t.Fatalf("place %+v has no id", place)
	}
	if out := fx.MustRun(t, "secrets", "scan"); !strings.Contains(out, "id "+place.ID) {
		t.Errorf("the scan's text does not show the id %s:\n%s", place.ID, out)
	}
	fx.MustRun(t, "secrets", "allow", place.ID, "--note", "a fixture")
	if list := fx.MustRun(t, "secrets", "allow"); !strings.Contains(list, place.ID) || !strings.Contains(list, "a fixture") {
		t.Errorf("allow lists %q", list)
	}
	after := clitest.DecodeJSON[scanJSON](t, fx.MustRun(t, "secrets", "scan", "--json"))
	if after.Secrets != len(values)-1 {
		t.Errorf("after allow the scan finds %d secrets, want %d", after.Secrets, len(values)-1)
	}
	md := fx.MustRun(t, "session", "export", s.ID, "--format", "markdown")
	if n := strings.Count(md, "[REDACTED:"); n != len(values)-1 {
		t.Errorf("the markdown export holds %d markers, want %d", n, len(values)-1)
	}
	fx.MustRun(t, "secrets", "redact", "--yes")
	// The first place is the first secret seeded: kept, the others gone.
	kept := fx.MustRun(t, "session", "export", s.ID)
	if !strings.Contains(kept, values[0]) {
		t.Errorf("redact replaced the allowed value %q too", values[0])
	}
	if v := secretstest.HoldsAny(kept, values[1:]); v != "" {
		t.Errorf("after redact the store keeps %q", v)
	}
	fx.MustRun(t, "secrets", "allow", "--remove", place.ID)
	if again := clitest.DecodeJSON[scanJSON](t, fx.MustRun(t, "secrets", "scan", "--json", "--full")); again.Secrets != 1 {
		t.Errorf("taken off the list, the value is reported %d times, want once", again.Secrets)
	}
	if r := fx.Run(t, "secrets", "allow", "not-an-id"); r.Code != 2 {
		t.Errorf("a bad id: exit %d, %q", r.Code, r.Stderr)
	}
}

// A configuration that cannot be read cannot say whether to redact
// secrets as they are written: a command that writes stops with one
// line saying why (exit 1, an error of configuration and no misuse of
// the command line), and stores nothing, rather than write the secrets
// it may have been told to redact.
func TestSecretsRedactOnWriteUnreadable(t *testing.T) {
	t.Parallel()
	_, _, _, file := exportedSecrets(t)
	importing := func(t *testing.T, fx *clitest.Fixture, env ...string) clitest.Result {
		t.Helper()
		cmd := exec.Command(clitest.LoomBinary(t), "session", "import", file)
		cmd.Dir, cmd.Env = fx.Project, fx.BinEnv(env...)
		return clitest.ExecCmd(t, cmd, "")
	}
	check := func(t *testing.T, fx *clitest.Fixture, r clitest.Result, says string) {
		t.Helper()
		if r.Code != 1 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, says) || !strings.Contains(r.Stderr, "redact") {
			t.Errorf("import: exit %d, stderr %q; want exit 1 and one line naming %q and redaction", r.Code, r.Stderr, says)
		}
		if n := fx.CountSessions(t); n != 0 {
			t.Errorf("the import stored %d sessions", n)
		}
	}

	t.Run("env", func(t *testing.T) {
		t.Parallel()
		fx := clitest.NewEmptyFixture(t)
		check(t, fx, importing(t, fx, "LOOM_REDACT_ON_WRITE=maybe"), "LOOM_REDACT_ON_WRITE")
	})
	t.Run("config.toml", func(t *testing.T) {
		t.Parallel()
		fx := clitest.NewEmptyFixture(t)
		// A directory where the file should be: unreadable to anyone,
		// root too.
		if err := os.MkdirAll(filepath.Join(fx.Home, "config", "config.toml"), 0o700); err != nil {
			t.Fatal(err)
		}
		check(t, fx, importing(t, fx), "config.toml")
	})
}
