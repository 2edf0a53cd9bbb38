// Package fileedit reads the file changes agents made out of their
// stored tool calls: which file, which lines went in, by which tool
// (Extract), the hashes of those lines the store's edit index keeps
// (Hashes), and the catch-up that fills the index from the bodies a
// store marked (Index). It knows the edit tools of the agents loom
// imports by the shape of their input (a path and a content, an old
// and a new string, a list of those, a patch) and by their names; a
// shell command is read for what it tells (a here-document written to
// a file, a move, a removal) and otherwise only names the file.
package fileedit

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/shell"
)

// Change is one file change a tool call made, with its text.
type Change struct {
	PartID string
	Tool   string
	Op     string // loom.EditWrite, EditChange, EditDelete, EditMove, EditShell
	Path   string
	From   string
	// Content is what a write put in the file, whole.
	Content string
	// Replace are the replacements of an edit, in the order they were
	// made.
	Replace []Replacement
	// Command is the shell command of an EditShell change.
	Command string
	// Dir is the directory a shell command ran in, when its call named
	// one (Codex's workdir): relative paths are taken from it, itself
	// taken from the session's directory.
	Dir string
}

// Replacement is one replacement an edit made: Old by New (every
// occurrence with All). Old is empty for text put in without
// replacing any (an insertion, or a sketch of the changed parts).
type Replacement struct {
	Old, New string
	All      bool
	// Count is how many occurrences the call said it replaced (Gemini
	// CLI's expected_replacements), 0 when it did not say.
	Count int
}

// Added are the runs of lines the change put in the file, each run
// lines that stand together in it: a write's every line, an edit's
// lines of New that Old did not hold where they stand (the lines
// around it that an edit repeats are not its own).
func (c *Change) Added() [][]string {
	switch c.Op {
	case loom.EditWrite:
		if l := Lines(c.Content); len(l) > 0 {
			return [][]string{l}
		}
	case loom.EditChange:
		var out [][]string
		for _, r := range c.Replace {
			out = append(out, Inserted(Lines(r.Old), Lines(r.New))...)
		}
		return out
	}
	return nil
}

// Lines splits text into lines, without their line ends; a final line
// end starts no line of its own.
func Lines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	return strings.Split(s, "\n")
}

// Extract returns the file changes the tool parts of parts made, in
// order; relative paths are taken from cwd. A call that failed changed
// nothing and gives none.
func Extract(parts []loom.Part, cwd string) []Change {
	var out []Change
	for i := range parts {
		p := &parts[i]
		if p.Type != loom.PartTool || p.Status == loom.ToolError || len(p.Input) == 0 {
			continue
		}
		dir := partDir(p, cwd)
		for _, c := range fromCall(p) {
			c.PartID, c.Tool = p.ID, p.Name
			at := dir
			if c.Dir != "" {
				if d := resolve(c.Dir, dir); filepath.IsAbs(d) {
					at = d
				}
			}
			c.Path = resolve(c.Path, at)
			if c.From != "" {
				c.From = resolve(c.From, at)
			}
			if c.Path == "" {
				continue
			}
			out = append(out, c)
		}
	}
	return out
}

// partDir is the directory a tool call ran in: the one its part records
// (metadata "cwd": an agent whose working directory moved during the
// session, as Claude Code's after a cd, records it with each call),
// else the session's.
func partDir(p *loom.Part, cwd string) string {
	if len(p.Metadata) == 0 || !strings.Contains(string(p.Metadata), `"cwd"`) {
		return cwd
	}
	var m struct {
		Cwd string `json:"cwd"`
	}
	if json.Unmarshal(p.Metadata, &m) == nil && filepath.IsAbs(m.Cwd) {
		return filepath.Clean(m.Cwd)
	}
	return cwd
}

// resolve makes p absolute against cwd and clean; a path that cannot be
// (relative, with no cwd; a home directory's ~) stays as it is.
func resolve(p, cwd string) string {
	p = strings.TrimSpace(p)
	if p == "" || strings.ContainsRune(p, 0) {
		return ""
	}
	p = strings.TrimPrefix(p, "file://")
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if cwd == "" || strings.HasPrefix(p, "~") {
		return p
	}
	return filepath.Join(cwd, p)
}

// toolKind is what a tool's name says it does.
type toolKind int

const (
	notEdit toolKind = iota
	writeTool
	editTool
	patchTool
	commandTool  // str_replace_editor and its like: the command says
	notebookTool // a cell of a Jupyter notebook (.ipynb)
)

// nameSeparators are taken out of a tool's name before it is compared
// (made once: building a Replacer for each call was a sixth of the edit
// index's reading of a body).
var nameSeparators = strings.NewReplacer("_", "", "-", "")

// kindOf reads a tool's name: its last word after a namespace
// (mcp__server__tool, developer__text_editor, a.b), without case,
// underscores or dashes.
func kindOf(name string) toolKind {
	n := strings.ToLower(name)
	if i := strings.LastIndex(n, "__"); i >= 0 {
		n = n[i+2:]
	}
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		n = n[i+1:]
	}
	n = nameSeparators.Replace(n)
	switch n {
	case "write", "writefile", "create", "createfile", "writetofile", "newfile", "filewrite":
		return writeTool
	case "edit", "editfile", "replace", "strreplace", "strreplacefile", "searchreplace", "multiedit",
		"replaceinfile", "fileedit", "editnotebook":
		return editTool
	case "applypatch", "patch", "applydiff":
		return patchTool
	case "strreplaceeditor", "strreplacebasededittool", "texteditor", "editor":
		return commandTool
	case "notebookedit":
		return notebookTool
	}
	return notEdit
}

// input is every field an edit tool's input is seen to have, under the
// names the agents give them.
type input struct {
	FilePath   string `json:"file_path"`
	FilePath2  string `json:"filePath"`
	Path       string `json:"path"`
	TargetFile string `json:"target_file"`
	Filepath   string `json:"filepath"`
	File       string `json:"file"`
	AbsPath    string `json:"absolute_path"`

	Content  *string `json:"content"`
	FileText *string `json:"file_text"`
	Contents *string `json:"contents"`
	CodeEdit *string `json:"code_edit"`

	pair
	Edits json.RawMessage `json:"edits"`
	Edit  json.RawMessage `json:"edit"`

	Command    string `json:"command"`
	InsertLine *int   `json:"insert_line"`

	Input     *string `json:"input"`
	Value     *string `json:"value"`
	Patch     *string `json:"patch"`
	PatchText *string `json:"patchText"`
	PatchTxt  *string `json:"patch_text"`
	Diff      *string `json:"diff"`
}

// pair is one replacement as an edit tool's input names it.
type pair struct {
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	OldString2 *string `json:"oldString"`
	NewString2 *string `json:"newString"`
	OldStr     *string `json:"old_str"`
	NewStr     *string `json:"new_str"`
	OldText    *string `json:"oldText"`
	NewText    *string `json:"newText"`
	OldText2   *string `json:"old_text"`
	NewText2   *string `json:"new_text"`
	Old        *string `json:"old"`
	New        *string `json:"new"`
	Search     *string `json:"search"`
	ReplaceS   *string `json:"replace"`

	ReplaceAll  bool `json:"replace_all"`
	ReplaceAll2 bool `json:"replaceAll"`
	Multiple    bool `json:"allow_multiple"`
	Expected    int  `json:"expected_replacements"`
}

func (p *pair) replacement() (Replacement, bool) {
	old, nw := first(p.OldString, p.OldString2, p.OldStr, p.OldText, p.OldText2, p.Old, p.Search),
		first(p.NewString, p.NewString2, p.NewStr, p.NewText, p.NewText2, p.New, p.ReplaceS)
	if nw == nil {
		return Replacement{}, false
	}
	r := Replacement{New: *nw, All: p.ReplaceAll || p.ReplaceAll2 || p.Multiple || p.Expected > 1}
	if p.Expected > 1 {
		r.Count = p.Expected
	}
	if old != nil {
		r.Old = *old
	}
	return r, true
}

func first(ss ...*string) *string {
	for _, s := range ss {
		if s != nil {
			return s
		}
	}
	return nil
}

func (in *input) path() string {
	for _, s := range []string{in.FilePath, in.FilePath2, in.Path, in.TargetFile, in.Filepath, in.File, in.AbsPath} {
		if s != "" {
			return s
		}
	}
	return ""
}

// fromCall reads one tool call.
func fromCall(p *loom.Part) []Change {
	kind := kindOf(p.Name)
	if kind == notEdit {
		if cmd, ok := shell.Command(*p); ok {
			cs := fromShell(cmd)
			if dir := workdir(p.Input); dir != "" {
				for i := range cs {
					cs[i].Dir = within(dir, cs[i].Dir)
				}
			}
			return cs
		}
		if p.Name == "exec" {
			// Codex's code mode: a script that calls its other tools.
			if src, ok := freeform(p.Input); ok {
				return fromScript(src)
			}
		}
		return nil
	}
	if kind == notebookTool {
		return fromNotebookEdit(p.Input, p.Metadata)
	}
	var in input
	if json.Unmarshal(p.Input, &in) != nil {
		// A custom tool's input kept as text (Codex's apply_patch).
		var s string
		if kind == patchTool && json.Unmarshal(p.Input, &s) == nil {
			return ParsePatch(s)
		}
		return nil
	}
	path := in.path()
	switch kind {
	case patchTool:
		if s := first(in.Input, in.Value, in.Patch, in.PatchText, in.PatchTxt, in.Diff); s != nil {
			if path != "" && !strings.Contains(*s, "*** Begin Patch") && !strings.Contains(*s, "\n+++ ") {
				return fromSearchReplace(path, *s)
			}
			return ParsePatch(*s)
		}
		return nil
	case commandTool:
		return fromCommand(&in, path)
	}
	if path == "" {
		return nil
	}
	if kind == writeTool {
		if s := first(in.Content, in.FileText, in.Contents); s != nil {
			return []Change{{Op: loom.EditWrite, Path: path, Content: *s}}
		}
	}
	if in.Diff != nil {
		return fromSearchReplace(path, *in.Diff)
	}
	if rs := replacements(&in); len(rs) > 0 {
		return []Change{{Op: loom.EditChange, Path: path, Replace: rs}}
	}
	if s := first(in.CodeEdit, in.Content, in.FileText, in.Contents); s != nil {
		// A sketch of the changed parts (Cursor's edit_file): its lines
		// but the markers of code left out.
		return []Change{{Op: loom.EditChange, Path: path, Replace: []Replacement{{New: withoutMarkers(*s)}}}}
	}
	return nil
}

// workdir is the directory a shell call names for its command (Codex's
// exec_command and shell take workdir).
func workdir(raw json.RawMessage) string {
	if !strings.Contains(string(raw), "workdir") {
		return ""
	}
	var in struct {
		Workdir string `json:"workdir"`
	}
	json.Unmarshal(raw, &in)
	return in.Workdir
}

// within is directory sub (a cd's, "" for none) of dir.
func within(dir, sub string) string {
	switch {
	case sub == "":
		return dir
	case filepath.IsAbs(sub):
		return sub
	}
	return filepath.Join(dir, sub)
}

// freeform is the text of a free-form tool's input: a JSON string, or
// {"input": text} as the import keeps one.
func freeform(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(raw, &in) != nil || len(in) != 1 || in["input"] == nil {
		return "", false
	}
	return s, json.Unmarshal(in["input"], &s) == nil
}

// replacements are the replacements of an edit tool's input: its own
// pair, or a list of them (MultiEdit's and pi's edits, Kimi's edit).
func replacements(in *input) []Replacement {
	var out []Replacement
	if r, ok := in.pair.replacement(); ok {
		out = append(out, r)
	}
	for _, raw := range []json.RawMessage{in.Edits, in.Edit} {
		if len(raw) == 0 {
			continue
		}
		var list []pair
		if json.Unmarshal(raw, &list) != nil {
			var one pair
			if json.Unmarshal(raw, &one) != nil {
				continue
			}
			list = []pair{one}
		}
		for i := range list {
			if r, ok := list[i].replacement(); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

// fromCommand reads a call of an editor that takes a command
// (Anthropic's str_replace_based_edit_tool, OpenHands' and Goose's).
func fromCommand(in *input, path string) []Change {
	if path == "" {
		return nil
	}
	switch in.Command {
	case "create", "write":
		if s := first(in.FileText, in.Content, in.Contents); s != nil {
			return []Change{{Op: loom.EditWrite, Path: path, Content: *s}}
		}
	case "str_replace", "insert", "edit":
		if rs := replacements(in); len(rs) > 0 {
			return []Change{{Op: loom.EditChange, Path: path, Replace: rs}}
		}
	}
	return nil
}

// withoutMarkers drops the lines of a sketch that stand for code left
// as it was ("// ... existing code ...").
func withoutMarkers(s string) string {
	var keep []string
	for _, l := range Lines(s) {
		t := strings.ToLower(strings.TrimSpace(l))
		if strings.Contains(t, "...") && strings.Contains(t, "existing") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}
