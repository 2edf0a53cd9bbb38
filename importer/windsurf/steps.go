package windsurf

import (
	"encoding/json"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/loomhq/loom"
)

// stepKind is one kind of step line: a tool call that Cascade made,
// written as one italic line, "*Viewed [a.go](file:///src/a.go) *".
type stepKind struct {
	// prefix starts the line's text; exact says it is all of it.
	prefix string
	exact  bool
	// name is the tool part's name.
	name string
	// arg is the input's key for what follows prefix: "path" takes a
	// Markdown link's target (a file; "dir" a directory), "command" a
	// command in backticks, any other key the rest as it is; "" none.
	arg string
	// failed is the error of a step that did not run.
	failed string
}

// stepKinds are the steps Windsurf and Antigravity write, as public
// trajectories show them; the first whose prefix matches is taken.
var stepKinds = []stepKind{
	{prefix: "Viewed content chunk", exact: true, name: "view_content_chunk"},
	{prefix: "Viewed code item", exact: true, name: "view_code_item"},
	{prefix: "Viewed ", name: "view", arg: "path"},
	{prefix: "Analyzed ", name: "analyze", arg: "path"},
	{prefix: "Edited relevant file", exact: true, name: "edit"},
	{prefix: "Edited ", name: "edit", arg: "path"},
	{prefix: "Listed directory ", name: "list_dir", arg: "dir"},
	{prefix: "User accepted the command ", name: "run_command", arg: "command"},
	{prefix: "User rejected the command ", name: "run_command", arg: "command", failed: "rejected by the user"},
	{prefix: "Checked command status", exact: true, name: "command_status"},
	{prefix: "Read terminal output:", name: "read_terminal", arg: "name"},
	{prefix: "Grep searched codebase", exact: true, name: "grep_search"},
	{prefix: "Semantic searched codebase", exact: true, name: "codebase_search"},
	{prefix: "Searched filesystem", exact: true, name: "find_by_name"},
	{prefix: "Searched web for ", name: "search_web", arg: "query"},
	{prefix: "Read URL content from ", name: "read_url_content", arg: "url"},
	{prefix: "Read resource from ", name: "read_resource", arg: "uri"},
	{prefix: "Listed resources from ", name: "list_resources", arg: "server"},
	{prefix: "Running MCP tool", exact: true, name: "mcp_tool"},
	{prefix: "Updated todo list", exact: true, name: "todo_list"},
	{prefix: "Ran preview", exact: true, name: "browser_preview"},
	{prefix: "Opened the URL ", name: "open_browser_url", arg: "url"},
	{prefix: "Listed Windsurf Browser pages", exact: true, name: "list_browser_pages"},
	{prefix: "Read browser page in Windsurf Browser", exact: true, name: "read_browser_page"},
	{prefix: "Generated image", exact: true, name: "generate_image"},
	{prefix: "Proposed code", exact: true, name: "propose_code"},
}

// step reads line s as a step, a tool part, when it is one: the whole
// line in single asterisks, of a kind in stepKinds.
func (rd *reader) step(s string) (loom.Part, bool) {
	t := strings.TrimSpace(s)
	if len(t) < 3 || t[0] != '*' || t[len(t)-1] != '*' || t[1] == '*' || t[1] == ' ' || t[len(t)-2] == '*' {
		return loom.Part{}, false
	}
	inner := strings.TrimSpace(t[1 : len(t)-1])
	for _, k := range stepKinds {
		rest, ok := strings.CutPrefix(inner, k.prefix)
		if !ok || (k.exact && rest != "") {
			continue
		}
		rest = strings.TrimSpace(rest)
		p := loom.Part{Type: loom.PartTool, Name: k.name, Status: loom.ToolCompleted, Title: loom.Truncate(inner, 200)}
		if k.failed != "" {
			p.Status, p.Error = loom.ToolError, k.failed
		}
		var v string
		switch k.arg {
		case "":
		case "path", "dir":
			name, target, ok := link(rest)
			if !ok {
				continue // "Viewed" in a sentence of its own, not a step
			}
			p.Title = strings.TrimSpace(k.prefix) + " " + name
			v = target
			if lp, ok := localPath(target); ok {
				v = lp
				if k.arg == "dir" {
					rd.saw(lp)
				} else {
					rd.saw(path.Dir(lp))
				}
			}
		case "command":
			v = unquoteCode(rest)
		default:
			v = rest
		}
		if v != "" {
			key := k.arg
			if key == "dir" {
				key = "path"
			}
			p.Input, _ = json.Marshal(map[string]string{key: v})
		}
		return p, true
	}
	return loom.Part{}, false
}

// link splits a Markdown link "[name](target)" that is all of s.
func link(s string) (name, target string, ok bool) {
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, ")") {
		return "", "", false
	}
	i := strings.Index(s, "](")
	if i < 0 {
		return "", "", false
	}
	return s[1:i], s[i+2 : len(s)-1], true
}

// unquoteCode is the code of a Markdown code span, s itself when it is
// not one.
func unquoteCode(s string) string {
	k := 0
	for k < len(s) && s[k] == '`' {
		k++
	}
	if k == 0 || len(s) < 2*k || strings.Repeat("`", k) != s[len(s)-k:] {
		return s
	}
	inner := s[k : len(s)-k]
	if len(inner) > 1 && inner[0] == ' ' && inner[len(inner)-1] == ' ' {
		inner = inner[1 : len(inner)-1]
	}
	return inner
}

// cciLink is the target of a link into the editor's code index,
// "(cci:7://file:///src/a.go:0:0-0:0)": a file (7) or a symbol in it (1,
// 2) with a range of lines and columns.
var cciLink = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\(cci:\d+://([^\s)]+?)(?::\d+:\d+-\d+:\d+)?\)`) })

// rewrite is text with each code-index link's target made the plain
// path of its file, and those paths noted for the workspace.
func (rd *reader) rewrite(text string) string {
	if !strings.Contains(text, "(cci:") {
		return text
	}
	return cciLink().ReplaceAllStringFunc(text, func(m string) string {
		sub := cciLink().FindStringSubmatch(m)
		p, ok := localPath(sub[1])
		if !ok {
			return "(" + sub[1] + ")"
		}
		rd.saw(path.Dir(p))
		return "(" + p + ")"
	})
}

// toolData are directories of the agents' own that trajectories name
// (Antigravity's artifacts, Windsurf's plans): not the user's project.
var toolData = map[string]bool{".gemini": true, ".codeium": true, ".windsurf": true}

// saw notes directory dir (slash-separated), which the trajectory names:
// the session's working directory is the deepest one that holds all.
func (rd *reader) saw(dir string) {
	segs := strings.Split(strings.TrimSuffix(dir, "/"), "/")
	for _, s := range segs {
		if toolData[s] {
			return
		}
	}
	if !rd.rootSeen {
		rd.root, rd.rootSeen = segs, true
		return
	}
	i := 0
	for i < len(rd.root) && i < len(segs) && rd.root[i] == segs[i] {
		i++
	}
	rd.root = rd.root[:i]
}

// localPath is the path (slash-separated) a file URI of this machine
// names: file:///home/me/a.go, file:///c:/Users/me/a.go (c:/Users/me/a.go,
// the drive's letter in lower case); false for anything else, a file on
// another host among them.
func localPath(uri string) (string, bool) {
	if !strings.HasPrefix(uri, "file://") {
		return "", false
	}
	p := ""
	if u, err := url.Parse(uri); err == nil {
		if u.Host != "" && u.Host != "localhost" {
			return "", false
		}
		p = u.Path
	} else {
		rest := strings.TrimPrefix(uri, "file://")
		if !strings.HasPrefix(rest, "/") {
			return "", false
		}
		p = rest
	}
	if len(p) > 2 && p[0] == '/' && p[2] == ':' {
		p = strings.ToLower(p[1:2]) + p[2:]
	}
	if p == "" || p == "/" {
		return "", false
	}
	return p, true
}

// mention is what the user attached to a prompt, "@[src/a.go]",
// "@[/abs/notes.md:L14-L78]", "@[TerminalName: go, ProcessId: 7]".
var mention = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`@\[([^\]\n]+)\]`) })

// lineRange is the lines of a file a mention names, ":L14-L78".
var lineRange = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`:L(\d+)(?:-L(\d+))?$`) })

// mentions are the files a prompt attaches, as file parts naming them
// (Windsurf does not write their content); a terminal, or a workflow
// ("@[/review]"), is no file.
func mentions(text string) []loom.Part {
	var out []loom.Part
	for _, m := range mention().FindAllStringSubmatch(text, 64) {
		ref := strings.TrimSpace(m[1])
		if strings.Contains(ref, ": ") || !strings.ContainsAny(strings.TrimPrefix(ref, "/"), `/\.`) {
			continue
		}
		src := &loom.FileSource{Type: "file", Path: ref}
		if r := lineRange().FindStringSubmatchIndex(ref); r != nil {
			src.Path = ref[:r[0]]
			src.Start, _ = strconv.Atoi(ref[r[2]:r[3]])
			src.End = src.Start
			if r[4] >= 0 {
				src.End, _ = strconv.Atoi(ref[r[4]:r[5]])
			}
		}
		name := src.Path[strings.LastIndexAny(src.Path, `/\`)+1:]
		out = append(out, loom.Part{Type: loom.PartFile, Filename: name, Source: src})
	}
	return out
}
