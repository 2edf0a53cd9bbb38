package secrets_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
)

const (
	// echoToken is given away by an Authorization header, and repeated
	// in prose where no rule sees it.
	echoToken = "f8XdQA1sLm29Zq7RtY5wPk3N"
	// echoPass is a DATABASE_URL's password, with characters a JSON
	// string escapes (\u0026, \u003c, \u003e).
	echoPass = "pa&ss<9>x2QkR7mZ4pLw"
	// shortPass is a password too short to be replaced where it is
	// repeated (secrets.MinEcho).
	shortPass = "x9Kq2Lm7"
)

// echoStore is a store holding a session whose secrets are repeated
// where no rule sees them: in reasoning and prose before the place that
// gives them away and after it, in a tool's input (JSON, escaped), and
// in the title.
func echoStore(t *testing.T) (loom.Store, *loom.Session) {
	t.Helper()
	ctx := context.Background()
	st := openStore(t)
	s := &loom.Session{ID: loom.NewID(), Key: "cli:echo", UserID: "u", Surface: "cli", Title: "retry the staging call with " + echoToken}
	in, _ := json.Marshal(map[string]string{"command": "./deploy --note 'token " + echoToken + ", db " + echoPass + "'"})
	if !strings.Contains(string(in), `pa\u0026ss\u003c9\u003e`) {
		t.Fatalf("the tool input does not escape the password: %s", in)
	}
	out, _ := json.Marshal("DATABASE_URL=mysql://app:" + echoPass + "@db:3306/shop\nSTAGING_URL=mysql://app:" + shortPass + "@db:3306/stage\n")
	msgs := []*loom.Message{
		{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "the smoke test still fails, use the token from before"}}},
		{Role: loom.RoleAssistant, Parts: []loom.Part{
			{Type: loom.PartReasoning, Text: "The bearer token " + echoToken + " and the mysql password go in deploy.env."},
			{Type: loom.PartText, Text: "I will call staging with " + echoToken + "; the password " + echoPass + " stays in deploy.env, " + shortPass + " for stage."},
		}},
		{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "curl -H 'Authorization: Bearer " + echoToken + "' https://staging.example.com/health answers 401"}}},
		{Role: loom.RoleAssistant, Parts: []loom.Part{
			{Type: loom.PartTool, CallID: "c1", Name: "bash", Status: loom.ToolCompleted, Input: in, Output: out},
			{Type: loom.PartText, Text: "I used " + echoToken + " for the call and " + echoPass + " for the database."},
		}},
	}
	if err := st.Append(ctx, s, msgs...); err != nil {
		t.Fatal(err)
	}
	return st, s
}

// echoLeaks reports the repeated secrets text holds, as written or as a
// JSON string holds them.
func echoLeaks(text string) []string {
	var found []string
	for _, v := range []string{echoToken, echoPass} {
		b, _ := json.Marshal(v)
		if strings.Contains(text, v) || strings.Contains(text, strings.Trim(string(b), `"`)) {
			found = append(found, v)
		}
	}
	return found
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A secret the detector finds in one place is redacted wherever else a
// read through the gate holds it, as a literal, with the same marker:
// in the prose, reasoning and tool input before the place that gave it
// away and after it, and in the title read with the messages; and in
// the gate's later reads. A value too short to be told from a word
// (secrets.MinEcho) is redacted only where a rule finds it.
func TestGateRedactsEchoes(t *testing.T) {
	st, s := echoStore(t)
	ctx := context.Background()
	d := secrets.Default()
	for _, prose := range []string{"I used " + echoToken + " for the call", s.Title, "the password " + echoPass + " stays"} {
		if f := d.Find(prose); len(f) > 0 {
			t.Fatalf("the detector finds %v in %q: the test needs a copy no rule sees", f, prose)
		}
	}
	raw, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(echoLeaks(jsonOf(t, raw))) != 2 {
		t.Fatalf("the store does not hold the secrets as written: %s", jsonOf(t, raw))
	}

	g := d.Gate(st)
	msgs, err := g.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got := jsonOf(t, msgs)
	if v := echoLeaks(got); len(v) > 0 {
		t.Errorf("messages read through the gate hold %q:\n%s", v, got)
	}
	reasoning := msgs[1].Parts[0].Text
	if want := "The bearer token [REDACTED:authorization-header] and the mysql password go in deploy.env."; reasoning != want {
		t.Errorf("the reasoning reads %q, want %q", reasoning, want)
	}
	if text := msgs[1].Parts[1].Text; !strings.Contains(text, "[REDACTED:url-credentials] stays") || !strings.Contains(text, shortPass+" for stage") {
		t.Errorf("the prose reads %q: want the password's echo replaced by its rule's marker, and the short one left", text)
	}
	if in := string(msgs[3].Parts[0].Input); !json.Valid(msgs[3].Parts[0].Input) || strings.Count(in, "[REDACTED:") != 2 {
		t.Errorf("the tool input reads %s: want valid JSON with both values replaced", in)
	}
	if !strings.Contains(jsonOf(t, raw), echoToken) {
		t.Error("the gate changed the store's messages")
	}
	// The header, the URL's two passwords, and five echoes.
	if n := g.Redacted(); n != 3+5+2 {
		t.Errorf("the gate counted %d secrets, want 10", n)
	}

	// A later read of the same gate: the title alone.
	later, err := g.Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if later.Title != "retry the staging call with [REDACTED:authorization-header]" {
		t.Errorf("a later read of the gate shows the title %q", later.Title)
	}
	if txt := g.Text("memory: " + echoToken); strings.Contains(txt, echoToken) {
		t.Errorf("a later text through the gate reads %q", txt)
	}

	// A new gate reads the title with the messages as one read.
	data, err := d.Gate(st).ReadSessions(ctx, []string{s.ID}, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if v := echoLeaks(jsonOf(t, data)); len(v) > 0 {
		t.Errorf("a session read with its messages holds %q:\n%s", v, jsonOf(t, data))
	}

	// A search's hits are one read, in whatever order they come; a
	// gate's later search replaces what its earlier reads found.
	for _, q := range []string{"staging", echoToken, "bearer token mysql password deploy", "call"} {
		g := d.Gate(st)
		if q == "call" {
			// No hit of "call" holds the header: the gate knows the
			// token from a read before.
			if _, err := g.Messages(ctx, s.ID, loom.MessageQuery{}); err != nil {
				t.Fatal(err)
			}
		}
		hits, err := g.Search(ctx, loom.SearchQuery{Text: q, UserID: "u", Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) < 2 {
			t.Errorf("%q: %d hits", q, len(hits))
		}
		if v := echoLeaks(jsonOf(t, hits)); len(v) > 0 {
			t.Errorf("search %q shows %q: %s", q, v, jsonOf(t, hits))
		}
		if strings.Contains(jsonOf(t, hits), "\uE000") {
			t.Errorf("search %q shows the gate's mark", q)
		}
	}
	// The same search on the store shows them: the test can fail.
	if hits, _ := st.Search(ctx, loom.SearchQuery{Text: "call", UserID: "u"}); len(echoLeaks(jsonOf(t, hits))) == 0 {
		t.Errorf("the store's own search shows no secret: %s", jsonOf(t, hits))
	}
}

// What is repeated is only a value long and random enough to be that
// secret: never a placeholder, a word, a value the allow-list names or
// one too short.
func TestEchoesKeepOnlyRandomValues(t *testing.T) {
	allow, err := secrets.New(secrets.Config{AllowIDs: []string{secrets.ValueID("Zq8mN3kL9xT2vB7wR4yV")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		d     *secrets.Detector
		found string // a text the detector finds the value in
		v     string
		echo  bool
	}{
		{secrets.Default(), "Authorization: Bearer f8XdQA1sLm29Zq7RtY5wPk3N", "f8XdQA1sLm29Zq7RtY5wPk3N", true},
		{secrets.Default(), "DATABASE_URL=mysql://app:pa&ss<9>x2QkR7mZ4pLw@db:3306/shop", "pa&ss<9>x2QkR7mZ4pLw", true},
		{secrets.Default(), "DATABASE_URL=mysql://app:x9Kq2Lm7@db:3306/shop", "x9Kq2Lm7", false},
		{secrets.Default(), "DATABASE_URL=mysql://app:monkeybusinessmonkey@db:3306/shop", "monkeybusinessmonkey", false},
		{secrets.Default(), `api_key: "Zq8mN3kL9xT2vB7wR4yV"`, "Zq8mN3kL9xT2vB7wR4yV", true},
		{allow, `api_key: "Zq8mN3kL9xT2vB7wR4yV"`, "Zq8mN3kL9xT2vB7wR4yV", false},
	} {
		g := tc.d.Gate(nil)
		if red := g.Text(tc.found); strings.Contains(red, tc.v) == (tc.d != allow) {
			t.Errorf("%q: the detector reads it as %q", tc.found, red)
		}
		after := g.Text("later: " + tc.v + " again")
		if got := !strings.Contains(after, tc.v); got != tc.echo {
			t.Errorf("%q found in %q: repeated in a later read it reads %q; want it replaced: %v", tc.v, tc.found, after, tc.echo)
		}
	}
}
