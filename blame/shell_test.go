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
