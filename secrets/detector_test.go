package secrets_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
)

// Every kind of fake secret is found by its own rule, and redacting its
// text leaves none of the secret and the marker naming the rule.
func TestEveryKindFoundByItsRule(t *testing.T) {
	d := secrets.Default()
	g := secretstest.New(1)
	for _, kind := range secretstest.Kinds {
		for i := range 5 {
			s := g.Secret(kind)
			red, n := d.Redact(s.Text)
			if n == 0 || strings.Contains(red, s.Value) {
				t.Errorf("%s #%d: not redacted: %q -> %q", kind, i, s.Text, red)
				continue
			}
			if !strings.Contains(red, secrets.Marker(kind)) {
				t.Errorf("%s #%d: redacted as another rule: %q", kind, i, red)
			}
		}
	}
}

// Redacting twice changes nothing more: markers are never found again.
func TestRedactIsIdempotent(t *testing.T) {
	d := secrets.Default()
	g := secretstest.New(2)
	for _, kind := range secretstest.Kinds {
		once, _ := d.Redact(g.Secret(kind).Text)
		if twice, n := d.Redact(once); n != 0 || twice != once {
			t.Errorf("%s: second redaction changed %q into %q", kind, once, twice)
		}
	}
}

func TestCleanTextIsLeftAlone(t *testing.T) {
	d := secrets.Default()
	for _, s := range []string{
		`password := os.Getenv("DB_PASSWORD")`,
		`token, err := auth.Token(ctx)`,
		`export API_KEY=${API_KEY}`,
		`DATABASE_URL=postgres://user:password@localhost/db`,
		`Authorization: Bearer $TOKEN`,
		`aws_access_key_id = AKIAIOSFODNN7EXAMPLE`,
		`const secretKey = "changeme-in-production"`,
		`commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904`,
		`id: "0196a3b2-7c1d-7e4f-9a0b-1c2d3e4f5a6b"`,
		`sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"`,
		`import "github.com/modelcontextprotocol/go-sdk/mcp"`,
	} {
		if f := d.Find(s); len(f) > 0 {
			t.Errorf("found %s in clean text %q", f[0].RuleID, s)
		}
	}
}

func TestConfigRulesAndAllowList(t *testing.T) {
	d, err := secrets.New(secrets.Config{
		Rules: []secrets.Rule{{ID: "acme-token", Regex: `\bacme_[a-z0-9]{24}\b`, Keywords: []string{"acme_"}}},
		Allow: []string{`^ghp_0{36}$`},
	})
	if err != nil {
		t.Fatal(err)
	}
	red, n := d.Redact("use acme_q8x2m4k9z1v7b3n5r6t0y2w4 and ghp_" + strings.Repeat("0", 36))
	if n != 1 || !strings.Contains(red, "[REDACTED:acme-token]") || !strings.Contains(red, "ghp_000") {
		t.Errorf("custom rule and allow-list: %d %q", n, red)
	}
	for _, bad := range []secrets.Config{
		{Rules: []secrets.Rule{{ID: "x", Regex: `(`}}},
		{Rules: []secrets.Rule{{ID: "bad id!", Regex: `x`}}},
		{Allow: []string{`[`}},
		{Disable: []string{"no-such-rule"}},
	} {
		if _, err := secrets.New(bad); err == nil {
			t.Errorf("config %+v: no error", bad)
		}
	}
}

// A scan's hint of a secret in a tool's output is of the value as read,
// not of its JSON escapes (p4\u0026q).
func TestScanHintDecoded(t *testing.T) {
	d := secrets.Default()
	out, _ := json.Marshal("DB_PASSWORD=p4&qXz9<Lm2>Rt7\n")
	m := &loom.Message{ID: "m", Parts: []loom.Part{{ID: "p", Type: loom.PartTool, Name: "bash", CallID: "c", Status: loom.ToolCompleted, Output: out}}}
	places := d.ScanMessage(m)
	if len(places) != 1 || places[0].Hint != "p4…t7" {
		t.Fatalf("places %+v, want one with the hint p4…t7", places)
	}
}

func TestHintNeverShowsMoreThanEightCharacters(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_…6789"},
		{"abcdefghijklm", "ab…lm"},
		{"K9x!mQ2z", "K…z"},
		{"hunter2", "…(7)"},
	} {
		if got := secrets.Hint(c.in); got != c.want {
			t.Errorf("Hint(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzRedact(f *testing.F) {
	g := secretstest.New(3)
	for _, k := range secretstest.Kinds {
		f.Add(g.Secret(k).Text)
	}
	f.Add("")
	f.Add("-----BEGIN PRIVATE KEY-----\\n")
	d := secrets.Default()
	f.Fuzz(func(t *testing.T, s string) {
		found := d.Find(s)
		for i, x := range found {
			if x.Start < 0 || x.End > len(s) || x.Start >= x.End || i > 0 && x.Start < found[i-1].End {
				t.Fatalf("bad finding %+v in %q", x, s)
			}
		}
		red, n := d.Redact(s)
		if n != len(found) {
			t.Fatalf("Redact replaced %d, Find found %d", n, len(found))
		}
		for _, x := range found {
			if v := s[x.Start:x.End]; len(v) >= 8 && strings.Contains(red, v) && !strings.Contains(secrets.Marker(x.RuleID), v) {
				t.Fatalf("secret %q still in %q", v, red)
			}
		}
	})
}

// A tool part's JSON stays JSON when its secrets are redacted, whatever
// it holds.
func FuzzRedactPart(f *testing.F) {
	g := secretstest.New(4)
	for _, k := range secretstest.Kinds {
		f.Add(g.Secret(k).Text)
	}
	f.Add(`{"a":"-----BEGIN PRIVATE KEY-----\nMIIE` + strings.Repeat("A", 40) + `\n-----END PRIVATE KEY-----"}`)
	d := secrets.Default()
	f.Fuzz(func(t *testing.T, s string) {
		out, _ := json.Marshal(s)
		p := loom.Part{ID: "p", Type: loom.PartTool, CallID: "c", Name: "bash", Status: loom.ToolCompleted, Output: out, Text: s}
		if json.Valid([]byte(s)) {
			p.Input = json.RawMessage(s)
		}
		red, _ := d.RedactPart(p)
		if err := red.Validate(); err != nil {
			t.Fatalf("redacted part of %q: %v", s, err)
		}
	})
}
