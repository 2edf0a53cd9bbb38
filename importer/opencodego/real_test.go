package opencodego

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"

	_ "modernc.org/sqlite"

	"github.com/loomhq/loom/importer/importertest"
)

// TestRealOpenCodeGo builds OpenCode (agentclitest.OpenCodeGo) and runs
// it against a fake model on the Chat Completions API (its local
// provider at $LOCAL_ENDPOINT, a model of ~/.opencode.json), no
// account, with `opencode -p PROMPT -q` in two projects: a greeting,
// and a turn that reads a file with its view tool. With
// LOOM_TEST_GO_AGENTS_WRITE=1 the databases are kept as testdata/real,
// the home directory renamed /home/u. It runs only with
// LOOM_TEST_GO_AGENTS=1.
func TestRealOpenCodeGo(t *testing.T) {
	bin := agentclitest.GoInstall(t, agentclitest.OpenCodeGo)
	home := t.TempDir()
	work, other, notes := agentclitest.Projects(t, home)
	model := `{"model": "local.fake-model", "maxTokens": 1000}`
	agentclitest.WriteConfig(t, filepath.Join(home, ".opencode.json"), `{"agents": {"coder": `+model+`, "task": `+model+`, "title": `+model+`}}`, 0o644)
	srv := agentclitest.NewChatServer(t)
	srv.Respond(func(req providertest.Request) (openaitest.Reply, bool) {
		last := agentclitest.LastMessage(req)
		content := agentclitest.Strings(req.Raw)
		if strings.Contains(content, "generate a short title") {
			// The title of a new session.
			return openaitest.Reply{Text: "A short title", Usage: &openaitest.Usage{PromptTokens: 50, CompletionTokens: 3}}, true
		}
		switch {
		case last["role"] == "tool":
			return openaitest.Reply{Text: "It says alpha and beta.", Usage: &openaitest.Usage{PromptTokens: 1400, CompletionTokens: 9}}, true
		case strings.Contains(content, "What is in notes.txt?"):
			return openaitest.Reply{Reasoning: "The user wants the file.", ToolCalls: []providertest.ToolCall{{Name: "view", Args: `{"file_path":"` + notes + `"}`}}, Usage: &openaitest.Usage{PromptTokens: 1300, CompletionTokens: 40}}, true
		}
		return openaitest.Reply{Text: "Hello there.", Usage: &openaitest.Usage{PromptTokens: 1000, CachedTokens: 200, CompletionTokens: 15}}, true
	})
	env := agentclitest.Env(home, "LOCAL_ENDPOINT="+srv.BaseURL())
	run := func(dir, prompt string) {
		t.Helper()
		t.Log(agentclitest.Run(t, 2*time.Minute, dir, env, bin, "-p", prompt, "-q"))
	}
	run(work, "Say hello in one line.")
	run(other, "What is in notes.txt?")
	checkRead(t, home)
	if os.Getenv("LOOM_TEST_GO_AGENTS_WRITE") == "1" {
		for _, d := range []string{"work", "other"} {
			keepDB(t, filepath.Join(home, d, dataDir, dbName), filepath.Join("testdata", "real", d, dataDir, dbName), home, "/home/u")
		}
	}
}

// keepDB writes the database at src, its write-ahead log included, to
// dst as one file, with every mention of home in its messages written
// as as.
func keepDB(t *testing.T, src, dst, home, as string) {
	t.Helper()
	importertest.MkdirAll(t, filepath.Dir(dst))
	os.Remove(dst)
	db, err := sql.Open("sqlite", "file:"+src)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("VACUUM INTO ?", dst); err != nil {
		t.Fatal(err)
	}
	out, err := sql.Open("sqlite", "file:"+dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	for _, q := range []string{"UPDATE messages SET parts = replace(parts, ?, ?)", "VACUUM"} {
		args := []any{home, as}
		if q == "VACUUM" {
			args = nil
		}
		if _, err := out.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
}
