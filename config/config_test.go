package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

func TestLoadFileThenEnvironment(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte(`provider = "anthropic"
model = "claude-sonnet-4-5"
compact_after = 12
[anthropic]
api_key = "from-file"
[openai]
base_url = "http://127.0.0.1:8080/v1"
`), 0o600)
	env := map[string]string{"ANTHROPIC_API_KEY": "from-env", "LOOM_MODEL": "claude-haiku-4-5"}
	c, err := Load(path, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider != "anthropic" || c.Model != "claude-haiku-4-5" || c.Anthropic.APIKey != "from-env" || c.OpenAI.BaseURL != "http://127.0.0.1:8080/v1" || c.CompactAfter != 12 {
		t.Fatalf("config = %+v", c)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if c, err := Load(filepath.Join(dir, "missing.toml"), func(string) string { return "" }); err != nil || c.Provider != "" {
		t.Fatalf("missing file: %+v, %v", c, err)
	}
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("provider = \n"), 0o600)
	if _, err := Load(bad, nil); loom.ErrorCode(err) != loom.EINVALID {
		t.Fatalf("bad toml: %v", err)
	}
	os.WriteFile(bad, []byte("modle = \"x\"\n"), 0o600)
	if _, err := Load(bad, nil); loom.ErrorCode(err) != loom.EINVALID {
		t.Fatalf("unknown key accepted: %v", err)
	}
	if _, err := Load("", func(k string) string {
		if k == "LOOM_PROVIDER" {
			return "gemini"
		}
		return ""
	}); loom.ErrorCode(err) != loom.EINVALID {
		t.Fatalf("unknown provider accepted: %v", err)
	}
}

func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "reviewer.toml"), []byte("prompt = \"You review code.\"\nmodel = \"gpt-4.1\"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "coach.md"), []byte("You coach."), 0o600)
	p, err := LoadProfile(dir, "reviewer")
	if err != nil || p.Prompt != "You review code." || p.Model != "gpt-4.1" {
		t.Fatalf("toml profile = %+v, %v", p, err)
	}
	p, err = LoadProfile(dir, "coach")
	if err != nil || p.Prompt != "You coach." || p.Model != "" {
		t.Fatalf("md profile = %+v, %v", p, err)
	}
	if p, err := LoadProfile(dir, ""); err != nil || p.Name != "default" {
		t.Fatalf("default profile = %+v, %v", p, err)
	}
	if _, err := LoadProfile(dir, "nope"); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("missing profile: %v", err)
	}
	if _, err := LoadProfile(dir, "../etc"); loom.ErrorCode(err) != loom.EINVALID {
		t.Fatalf("path in profile name: %v", err)
	}
	if got := Profiles(dir); len(got) != 2 || got[0] != "coach" || got[1] != "reviewer" {
		t.Fatalf("profiles = %v", got)
	}
}

// The time limits of a turn are Go durations, in config.toml (quoted)
// or the environment, which wins; unset, they are zero (the agent's
// defaults).
func TestTimeLimits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte("stream_idle_timeout = \"90s\"\nturn_timeout = \"20m\"\n"), 0o600)
	c, err := Load(path, func(string) string { return "" })
	if err != nil || c.StreamIdleTimeout != 90*time.Second || c.TurnTimeout != 20*time.Minute {
		t.Fatalf("from the file: %+v, %v", c, err)
	}
	env := map[string]string{"LOOM_STREAM_IDLE_TIMEOUT": "300ms", "LOOM_TURN_TIMEOUT": "2s"}
	c, err = Load(path, func(k string) string { return env[k] })
	if err != nil || c.StreamIdleTimeout != 300*time.Millisecond || c.TurnTimeout != 2*time.Second {
		t.Fatalf("from the environment: %+v, %v", c, err)
	}
	if c, err := Load("", func(string) string { return "" }); err != nil || c.StreamIdleTimeout != 0 || c.TurnTimeout != 0 {
		t.Fatalf("unset: %+v, %v", c, err)
	}
	for _, tc := range []struct {
		file string
		env  map[string]string
		want string
	}{
		{file: "stream_idle_timeout = 60\n", want: `stream_idle_timeout must be a duration in quotes, such as "60s"`},
		{file: "turn_timeout = \"ten minutes\"\n", want: "turn_timeout"},
		{file: "turn_timeout = \"-5m\"\n", want: "turn_timeout is -5m0s: a time limit cannot be negative"},
		{env: map[string]string{"LOOM_TURN_TIMEOUT": "5"}, want: `LOOM_TURN_TIMEOUT="5" is not a duration`},
		{env: map[string]string{"LOOM_STREAM_IDLE_TIMEOUT": "-1s"}, want: "stream_idle_timeout is -1s"},
	} {
		os.WriteFile(path, []byte(tc.file), 0o600)
		_, err := Load(path, func(k string) string { return tc.env[k] })
		if loom.ErrorCode(err) != loom.EINVALID || !strings.Contains(loom.ErrorMessage(err), tc.want) {
			t.Errorf("%q %v: %v, want an error saying %q", tc.file, tc.env, err, tc.want)
		}
	}
}

func TestPrices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(`
[prices."anthropic/claude-sonnet-4-5"]
input = 1
output = 2
cache_read = 0.1
cache_write = 1.25
long_input = 2
long_output = 4

[prices."qwen3-coder"]
input = 0.5
output = 1.5
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	tb := c.PriceTable()
	u := loom.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}
	if cost, ok := tb.Cost("anthropic", "claude-sonnet-4-5-20250929", u, false); !ok || cost != 3 {
		t.Errorf("overridden: %v, %v; want 3", cost, ok)
	}
	if cost, ok := tb.Cost("anthropic", "claude-sonnet-4-5", u, true); !ok || cost != 6 {
		t.Errorf("overridden long context: %v, %v; want 6", cost, ok)
	}
	if cost, ok := tb.Cost("openai", "qwen3-coder", u, false); !ok || cost != 2 {
		t.Errorf("added under any provider: %v, %v; want 2", cost, ok)
	}
	// A price without cache prices bills cached tokens as input, never
	// as free: 0.5 for each of the 2M cache tokens.
	cached := loom.Usage{CacheReadTokens: 1_000_000, CacheWriteTokens: 1_000_000}
	if cost, ok := tb.Cost("openai", "qwen3-coder", cached, false); !ok || cost != 1 {
		t.Errorf("cache tokens of a price without cache prices: %v, %v; want 1", cost, ok)
	}
	if cost, ok := tb.Cost("openai", "gpt-4o", u, false); !ok || cost != 12.5 {
		t.Errorf("bundled: %v, %v; want 12.5", cost, ok)
	}
	if err := os.WriteFile(path, []byte("[prices.m]\ninput = -1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, func(string) string { return "" }); err == nil {
		t.Error("a negative price was accepted")
	}
}

// [secrets] adds rules and an allow-list to the detector; [mcp] redact
// turns the MCP tools' redaction off; a bad rule is one clear error.
func TestSecretsSettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte(`[mcp]
redact = false
[secrets]
redact_on_write = true
allow = ['^ghp_0+$']
disable = ["high-entropy-assignment"]
[[secrets.rules]]
id = "acme-token"
regex = '\bacme_[a-z0-9]{24}\b'
keywords = ["acme_"]
`), 0o600)
	c, err := Load(path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if c.MCP.Redacts() || !c.Secrets.RedactOnWrite {
		t.Fatalf("settings %+v %+v", c.MCP, c.Secrets)
	}
	d, err := c.Secrets.Detector()
	if err != nil {
		t.Fatal(err)
	}
	red, n := d.Redact("acme_q8x2m4k9z1v7b3n5r6t0y2w4 ghp_" + strings.Repeat("0", 36) + ` x = "Zq8vT1kLp3Nw7Rb2Xc9Ym4Hd6Fs0Gj5K"`)
	if n != 1 || !strings.Contains(red, "[REDACTED:acme-token]") {
		t.Errorf("custom rule, allow-list and disable: %d, %q", n, red)
	}
	if (&Config{}).MCP.Redacts() != true {
		t.Error("MCP tools do not redact by default")
	}
	os.WriteFile(path, []byte("[[secrets.rules]]\nid = \"bad\"\nregex = \"(\"\n"), 0o600)
	c, err = Load(path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Secrets.Detector(); err == nil || !strings.Contains(err.Error(), "rule bad") {
		t.Errorf("a bad rule: %v", err)
	}
}

func TestLoadEmbeddings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte(`[embeddings]
url = "http://gpu:8000/v1"
model = "bge-m3"
api_key_env = "EMBED_KEY"
enabled = true
`), 0o600)
	env := map[string]string{"LOOM_EMBEDDINGS_MODEL": "nomic-embed-text"}
	c, err := Load(path, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	e := c.Embeddings
	if e.URL != "http://gpu:8000/v1" || e.Model != "nomic-embed-text" || e.APIKeyEnv != "EMBED_KEY" || e.Enabled == nil || !*e.Enabled {
		t.Fatalf("embeddings = %+v", e)
	}
}

// [summaries]: off by default with a quiet time of 30 minutes; quiet is
// a duration in quotes, LOOM_SUMMARIES_QUIET overrides it, and an
// unknown provider is refused.
func TestSummariesSettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	none := func(string) string { return "" }
	c, err := Load(path, none)
	if err != nil || c.Summaries.Enabled || c.Summaries.QuietAfter() != 30*time.Minute {
		t.Fatalf("defaults: %+v, %v", c.Summaries, err)
	}
	os.WriteFile(path, []byte("[summaries]\nenabled = true\nquiet = \"2h\"\nprovider = \"Anthropic\"\nmodel = \"claude-haiku-4-5\"\nexclude = [\"secret\", \"~/clients\"]\n"), 0o600)
	c, err = Load(path, none)
	if err != nil || !c.Summaries.Enabled || c.Summaries.QuietAfter() != 2*time.Hour || c.Summaries.Provider != "anthropic" || len(c.Summaries.Exclude) != 2 {
		t.Fatalf("from the file: %+v, %v", c.Summaries, err)
	}
	c, err = Load(path, func(k string) string { return map[string]string{"LOOM_SUMMARIES_QUIET": "10m"}[k] })
	if err != nil || c.Summaries.QuietAfter() != 10*time.Minute {
		t.Fatalf("LOOM_SUMMARIES_QUIET: %+v, %v", c.Summaries, err)
	}
	for text, says := range map[string]string{
		"[summaries]\nquiet = 30\n":           "summaries.quiet must be a duration in quotes",
		"[summaries]\nprovider = \"other\"\n": `unknown provider "other"`,
	} {
		os.WriteFile(path, []byte(text), 0o600)
		if _, err := Load(path, none); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: %v, want %q", text, err, says)
		}
	}
}

// [recall] warm is on unless config.toml or LOOM_RECALL_WARM says
// false; LOOM_RECALL_WARM overrides the file, and a value that is no
// boolean is refused.
func TestRecallWarm(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	none := func(string) string { return "" }
	if c, err := Load(path, none); err != nil || !c.Recall.WarmOn() {
		t.Fatalf("no setting: %+v, %v", c, err)
	}
	os.WriteFile(path, []byte("[recall]\nwarm = false\n"), 0o600)
	if c, err := Load(path, none); err != nil || c.Recall.WarmOn() {
		t.Fatalf("warm = false: %+v, %v", c, err)
	}
	env := func(v string) func(string) string {
		return func(k string) string { return map[string]string{"LOOM_RECALL_WARM": v}[k] }
	}
	if c, err := Load(path, env("true")); err != nil || !c.Recall.WarmOn() {
		t.Fatalf("LOOM_RECALL_WARM=true over warm = false: %+v, %v", c, err)
	}
	if _, err := Load(path, env("sometimes")); err == nil || !strings.Contains(err.Error(), "LOOM_RECALL_WARM") {
		t.Fatalf("LOOM_RECALL_WARM=sometimes: %v", err)
	}
}

// LOOM_REDACT_ON_WRITE overrides [secrets] redact_on_write either way,
// and a value that is no boolean is refused.
func TestRedactOnWriteFromEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	env := func(v string) func(string) string {
		return func(k string) string { return map[string]string{"LOOM_REDACT_ON_WRITE": v}[k] }
	}
	if c, err := Load(path, env("")); err != nil || c.Secrets.RedactOnWrite {
		t.Fatalf("no setting: %+v, %v", c.Secrets, err)
	}
	if c, err := Load(path, env("true")); err != nil || !c.Secrets.RedactOnWrite {
		t.Fatalf("LOOM_REDACT_ON_WRITE=true: %+v, %v", c.Secrets, err)
	}
	os.WriteFile(path, []byte("[secrets]\nredact_on_write = true\n"), 0o600)
	if c, err := Load(path, env("0")); err != nil || c.Secrets.RedactOnWrite {
		t.Fatalf("LOOM_REDACT_ON_WRITE=0 over redact_on_write = true: %+v, %v", c.Secrets, err)
	}
	if _, err := Load(path, env("maybe")); err == nil || !strings.Contains(err.Error(), "LOOM_REDACT_ON_WRITE") {
		t.Fatalf("LOOM_REDACT_ON_WRITE=maybe: %v", err)
	}
}
