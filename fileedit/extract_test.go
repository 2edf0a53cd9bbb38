package fileedit

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/gemini"
)

func call(name, input string) loom.Part {
	return loom.Part{ID: "p1", Type: loom.PartTool, CallID: "c1", Name: name, Status: loom.ToolCompleted, Input: json.RawMessage(input)}
}

// TestExtractAgentsTools: the edit tools of each agent, as their
// importers keep the calls, give the file and the lines each put in.
func TestExtractAgentsTools(t *testing.T) {
	cases := []struct {
		agent, name, input string
		op, path           string
		added              [][]string
	}{
		{"claude-code", "Write", `{"file_path":"/r/a.go","content":"package a\n\nfunc A() {}\n"}`,
			loom.EditWrite, "/r/a.go", [][]string{{"package a", "", "func A() {}"}}},
		{"claude-code", "Edit", `{"file_path":"/r/a.go","old_string":"func A() {}","new_string":"func A() {}\nfunc B() {}"}`,
			loom.EditChange, "/r/a.go", [][]string{{"func B() {}"}}},
		{"claude-code", "MultiEdit", `{"file_path":"/r/a.go","edits":[{"old_string":"x := 1","new_string":"x := 2"},{"old_string":"y","new_string":"y\nz"}]}`,
			loom.EditChange, "/r/a.go", [][]string{{"x := 2"}, {"z"}}},
		{"claude-code", "NotebookEdit", `{"notebook_path":"/r/n.ipynb","cell_id":"x1","new_source":"a = 1\nprint(\"<a>\")","edit_mode":"insert"}`,
			loom.EditChange, "/r/n.ipynb", [][]string{{`"a = 1\n",`, `"print(\"<a>\")"`}, {`"source": "a = 1\nprint(\"<a>\")"`},
				{"},", "{", `"cell_type": "code",`}, {`"source": "a = 1\nprint(\"<a>\")",`, `"metadata": {},`, `"execution_count": null,`, `"outputs": []`}}},
		{"claude-code", "NotebookEdit", `{"notebook_path":"/r/n.ipynb","cell_id":"x1","new_source":"b = 2","edit_mode":"replace"}`,
			loom.EditChange, "/r/n.ipynb", [][]string{{`"b = 2"`}, {`"source": "b = 2"`}, {`"source": "b = 2",`}}},
		{"claude-code", "NotebookEdit", `{"notebook_path":"/r/n.ipynb","cell_id":"x1","new_source":"","edit_mode":"delete"}`,
			loom.EditChange, "/r/n.ipynb", nil},
		{"gemini", "write_file", `{"file_path":"/r/b.py","content":"print(1)\n"}`, loom.EditWrite, "/r/b.py", [][]string{{"print(1)"}}},
		{"gemini", "replace", `{"file_path":"/r/b.py","old_string":"print(1)","new_string":"print(2)","allow_multiple":false}`,
			loom.EditChange, "/r/b.py", [][]string{{"print(2)"}}},
		{"qwen", "edit", `{"file_path":"/r/c.ts","old_string":"a","new_string":"b","replace_all":true}`, loom.EditChange, "/r/c.ts", [][]string{{"b"}}},
		{"pi", "write", `{"path":"src/d.rs","content":"fn main() {}"}`, loom.EditWrite, "/w/src/d.rs", [][]string{{"fn main() {}"}}},
		{"pi", "edit", `{"path":"src/d.rs","oldText":"fn main() {}","newText":"fn main() {\n    run();\n}"}`,
			loom.EditChange, "/w/src/d.rs", [][]string{{"fn main() {", "    run();", "}"}}},
		{"pi", "edit", `{"path":"src/d.rs","edits":[{"oldText":"a","newText":"b"}]}`, loom.EditChange, "/w/src/d.rs", [][]string{{"b"}}},
		{"opencode", "write", `{"filePath":"/r/e.md","content":"# E"}`, loom.EditWrite, "/r/e.md", [][]string{{"# E"}}},
		{"opencode", "edit", `{"filePath":"/r/e.md","oldString":"# E","newString":"# F","replaceAll":false}`, loom.EditChange, "/r/e.md", [][]string{{"# F"}}},
		{"copilot", "create", `{"path":"/r/f.go","file_text":"package f"}`, loom.EditWrite, "/r/f.go", [][]string{{"package f"}}},
		{"copilot", "str_replace", `{"path":"/r/f.go","old_str":"package f","new_str":"package g"}`, loom.EditChange, "/r/f.go", [][]string{{"package g"}}},
		{"openhands", "str_replace_editor", `{"command":"create","path":"/r/g.py","file_text":"x = 1"}`, loom.EditWrite, "/r/g.py", [][]string{{"x = 1"}}},
		{"goose", "developer__text_editor", `{"command":"str_replace","path":"/r/g.py","old_str":"x = 1","new_str":"x = 2"}`,
			loom.EditChange, "/r/g.py", [][]string{{"x = 2"}}},
		{"cline", "replace_in_file", `{"path":"h.js","diff":"------- SEARCH\nlet a = 1;\n=======\nlet a = 2;\n+++++++ REPLACE"}`,
			loom.EditChange, "/w/h.js", [][]string{{"let a = 2;"}}},
		{"cline", "write_to_file", `{"path":"h.js","content":"let a = 1;"}`, loom.EditWrite, "/w/h.js", [][]string{{"let a = 1;"}}},
		{"kimi", "StrReplaceFile", `{"path":"/r/k.py","edit":{"old":"a = 1","new":"a = 3"}}`, loom.EditChange, "/r/k.py", [][]string{{"a = 3"}}},
		{"cursor", "edit_file", `{"target_file":"/r/l.ts","code_edit":"// ... existing code ...\nconst l = 1;\n// ... existing code ..."}`,
			loom.EditChange, "/r/l.ts", [][]string{{"const l = 1;"}}},
		{"codex", "apply_patch", `{"input":"*** Begin Patch\n*** Update File: m.go\n@@\n func M() {\n-\treturn\n+\tm()\n }\n*** End Patch"}`,
			loom.EditChange, "/w/m.go", [][]string{{"\tm()"}}},
		{"copilot", "apply_patch", `{"value":"*** Begin Patch\n*** Add File: /r/o.py\n+x = 1\n*** End Patch\n"}`, loom.EditWrite, "/r/o.py", [][]string{{"x = 1"}}},
		{"opencode", "patch", `{"patchText":"*** Begin Patch\n*** Add File: n.txt\n+one\n+two\n*** End Patch"}`, loom.EditWrite, "/w/n.txt", [][]string{{"one", "two"}}},
	}
	for _, c := range cases {
		got := Extract([]loom.Part{call(c.name, c.input)}, "/w")
		if len(got) != 1 {
			t.Errorf("%s %s: %d changes %+v, want 1", c.agent, c.name, len(got), got)
			continue
		}
		g := got[0]
		if g.Op != c.op || g.Path != c.path || g.Tool != c.name || g.PartID != "p1" {
			t.Errorf("%s %s: %s %s (%s %s), want %s %s", c.agent, c.name, g.Op, g.Path, g.Tool, g.PartID, c.op, c.path)
		}
		if a := g.Added(); !slices.EqualFunc(a, c.added, slices.Equal) {
			t.Errorf("%s %s: added %q, want %q", c.agent, c.name, a, c.added)
		}
	}
}

// TestExtractNotebookInsertedCellID: the id Claude Code made at random
// for a cell NotebookEdit inserted is a line of the call's when its
// result (toolUseResult, in the part's metadata) names it; a result
// that names the cell it was inserted after, or none, adds nothing.
func TestExtractNotebookInsertedCellID(t *testing.T) {
	in := `{"notebook_path":"/r/n.ipynb","cell_id":"load","new_source":"a = 1","cell_type":"code","edit_mode":"insert"}`
	for meta, want := range map[string]bool{
		`{"toolUseResult":{"cell_id":"f3c9a1d2","edit_mode":"insert","new_source":"a = 1"},"omitted":["original_file","updated_file"]}`: true,
		`{"toolUseResult":{"cell_id":"load","edit_mode":"insert"}}`:                                                                     false,
		`{"toolUseResult":{"edit_mode":"insert"}}`:                                                                                      false,
		``: false,
	} {
		p := call("NotebookEdit", in)
		p.Metadata = json.RawMessage(meta)
		got := Extract([]loom.Part{p}, "/w")
		if len(got) != 1 {
			t.Fatalf("%s: %d changes, want 1", meta, len(got))
		}
		has := slices.ContainsFunc(got[0].Added(), func(run []string) bool { return slices.Contains(run, `"id": "f3c9a1d2",`) })
		if has != want {
			t.Errorf("metadata %s: the inserted cell's id line added %v, want %v (%q)", meta, has, want, got[0].Added())
		}
		if slices.ContainsFunc(got[0].Added(), func(run []string) bool { return slices.Contains(run, `"id": "load",`) }) {
			t.Errorf("metadata %s: the id of the cell it was inserted after is no line of the call's", meta)
		}
	}
}

// TestExtractSkips: failed calls, other tools and inputs that are no
// edit give nothing.
func TestExtractSkips(t *testing.T) {
	failed := call("Write", `{"file_path":"/r/a","content":"x"}`)
	failed.Status = loom.ToolError
	for _, p := range []loom.Part{
		failed,
		call("Read", `{"file_path":"/r/a"}`),
		call("TodoWrite", `{"todos":[{"content":"x"}]}`),
		call("Write", `{"content":"no path"}`),
		call("Edit", `not json`),
		call("Bash", `{"command":"ls -la && go test ./..."}`),
		{ID: "t", Type: loom.PartText, Text: `{"file_path":"/r/a","content":"x"}`},
	} {
		if got := Extract([]loom.Part{p}, "/w"); len(got) != 0 {
			t.Errorf("%s %s: %+v, want nothing", p.Name, p.Input, got)
		}
	}
}

// TestExtractShell: what a shell command tells of the files it wrote.
func TestExtractShell(t *testing.T) {
	cases := []struct {
		cmd  string
		want []string // op path [from]
	}{
		{"cat > notes.md <<'EOF'\n# Notes\nsecond\nEOF", []string{"write /w/notes.md"}},
		{"cat <<EOF >> log.txt\nmore\nEOF\necho done", []string{"edit /w/log.txt"}},
		{"tee out.txt <<\"END\"\nhello\nEND", []string{"write /w/out.txt"}},
		{"git mv old.go new.go && go build", []string{"move /w/new.go /w/old.go"}},
		{"rm -f a.txt b.txt", []string{"delete /w/a.txt", "delete /w/b.txt"}},
		{"sed -i 's/a/b/' x.go", []string{"shell /w/x.go"}},
		{"go run gen.go > gen_out.go 2>/dev/null", []string{"shell /w/gen_out.go"}},
		{"echo hi >/dev/null; ls | grep x", nil},
		{"apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: z.go\n*** End Patch\nEOF", []string{"delete /w/z.go"}},
		// Redirects in any order: the here-document goes to tee's file,
		// not to the /dev/null of its output.
		{"tee f.txt <<'EOF' >/dev/null\nx\nEOF", []string{"write /w/f.txt"}},
		{"tee -a f.txt >/dev/null <<'EOF'\nx\nEOF", []string{"edit /w/f.txt"}},
		{"echo x >/dev/null && cat > g.txt <<EOF\ny\nEOF", []string{"write /w/g.txt"}},
		{"mkdir -p d && cat <<'EOF' > d/h.txt\nz\nEOF", []string{"write /w/d/h.txt"}},
		{"cat <<'EOF' | tee k.txt\nz\nEOF", []string{"write /w/k.txt"}},
		{"cd sub && cat > j.txt <<'EOF'\nz\nEOF", []string{"write /w/sub/j.txt"}},
		{"perl -pi -e 's/a/b/' p.pl", []string{"shell /w/p.pl"}},
		// A program the agent ran, whose text names the file it writes.
		{"python3 - <<'EOF'\nwith open('gen/x.py', 'w') as f:\n    f.write('X = 1\\n')\nEOF", []string{"program /w/gen/x.py"}},
		{"node -e \"require('fs').writeFileSync('out.json', '{}')\"", []string{"program /w/out.json"}},
		{"python3 - <<'EOF'\nprint(open('in.txt').read())\nEOF", nil},
		// echo and printf of their own words: what they wrote is known;
		// with an expansion it is not.
		{"printf 'LOG_LEVEL=debug\\n' >> .env", []string{"edit /w/.env"}},
		// Every file of a sed -i or perl -pi, a glob as written, and the
		// files another command feeds it.
		{"sed -i 's/fetchUser/loadUser/g' users/a.go users/b.go", []string{"shell /w/users/a.go", "shell /w/users/b.go"}},
		{"sed -i -e 's/a/b/' -e 's/c/d/' x.go y.go", []string{"shell /w/x.go", "shell /w/y.go"}},
		{"perl -pi -e 's/old/new/g' *.go", []string{"shell /w/*.go"}},
		{"perl -i -pe 's/old/new/' a.py", []string{"shell /w/a.py"}},
		{"grep -rl fetchUser src | xargs sed -i 's/fetchUser/loadUser/g'", []string{"shell /w/**"}},
		{"find src -name '*.go' -exec sed -i 's/a/b/' {} +", []string{"shell /w/src/**/*.go"}},
		// Formatters and generators by their command: what they wrote is
		// not read.
		{"gofmt -w api/handler.go", []string{"shell /w/api/handler.go"}},
		{"gofmt -l .", nil},
		{"npx prettier --write src/", []string{"shell /w/src/**"}},
		{"black --check app.py", nil},
		{"python3 -m black app.py", []string{"shell /w/app.py"}},
		{"go fmt ./...", []string{"shell /w/**"}},
		{"cargo fmt", []string{"shell /w/**/*.rs"}},
		{"mix ash.codegen add_tags", []string{"shell /w/priv/**"}},
		// A copy or move into a directory: the file there by its name.
		{"cp a.go pkg/", []string{"shell /w/pkg/a.go /w/a.go"}},
		{"cp -p a.go b.go c.go lib", []string{"shell /w/lib/a.go /w/a.go", "shell /w/lib/b.go /w/b.go", "shell /w/lib/c.go /w/c.go"}},
		{"mv x.py tools", []string{"move /w/tools /w/x.py", "move /w/tools/x.py /w/x.py"}},
		{"echo 'x = 1' > v.py", []string{"write /w/v.py"}},
		{"echo \"$HOME\" >> v.txt", []string{"shell /w/v.txt"}},
		{"printf '%s\\n' $(date) > d.txt", []string{"shell /w/d.txt"}},
	}
	for _, c := range cases {
		var got []string
		for _, ch := range Extract([]loom.Part{call("Bash", `{"command":`+quote(c.cmd)+`}`)}, "/w") {
			s := ch.Op + " " + ch.Path
			if ch.From != "" {
				s += " " + ch.From
			}
			got = append(got, s)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.cmd, got, c.want)
		}
	}
	for cmd, want := range map[string]string{
		"printf 'a=%s\\nb=%d\\n' one 2 >> f": "a=one\nb=2",
		"echo -e 'one\\ttwo' >> f":           "one\ttwo",
		"echo one two >>f":                   "one two",
		"printf '%s\\n' x y >> f":            "x\ny",
	} {
		cs := Extract([]loom.Part{call("Bash", `{"command":`+quote(cmd)+`}`)}, "/w")
		if len(cs) != 1 || len(cs[0].Replace) != 1 || cs[0].Replace[0].New != want {
			t.Errorf("%q: %+v, want %q appended", cmd, cs, want)
		}
	}
	hd := Extract([]loom.Part{call("Bash", `{"command":`+quote("cat > a.txt <<'EOF'\nline one\nline two\nEOF")+`}`)}, "/w")
	if len(hd) != 1 || hd[0].Content != "line one\nline two\n" {
		t.Errorf("here-document: %+v", hd)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestParsePatchMoves: a patch that moves a file and changes it, a
// unified diff of git's with a new file and a deleted one.
func TestParsePatchMoves(t *testing.T) {
	p := ParsePatch("*** Begin Patch\n*** Update File: a.go\n*** Move to: b.go\n@@\n-x\n+y\n*** End Patch")
	if len(p) != 2 || p[0].Op != loom.EditMove || p[0].Path != "b.go" || p[0].From != "a.go" || p[1].Path != "b.go" || p[1].Replace[0].New != "y" {
		t.Errorf("move: %+v", p)
	}
	u := ParsePatch("diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\ndiff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+fresh\ndiff --git a/d.txt b/d.txt\n--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n")
	var got []string
	for _, c := range u {
		got = append(got, c.Op+" "+c.Path)
	}
	if want := []string{"edit x.txt", "write n.txt", "delete d.txt"}; !slices.Equal(got, want) {
		t.Errorf("unified: %q, want %q", got, want)
	}
	if a := u[0].Added(); !slices.EqualFunc(a, [][]string{{"new"}}, slices.Equal) {
		t.Errorf("unified added %q", a)
	}
}

// TestInserted: an edit's own lines are those its new text put in, not
// the lines around them it repeats; realigned lines are the same.
func TestInserted(t *testing.T) {
	old := []string{"func f() {", "\tx := 1", "\treturn x", "}"}
	nw := []string{"func f() {", "    x := 1", "\ty := 2", "\treturn x + y", "}"}
	got := Inserted(old, nw)
	if want := [][]string{{"\ty := 2", "\treturn x + y"}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Inserted = %q, want %q", got, want)
	}
	if Hash("a  b\t") != Hash("\ta b") || Hash("a") == Hash("b") {
		t.Error("Hash does not compare lines as Norm makes them")
	}
}

// TestRealSessions: the edits in real session files other agents
// wrote (testdata/agent-sessions), read through their importers.
func TestRealSessions(t *testing.T) {
	root := filepath.Join("..", "testdata", "agent-sessions")
	cases := []struct {
		f    importer.Format
		file string
		want map[string]int // tool → changes
	}{
		{claudecode.Format{}, "claude-code/viewer-sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", nil},
		{codex.Format{}, "codex/vibecodingtracker-codex.jsonl", nil},
		{gemini.Format{}, "gemini/vibecodingtracker-gemini.jsonl", nil},
	}
	for _, c := range cases {
		res, err := c.f.Read(context.Background(), importer.Bundle{Files: []string{filepath.Join(root, c.file)}})
		if err != nil {
			t.Fatal(err)
		}
		tools := map[string]int{}
		lines := 0
		for _, s := range res.Sessions {
			for _, m := range s.Messages {
				for _, ch := range Extract(m.Parts, s.Cwd) {
					tools[ch.Tool+" "+ch.Op]++
					if !filepath.IsAbs(ch.Path) && s.Cwd != "" {
						t.Errorf("%s: %s's path %q is not absolute (cwd %q)", c.file, ch.Tool, ch.Path, s.Cwd)
					}
					for _, r := range ch.Added() {
						lines += len(r)
					}
				}
			}
		}
		t.Logf("%s: %v, %d lines", c.file, tools, lines)
		if len(tools) == 0 || lines == 0 {
			t.Errorf("%s: no edits found", c.file)
		}
		if strings.HasPrefix(c.file, "codex") && tools["shell edit"] == 0 {
			t.Errorf("%s: Codex's apply_patch through its shell not read: %v", c.file, tools)
		}
	}
}

// TestExtractCodeMode: Codex's code mode edits through its exec tool,
// a script whose calls of tools.apply_patch and tools.exec_command are
// its edits (the script as Codex 0.171 writes it in its rollout), each
// shell command in the directory it names.
func TestExtractCodeMode(t *testing.T) {
	script := "// @exec: {\"yield_time_ms\": 10000}\n" +
		"const patch = \"*** Begin Patch\\n*** Add File: a.txt\\n+one\\n*** End Patch\\n\";\n" +
		"const r = await tools.apply_patch(patch);\n" +
		"await tools.apply_patch(`*** Begin Patch\n*** Update File: b.go\n@@\n-x\n+y\n*** End Patch`);\n" +
		"text(JSON.stringify(r));\n" +
		"await tools.exec_command({cmd: \"cat > c.txt <<'EOF'\\nthree\\nEOF\", workdir: \"sub\", yield_time_ms: 1000});\n" +
		"await tools[\"exec_command\"]({'cmd': 'rm old.txt'});\n" +
		"const dyn = await tools.apply_patch(makePatch());\n"
	var got []string
	for _, ch := range Extract([]loom.Part{call("exec", `{"input":`+quote(script)+`}`)}, "/w") {
		got = append(got, ch.Op+" "+ch.Path)
	}
	want := []string{"write /w/a.txt", "edit /w/b.go", "write /w/sub/c.txt", "delete /w/old.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("code mode: %q, want %q", got, want)
	}
}

// TestExtractWorkdir: a shell call's workdir is where its command ran,
// and a cd in the command moves the commands after it.
func TestExtractWorkdir(t *testing.T) {
	var got []string
	for _, ch := range Extract([]loom.Part{call("exec_command", `{"cmd":"cd pkg && cat > x.go <<'EOF'\npackage x\nEOF","workdir":"/w/mod"}`)}, "/w") {
		got = append(got, ch.Op+" "+ch.Path)
	}
	if want := []string{"write /w/mod/pkg/x.go"}; !slices.Equal(got, want) {
		t.Errorf("workdir: %q, want %q", got, want)
	}
	// A call that recorded its own directory (Claude Code after a cd).
	p := call("Bash", `{"command":"cat > y.txt <<'EOF'\ny\nEOF"}`)
	p.Metadata = json.RawMessage(`{"cwd":"/w/sub"}`)
	if cs := Extract([]loom.Part{p}, "/w"); len(cs) != 1 || cs[0].Path != "/w/sub/y.txt" {
		t.Errorf("a call's own directory: %+v", cs)
	}
}
