package clitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/providertest"
)

// rule answers a request of the fake model whose last message holds
// when (once), with what reply makes of that message.
type rule[R any] struct {
	when  string
	reply func(last string) R
	used  bool
}

// Script is the fake model's rules, tried in order.
type Script[R any] struct {
	mu    sync.Mutex
	rules []*rule[R]
	// Last is the text of a request's last message (or input item).
	Last func(providertest.Request) string
}

func (s *Script[R]) On(when string, reply func(last string) R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, &rule[R]{when: when, reply: reply})
}

func (s *Script[R]) Answer(r R) func(string) R { return func(string) R { return r } }

func (s *Script[R]) Respond(req providertest.Request) (R, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := s.Last(req)
	for _, r := range s.rules {
		if !r.used && strings.Contains(last, r.when) {
			r.used = true
			return r.reply(last), true
		}
	}
	var zero R
	return zero, false
}

// LastJSON is the JSON of the last element of the array body[key].
func LastJSON(req providertest.Request, key string) string {
	arr, _ := req.Body[key].([]any)
	if len(arr) == 0 {
		return ""
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(arr[len(arr)-1])
	return b.String()
}

// SessionIDIn is the first UUID in an agent's output after label.
func SessionIDIn(t *testing.T, out, label string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(label) + `\s*([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q and session id in:\n%s", label, out)
	}
	return m[1]
}

func MustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// StartCodex installs Codex CLI and sets it up in fx's HOME to run
// against a scripted fake model, in a work directory holding notes.txt.
func StartCodex(t *testing.T, fx *Fixture) (bin, dir string, env []string, srv *agentclitest.Scripted, sc *Script[agentclitest.Turn]) {
	t.Helper()
	bin = agentclitest.Install(t, agentclitest.Codex)
	dir = filepath.Join(fx.Home, "work")
	MustWrite(t, filepath.Join(dir, "notes.txt"), "alpha\nbeta\n")
	srv = agentclitest.NewScriptedResponses()
	t.Cleanup(srv.Close)
	sc = &Script[agentclitest.Turn]{Last: func(r providertest.Request) string { return LastJSON(r, "input") }}
	srv.Respond(sc.Respond)
	codexHome := filepath.Join(fx.Home, ".codex")
	WriteSettings(t, filepath.Join(codexHome, "config.toml"), strings.Join([]string{
		`model = "gpt-fake"`, `model_provider = "fake"`, `model_auto_compact_token_limit = 5000`,
		`[model_providers.fake]`, `name = "fake"`, `base_url = "` + srv.URL + `/v1"`, `wire_api = "responses"`,
		`env_key = "FAKE_OPENAI_KEY"`, `request_max_retries = 0`, `stream_max_retries = 0`}, "\n"))
	env = agentclitest.Env(fx.Home, "CODEX_HOME="+codexHome, "FAKE_OPENAI_KEY=sk-fake", "LOOM_HOME="+fx.Home)
	return bin, dir, env, srv, sc
}
