package blame

import (
	"strings"
	"testing"
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
