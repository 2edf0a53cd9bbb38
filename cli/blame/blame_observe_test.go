package blame_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/providertest"
)

// The real agents with loom's hooks installed (loom hooks install) run
// a python script that rewrites two files by a rule of its own, then
// one that appends a line and fails: their command lines name no file,
// so that reading them credits nothing; the hooks around the shell
// calls (after a failed one too) saw what they changed, and loom blame
// credits those lines, and those alone, to the agent's session.

func TestBlameRealClaudeCodeObserved(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx, p, a := startClaudeCode(t)
	observedScenario(t, fx, p, a)
}

func TestBlameRealGeminiObserved(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx, p, a := startGemini(t)
	observedScenario(t, fx, p, a)
}

const regenPy = `import pathlib, re
limits = pathlib.Path('config/limits.txt')
limits.write_text(re.sub(r'max_connections (\d+)', lambda m: 'max_connections %d' % (int(m.group(1)) * 4), limits.read_text()))
for p in pathlib.Path('src').glob('*.py'):
    p.write_text(p.read_text().replace('fetch_user_record', 'load_user_record'))
`

func observedScenario(t *testing.T, fx *clitest.Fixture, p *plans, a realAgent) {
	t.Helper()
	dir, git := repoDir(t, fx)
	files := map[string]string{
		"config/limits.txt": "max_connections 100\nidle_timeout 30\nlog_level info\n",
		"src/names.py":      "def first():\n    return fetch_user_record(1)\n\n\ndef second():\n    return 2\n",
		"tools/regen.py":    regenPy,
		"tools/stamp.py":    "import pathlib\np = pathlib.Path('config/limits.txt')\np.write_text(p.read_text() + 'stamp_generation 7\\n')\n",
	}
	for rel, text := range files {
		clitest.MustWrite(t, filepath.Join(dir, rel), text)
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "start")
	fx.MustExec(t, "hooks", "install", a.tool)

	p.add("OBSERVE-1", []providertest.ToolCall{a.shell("python3 tools/regen.py"), a.shell("python3 tools/stamp.py; exit 3")})
	a.run(t, dir, "OBSERVE-1: regenerate the names and limits")
	for rel, want := range map[string]string{"config/limits.txt": "max_connections 400\nidle_timeout 30\nlog_level info\nstamp_generation 7\n", "src/names.py": "load_user_record(1)"} {
		if b, _ := os.ReadFile(filepath.Join(dir, rel)); !strings.Contains(string(b), want) {
			t.Fatalf("the agent's script did not run: %s is\n%s", rel, b)
		}
	}
	if !observed(t, fx.Home) {
		t.Fatal("the hooks recorded no shell call: loom blame observe did not run, or saw nothing")
	}
	fx.MustExec(t, "session", "import", "--from", a.tool)

	want := map[string]map[string]string{
		"config/limits.txt": {"max_connections 400": "agent", "idle_timeout": "human", "log_level": "human", "stamp_generation": "agent"},
		"src/names.py":      {"load_user_record": "agent", "def first": "human", "return 2": "human"},
	}
	for rel, who := range want {
		r := fx.RunWith(t, clitest.RunOpts{Dir: dir}, "blame", "--json", rel)
		if r.Code != 0 {
			t.Fatalf("loom blame %s: exit %d: %s", rel, r.Code, r.Stderr)
		}
		var res blame.Result
		if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
			t.Fatal(err)
		}
		for _, l := range res.Lines {
			for part, w := range who {
				if !strings.Contains(l.Text, part) {
					continue
				}
				got := string(l.Kind)
				if l.Kind == blame.Agent && (l.Agent != a.tool || l.SessionID == "") {
					got = "agent of " + l.Agent
				}
				if got != w {
					t.Errorf("%s:%d %q is %s, want %s", rel, l.N, l.Text, got, w)
				}
			}
		}
	}
}

// observed says whether loom blame observe recorded a call under home.
func observed(t *testing.T, home string) bool {
	t.Helper()
	found := false
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		// A work tree's records, in observed/roots/.
		if err == nil && strings.HasSuffix(d.Name(), ".jsonl") && filepath.Base(filepath.Dir(p)) == "roots" &&
			filepath.Base(filepath.Dir(filepath.Dir(p))) == "observed" {
			found = true
		}
		return nil
	})
	return found
}
