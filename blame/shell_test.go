package blame

import (
	"strings"
	"testing"
	"time"
)

// TestBlameOwnShellEdits: an agent's own perl -pi and sed -i (two
// expressions) on lines its Write put in, before any commit, made its
// lines, not a human's changes of them; a python3 -c that names the
// file afterwards takes only the line it wrote.
func TestBlameOwnShellEdits(t *testing.T) {
	r := newRepo(t)
	r.write("README.md", "# tools\n")
	r.commit("start")
	content := "import os\n\nDEBUG_MODE_ENABLED = True\nREQUEST_TIMEOUT_SECONDS = 10\nlegacy_client_name = os.environ['CLIENT']\n\ndef main():\n    print(legacy_client_name, REQUEST_TIMEOUT_SECONDS)\n"
	r.agentWrite("s1", "tool.py", content)
	bash := func(cmd string, change func(string) string) {
		r.agent("s1", "claude-code", "Bash", map[string]any{"command": cmd}, func() { r.write("tool.py", change(r.read("tool.py"))) })
	}
	bash("perl -pi -e 's/DEBUG_MODE_ENABLED = True/DEBUG_MODE_ENABLED = False/' tool.py", func(s string) string {
		return strings.Replace(s, "DEBUG_MODE_ENABLED = True", "DEBUG_MODE_ENABLED = False", 1)
	})
	bash("sed -i -e 's/REQUEST_TIMEOUT_SECONDS = 10/REQUEST_TIMEOUT_SECONDS = 30/' -e 's/legacy_client_name = /client_name_from_env = /' tool.py", func(s string) string {
		s = strings.Replace(s, "REQUEST_TIMEOUT_SECONDS = 10", "REQUEST_TIMEOUT_SECONDS = 30", 1)
		return strings.Replace(s, "legacy_client_name = ", "client_name_from_env = ", 1)
	})
	bash(`python3 -c "open('tool.py', 'a').write('main()\n')"`, func(s string) string { return s + "main()\n" })
	r.commit("tool")
	res := r.blame("tool.py")
	r.want(res, map[string]string{
		"import os": "agent:s1", "DEBUG_MODE_ENABLED": "agent:s1", "REQUEST_TIMEOUT_SECONDS = 30": "agent:s1",
		"client_name_from_env": "agent:s1", "main()": "agent:s1",
	})
	for _, l := range res.Lines {
		want := ""
		switch {
		case strings.HasPrefix(l.Text, "DEBUG_MODE") || strings.HasPrefix(l.Text, "REQUEST_") || strings.HasPrefix(l.Text, "client_name"):
			want = EvidenceShell
		case l.Text == "main()":
			want = EvidenceProgram
		}
		if l.Evidence != want {
			t.Errorf("line %d %q: evidence %q (%s), want %q", l.N, l.Text, l.Evidence, l.Tool, want)
		}
	}
}

// TestBlamePrintfAppended: a line an agent's printf or echo appended
// to a file (its own words, no expansion) is the agent's, not unknown;
// one whose text came from an expansion stays unknown.
func TestBlamePrintfAppended(t *testing.T) {
	r := newRepo(t)
	r.write("config.env", "APP_NAME=ledger\n")
	r.commit("start")
	bash := func(cmd, add string) {
		r.agent("s1", "claude-code", "Bash", map[string]any{"command": cmd}, func() { r.write("config.env", r.read("config.env")+add) })
	}
	bash(`printf 'LOG_LEVEL=debug\nLOG_FORMAT=json\n' >> config.env`, "LOG_LEVEL=debug\nLOG_FORMAT=json\n")
	bash(`echo "CACHE_TTL_SECONDS=300" >> config.env`, "CACHE_TTL_SECONDS=300\n")
	r.commit("config")
	r.want(r.blame("config.env"), map[string]string{"APP_NAME": "human", "LOG_LEVEL": "agent:s1", "LOG_FORMAT": "agent:s1", "CACHE_TTL": "agent:s1"})
	bash(`echo "BUILD_HOST=$(hostname)" >> config.env`, "BUILD_HOST=builder7\n")
	r.commit("host")
	r.want(r.blame("config.env"), map[string]string{"APP_NAME": "human", "LOG_LEVEL": "agent:s1", "BUILD_HOST": "unknown"})
}

// TestBlameSedOfManyFiles: one sed -i or perl -pi of several files —
// named one by one, by a glob, fed by grep -l through xargs, or by
// find -exec — made the lines it gives in each of them, not the last
// named alone; a line no substitution gives stays a human's.
func TestBlameSedOfManyFiles(t *testing.T) {
	r := newRepo(t)
	files := []string{"users/a.go", "users/b.go", "orders/c.go", "orders/d.go", "billing/e.go", "billing/f.go", "jobs/g.go", "jobs/h.go"}
	for _, f := range files {
		r.write(f, "package x\n\n// keepHumanComment stays as it was.\nfunc run() { fetchUser(ctx, id); legacyAudit(id) }\n")
	}
	r.commit("start")
	r.tick(time.Hour)
	sub := func(fs []string, from, to string) func() {
		return func() {
			for _, f := range fs {
				r.write(f, strings.ReplaceAll(r.read(f), from, to))
			}
		}
	}
	bash := func(cmd string, apply func()) {
		r.agent("s1", "claude-code", "Bash", map[string]any{"command": cmd}, apply)
	}
	bash("sed -i 's/fetchUser/loadUser/g' users/a.go users/b.go", sub(files[0:2], "fetchUser", "loadUser"))
	bash("perl -pi -e 's/fetchUser/readUser/g' orders/*.go", sub(files[2:4], "fetchUser", "readUser"))
	bash("grep -rl fetchUser billing | xargs sed -i 's/fetchUser/getUser/g'", sub(files[4:6], "fetchUser", "getUser"))
	bash("find jobs -name '*.go' -exec sed -i 's/legacyAudit/auditTrail/' {} +", sub(files[6:8], "legacyAudit", "auditTrail"))
	r.commit("rename")
	for _, f := range files {
		res := r.blame(f)
		r.want(res, map[string]string{"keepHumanComment": "human", "func run": "agent:s1", "package x": "human"})
		for _, l := range res.Lines {
			if strings.HasPrefix(l.Text, "func run") && l.Evidence != EvidenceShell {
				t.Errorf("%s:%d: evidence %q, want %q", f, l.N, l.Evidence, EvidenceShell)
			}
		}
	}
}

// TestBlameFormatterRun: the agent's own formatter run (prettier
// --write, gofmt -w) over its files: lines it only re-indented are
// still the agent's, lines it rewrote otherwise (quotes) are unknown —
// never a human's — and a human's line beside them stays the human's.
func TestBlameFormatterRun(t *testing.T) {
	r := newRepo(t)
	r.write("src/human.js", "export const owner = 'the humans';\n")
	r.commit("start")
	r.tick(time.Hour)
	js := "export function greetVisitor(name) {\n  return 'hello ' + name;\n}\n\nexport const visitorLimit = computeVisitorLimit(40);\n"
	r.agentWrite("s1", "src/app.js", js)
	r.agent("s1", "claude-code", "Bash", map[string]any{"command": "npx prettier --write src/"}, func() {
		r.write("src/app.js", "export function greetVisitor(name) {\n    return \"hello \" + name;\n}\n\nexport const visitorLimit = computeVisitorLimit(40);\n")
	})
	goSrc := "package api\n\nfunc Handler() int {\nreturn handlerStatusCode(200)\n}\n"
	r.agentWrite("s1", "api/handler.go", goSrc)
	r.agent("s1", "claude-code", "Bash", map[string]any{"command": "gofmt -w api/handler.go"}, func() {
		r.write("api/handler.go", "package api\n\nfunc Handler() int {\n\treturn handlerStatusCode(200)\n}\n")
	})
	r.commit("app")
	r.want(r.blame("src/app.js"), map[string]string{"greetVisitor": "agent:s1", "visitorLimit": "agent:s1", "hello": "unknown"})
	r.want(r.blame("api/handler.go"), map[string]string{"func Handler": "agent:s1", "handlerStatusCode": "agent:s1"})
	r.want(r.blame("src/human.js"), map[string]string{"owner": "human"})
}
