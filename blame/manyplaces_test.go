package blame

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBlameEditOfManyPlaces: an edit that replaced every occurrence of
// its old text (Claude Code's Edit with replace_all, Gemini CLI's
// replace with expected_replacements) wrote its new lines at each: all
// of them are its own, none the earlier session's whose lines it
// replaced.
func TestBlameEditOfManyPlaces(t *testing.T) {
	r := newRepo(t)
	block := func(name string) string {
		return "func " + name + "(v int) {\n\tlog.Printf(\"legacy value read: %v\", v)\n\tstore(v)\n}\n"
	}
	content := "package conf\n\n" + block("ReadA") + "\n" + block("ReadB") + "\n" + block("ReadC")
	old := "\tlog.Printf(\"legacy value read: %v\", v)\n"
	for _, f := range []struct{ file, agent, tool string }{
		{"conf/claude.go", "claude-code", "Edit"},
		{"conf/gemini.go", "gemini-cli", "replace"},
	} {
		r.agentWrite("A", f.file, content)
		r.commit("conf " + f.file)
		nw := "\tslog.Info(\"value read from " + f.agent + "\", \"value\", v)\n\tmetrics.Count(\"value_reads_" + f.agent + "\")\n"
		in := map[string]any{"file_path": filepath.Join(r.dir, f.file), "old_string": old, "new_string": nw}
		if f.agent == "claude-code" {
			in["replace_all"] = true
		} else {
			in["expected_replacements"] = 3
		}
		cur := r.read(f.file)
		r.agent("B-"+f.agent, f.agent, f.tool, in, func() { r.write(f.file, strings.ReplaceAll(cur, old, nw)) })
		r.commit("slog " + f.file)
		res := r.blame(f.file)
		n := 0
		for _, l := range res.Lines {
			if strings.Contains(l.Text, "slog.Info") || strings.Contains(l.Text, "metrics.Count") {
				n++
			}
		}
		if n != 6 {
			t.Fatalf("%s has %d of the edit's lines, want 6", f.file, n)
		}
		r.want(res, map[string]string{"slog.Info": "agent:B-" + f.agent, "metrics.Count": "agent:B-" + f.agent, "func ReadB": "agent:A", "func ReadC": "agent:A"})
	}
}

// TestBlameEditOfManyPlacesEndingTheFile: an edit of every occurrence
// of a text whose last place ends the file (the text's own final line
// end is the file's) wrote its lines there too, after the session's
// own Write and before any commit.
func TestBlameEditOfManyPlacesEndingTheFile(t *testing.T) {
	r := newRepo(t)
	r.write("README.md", "# conf\n")
	r.commit("start")
	old := "\treturn legacyDefaultValue(v)\n}\n"
	content := "package conf\n\nfunc A(v int) int {\n" + old + "\nfunc B(v int) int {\n" + old + "\nfunc C(v int) int {\n" + old
	for _, f := range []struct{ file, agent, tool string }{
		{"conf/claude.go", "claude-code", "Edit"},
		{"conf/gemini.go", "gemini-cli", "replace"},
	} {
		r.agentWrite("A-"+f.agent, f.file, content)
		nw := "\treturn configuredValueFor" + strings.ReplaceAll(f.agent, "-", "") + "(v)\n}\n"
		in := map[string]any{"file_path": filepath.Join(r.dir, f.file), "old_string": old, "new_string": nw}
		if f.agent == "claude-code" {
			in["replace_all"] = true
		} else {
			in["expected_replacements"] = 3
		}
		cur := r.read(f.file)
		r.agent("A-"+f.agent, f.agent, f.tool, in, func() { r.write(f.file, strings.ReplaceAll(cur, old, nw)) })
	}
	r.commit("conf")
	for _, f := range []string{"conf/claude.go", "conf/gemini.go"} {
		res := r.blame(f)
		n := 0
		for _, l := range res.Lines {
			if strings.Contains(l.Text, "configuredValueFor") {
				n++
				if l.Kind != Agent {
					t.Errorf("%s:%d %q is %s, want the agent's", f, l.N, l.Text, l.Kind)
				}
			}
		}
		if n != 3 {
			t.Fatalf("%s has %d of the edit's lines, want 3", f, n)
		}
	}
}
