package config

import (
	"os"
	"path/filepath"
	"testing"

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
