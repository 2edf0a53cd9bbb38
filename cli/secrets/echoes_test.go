package secrets_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

type redactJSON struct {
	DryRun   bool              `json:"dry_run"`
	Skipped  []string          `json:"skipped"`
	Secrets  int               `json:"secrets"`
	Echoes   int               `json:"echoes"`
	Parts    int               `json:"parts"`
	Sessions []sessionFindings `json:"sessions"`
}

// loom secrets redact replaces a secret where the detector finds it
// and wherever else it is repeated out of the sight of any rule: in the
// same session's prose and reasoning before that place and after it,
// its tool input and its title, and in another session of the store,
// which a redaction of the first session alone reaches through the
// search index. The counts say how many were repeats; after it a full
// scan finds nothing, a search for the value finds nothing, and (on
// SQLite) the store's file does not hold it.
func TestSecretsRedactEchoes(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	token := randomOf(alnum, 32)
	ctx := context.Background()
	st := fx.OpenEngine(t)
	in, _ := json.Marshal(map[string]string{"command": "./smoke https://staging.example.com/health " + token})
	s := &loom.Session{UserID: "local", Key: "cli:echo", Title: "retry the smoke test with " + token, Project: fx.Proj}
	other := &loom.Session{UserID: "local", Key: "cli:echo-other", Title: "notes", Project: fx.Proj}
	for _, w := range []struct {
		s *loom.Session
		m *loom.Message
	}{
		{s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "retry the smoke test with " + token}}}},
		{s, &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{
			{Type: loom.PartReasoning, Text: "The bearer token " + token + " and the mysql password go in deploy.env."},
			{Type: loom.PartTool, CallID: "c1", Name: "bash", Status: loom.ToolCompleted, Input: in, Output: json.RawMessage(`"401"`)}}}},
		{s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "curl -H 'Authorization: Bearer " + token + "' https://staging.example.com/health answers 401"}}}},
		{s, &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "I used " + token + " for the call."}}}},
		{other, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "the staging token is still " + token}}}},
	} {
		if err := st.Append(ctx, w.s, w.m); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	if r := fx.MustRun(t, "search", token, "--all-projects", "--json"); !strings.Contains(r, other.ID) || !strings.Contains(r, s.ID) {
		t.Fatalf("before the redaction a search for the token does not find both sessions:\n%s", r)
	}
	dry := clitest.DecodeJSON[redactJSON](t, fx.MustRun(t, "secrets", "redact", "--dry-run", "--json"))
	// The header, and six repeats: the title, the first prompt (and
	// the last prompt, its copy, which the session row holds), the
	// reasoning, the tool input, the last reply, the other session.
	if dry.Secrets != 7 || dry.Echoes != 6 || len(dry.Sessions) != 2 {
		t.Fatalf("the dry run reports %+v, want 7 secrets, 6 of them repeats, in 2 sessions", dry)
	}
	echoed := map[string]bool{}
	for _, sf := range dry.Sessions {
		for _, p := range sf.Places {
			if p.Echo {
				echoed[p.Field] = true
				if p.Rule != "authorization-header" {
					t.Errorf("a repeat is named for rule %q, want the header's", p.Rule)
				}
			}
		}
	}
	for _, f := range []string{"title", "text", "input"} {
		if !echoed[f] {
			t.Errorf("the dry run shows no repeat in a %s: %+v", f, dry.Sessions)
		}
	}

	// The session alone: the other is reached through the index.
	r := fx.Run(t, "secrets", "redact", s.ID, "--yes")
	if r.Code != 0 || !strings.Contains(r.Stdout, "redacted 7 secrets") || !strings.Contains(r.Stdout, "6 of them repeats") {
		t.Fatalf("redact: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if after := clitest.DecodeJSON[scanJSON](t, fx.MustRun(t, "secrets", "scan", "--full", "--json")); after.Secrets != 0 {
		t.Errorf("after redact a full scan finds %d secrets", after.Secrets)
	}
	if again := clitest.DecodeJSON[redactJSON](t, fx.MustRun(t, "secrets", "redact", "--dry-run", "--json")); again.Secrets != 0 {
		t.Errorf("after redact a dry run would redact %+v", again)
	}
	if r := fx.MustRun(t, "search", token, "--all-projects", "--json"); strings.Contains(r, s.ID) || strings.Contains(r, other.ID) {
		t.Errorf("after redact a search for the token finds:\n%s", r)
	}
	for _, id := range []string{s.ID, other.ID} {
		shown := fx.MustRun(t, "session", "show", id, "--full-history")
		if strings.Contains(shown, token) || !strings.Contains(shown, "[REDACTED:authorization-header]") {
			t.Errorf("after redact session %s shows:\n%s", id, shown)
		}
	}
	if list := fx.MustRun(t, "session", "list", "--all-projects", "--json"); strings.Contains(list, token) {
		t.Errorf("after redact the listing holds the token: %s", list)
	}
	if !clitest.OnPostgres() {
		b, err := os.ReadFile(fx.DB)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), token) || strings.Contains(string(b), strings.ToLower(token)[:len(token)-4]) {
			t.Error("the store file still holds the token")
		}
	}
}
