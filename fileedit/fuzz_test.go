package fileedit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// FuzzParsePatch: any patch text is read in bounded time without a
// panic, and every change it gives names a file.
func FuzzParsePatch(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a.go\n*** Move to: b.go\n@@\n-x\n+y\n*** End Patch")
	f.Add("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
	f.Add("diff --git a/a b/b\nrename from a\nrename to b\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range ParsePatch(s) {
			if c.Op == "" {
				t.Fatalf("a change without an op: %+v", c)
			}
			c.Added()
		}
	})
}

// FuzzExtract: any tool input, under any edit tool's name or a shell's,
// gives changes with absolute paths (the directory is absolute) and
// never panics.
func FuzzExtract(f *testing.F) {
	f.Add("Edit", `{"file_path":"a","old_string":"x","new_string":"y\nz"}`)
	f.Add("Bash", `{"command":"cat > f <<EOF\nx\nEOF"}`)
	f.Add("apply_patch", `"*** Begin Patch\n*** Add File: n\n+1\n*** End Patch"`)
	f.Add("replace_in_file", `{"path":"p","diff":"<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE"}`)
	f.Fuzz(func(t *testing.T, name, input string) {
		if !json.Valid([]byte(input)) {
			return
		}
		p := loom.Part{ID: "p", Type: loom.PartTool, CallID: "c", Name: name, Status: loom.ToolCompleted, Input: json.RawMessage(input)}
		for _, c := range Extract([]loom.Part{p}, "/w") {
			if c.Path == "" {
				t.Fatalf("a change without a path: %+v", c)
			}
			c.Added()
		}
	})
}

// FuzzMatch: Match pairs each line with an equal one, in order.
func FuzzMatch(f *testing.F) {
	f.Add("a\nb\nc", "a\nx\nc")
	f.Fuzz(func(t *testing.T, a, b string) {
		la, lb := Lines(a), Lines(b)
		last := -1
		for j, i := range Match(la, lb) {
			if i < 0 {
				continue
			}
			if i <= last || Norm(la[i]) != Norm(lb[j]) {
				t.Fatalf("line %d of b matched to %d (after %d)", j, i, last)
			}
			last = i
		}
	})
}

// FuzzNorm: Norm is the line's fields (strings.Fields) joined by one
// space, as the edit index's stored hashes were made, whatever the line.
func FuzzNorm(f *testing.F) {
	for _, s := range []string{"", " ", "\tx := 1 // y", "a  b", " a", "a ", "a\r", "x\u00a0y", "\xff a", "a\vb\fc", "é  ü\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Norm(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("Norm(%q) = %q, want %q", s, got, want)
		}
	})
}

// FuzzScript: any code-mode script is read in bounded time without a
// panic, and every change it gives names a file.
func FuzzScript(f *testing.F) {
	f.Add("await tools.apply_patch(\"*** Begin Patch\\n*** Add File: a\\n+1\\n*** End Patch\");")
	f.Add("const c = 'x'; await tools.exec_command({cmd: c, workdir: `d`});")
	f.Add("tools[\"apply_patch\"]('\\u00e9\\x41\\\n')")
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range fromScript(s) {
			if c.Op == "" || c.Path == "" {
				t.Fatalf("a change without an op or a path: %+v", c)
			}
		}
	})
}
