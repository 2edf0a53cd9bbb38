package fileedit

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/shell"
)

// maxShell bounds the command line a shell call is read for.
const maxShell = 1 << 20

var heredoc = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<<-?\s*(?:'([^'\n]+)'|"([^"\n]+)"|([A-Za-z_][A-Za-z0-9_]*))`)
})

// fromShell reads what a shell command line tells of the files it
// wrote: a patch it applied (Codex's apply_patch run as a command), a
// here-document written or appended to a file (cat > f <<EOF, tee f
// <<EOF, with its redirects in any order), moves and removals (mv, git
// mv, rm, git rm); a file it wrote otherwise (a redirect of a program's
// output, sed -i, cp) is named with what cannot be known of it left out
// (loom.EditShell), and a file a program it ran names in its text as
// one it writes (python3 - <<EOF … open('f', 'w')) is loom.EditProgram.
// A cd changes the directory of the commands after it (Dir).
func fromShell(cmd string) []Change {
	if len(cmd) > maxShell {
		return nil
	}
	if strings.Contains(cmd, "*** Begin Patch") {
		return ParsePatch(cmd)
	}
	var out []Change
	dir := ""
	add := func(cs []Change) {
		for _, c := range cs {
			if c.Path == "" || isDevice(c.Path) {
				continue
			}
			c.Dir = dir
			out = append(out, c)
		}
	}
	lines := strings.Split(cmd, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		m := heredoc().FindStringSubmatchIndex(line)
		if m == nil {
			for _, seg := range splitCommands(line) {
				dir = cdTo(seg, dir)
				add(simpleCommands(seg))
			}
			continue
		}
		delim := ""
		for g := 1; g <= 3; g++ {
			if m[2*g] >= 0 {
				delim = line[m[2*g]:m[2*g+1]]
			}
		}
		var body []string
		j := i + 1
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != delim; j++ {
			body = append(body, lines[j])
		}
		text := strings.Join(body, "\n")
		// The commands of the line: the one the here-document feeds (and
		// the ones it pipes into) takes it, the others are read alone.
		segs := splitCommandsAt(line)
		fed := -1
		for k, sg := range segs {
			if m[0] >= sg.start && m[0] < sg.end {
				fed = k
			}
		}
		for k, sg := range segs {
			seg := line[sg.start:sg.end]
			if k < fed || k > fed && !sg.piped {
				dir = cdTo(seg, dir)
				add(simpleCommands(seg))
				continue
			}
			if k == fed {
				seg = line[sg.start:m[0]] + line[m[1]:sg.end]
			}
			if target, appending, ok := heredocTarget(seg); ok {
				if appending {
					add([]Change{{Op: loom.EditChange, Path: target, Replace: []Replacement{{New: text}}}})
				} else {
					add([]Change{{Op: loom.EditWrite, Path: target, Content: text + "\n"}})
				}
				continue
			}
			if k == fed && interpreter(seg) {
				add(programWrites(text))
				continue
			}
			add(simpleCommands(seg))
		}
		i = j
	}
	return out
}

// isDevice says whether a path is a device's (/dev/null), which no
// command writes as a file.
func isDevice(p string) bool { return strings.HasPrefix(p, "/dev/") }

// cdTo is the directory after seg, when it is a cd (relative to dir, the
// one before it).
func cdTo(seg, dir string) string {
	f := shell.WordsNoStderr(seg)
	if len(f) != 2 || f[0] != "cd" || strings.HasPrefix(f[1], "-") || strings.HasPrefix(f[1], "~") || strings.HasPrefix(f[1], "$") {
		return dir
	}
	if strings.HasPrefix(f[1], "/") || dir == "" {
		return f[1]
	}
	return dir + "/" + f[1]
}

// interpreters are the programs whose script a command line may hold
// (a here-document, -c, -e).
var interpreters = map[string]bool{"python": true, "python3": true, "node": true, "ruby": true, "perl": true, "php": true, "deno": true, "bun": true, "bash": true, "sh": true, "zsh": true}

// interpreter says whether seg runs a program of its script.
func interpreter(seg string) bool {
	f := shell.WordsNoStderr(seg)
	return len(f) > 0 && interpreters[f[0][strings.LastIndexByte(f[0], '/')+1:]]
}

var writeCall = sync.OnceValue(func() *regexp.Regexp {
	// open('f', 'w'), writeFileSync('f', …), Path('f').write_text(…),
	// File.write('f', …), fopen('f', 'w'), file_put_contents('f', …).
	return regexp.MustCompile(`(?:open|fopen)\(\s*['"]([^'"\n]+)['"]\s*,\s*['"][wax]b?\+?['"]|(?:writeFileSync|writeFile|appendFileSync|file_put_contents|File\.write|IO\.write)\(\s*['"]([^'"\n]+)['"]|Path\(\s*['"]([^'"\n]+)['"]\s*\)\.write_(?:text|bytes)`)
})

// programWrites are the files a program's text names as ones it writes
// (loom.EditProgram): what it wrote in them is not known.
func programWrites(text string) []Change {
	var out []Change
	for _, m := range writeCall().FindAllStringSubmatch(text, 100) {
		for _, p := range m[1:] {
			if p != "" {
				out = append(out, Change{Op: loom.EditProgram, Path: p, Command: text})
			}
		}
	}
	return out
}

// heredocTarget is the file a here-document's command writes: the
// target of its redirect, or tee's file (a redirect to a device, such
// as tee's output to /dev/null, writes none).
func heredocTarget(head string) (path string, appending, ok bool) {
	f := shell.WordsNoStderr(head)
	for i, w := range f {
		if w == "tee" {
			app := false
			for _, a := range f[i+1:] {
				if a == "-a" || a == "--append" {
					app = true
					continue
				}
				if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, ">") && a != "|" && !isDevice(a) {
					return a, app, true
				}
			}
		}
	}
	for i, w := range f {
		target, app := "", false
		switch {
		case (w == ">" || w == ">>") && i+1 < len(f):
			target, app = f[i+1], w == ">>"
		case strings.HasPrefix(w, ">>") && len(w) > 2:
			target, app = w[2:], true
		case strings.HasPrefix(w, ">") && len(w) > 1 && w[1] != '&':
			target = w[1:]
		}
		if target != "" && !isDevice(target) && !strings.HasPrefix(target, "&") {
			return target, app, true
		}
	}
	return "", false, false
}

// simpleCommands reads the commands of one line, split at ;, &&, ||
// and |.
func simpleCommands(line string) []Change {
	var out []Change
	for _, seg := range splitCommands(line) {
		f := shell.WordsNoStderr(seg)
		if len(f) == 0 {
			continue
		}
		if f[0] == "git" && len(f) > 1 {
			f = f[1:]
		}
		args := operands(f[1:])
		switch f[0] {
		case "mv":
			for _, ft := range intoTargets(args) {
				out = append(out, Change{Op: loom.EditMove, Path: ft[1], From: ft[0]})
			}
		case "rm":
			for _, a := range args {
				out = append(out, Change{Op: loom.EditDelete, Path: a})
			}
		case "sed", "perl":
			if inPlace(f) {
				for _, file := range inPlaceFiles(f) {
					out = append(out, Change{Op: loom.EditShell, Path: file, Command: seg})
				}
			}
		case "xargs", "find":
			out = append(out, fedInPlace(seg, f)...)
		case "python", "python3", "node", "ruby", "php", "deno", "bun":
			for k, w := range f[1:] {
				if (w == "-c" || w == "-e") && k+2 < len(f) {
					out = append(out, programWrites(f[k+2])...)
				}
			}
		case "cp":
			// A copy: From is the file whose content it is.
			for _, ft := range intoTargets(args) {
				out = append(out, Change{Op: loom.EditShell, Path: ft[1], From: ft[0], Command: seg})
			}
		}
		out = append(out, formatted(seg, f)...)
		for i, w := range f {
			target, appending := "", strings.HasPrefix(w, ">>")
			switch {
			case (w == ">" || w == ">>") && i+1 < len(f):
				target = f[i+1]
			case strings.HasPrefix(w, ">") && len(w) > 1 && w[1] != '&' && w != ">>":
				target = strings.TrimPrefix(strings.TrimPrefix(w, ">"), ">")
			}
			if target == "" || isDevice(target) || strings.HasPrefix(target, "&") {
				continue
			}
			// echo and printf of their words: what they wrote is known.
			if text, ok := printed(seg, f); ok && text != "" {
				if appending {
					out = append(out, Change{Op: loom.EditChange, Path: target, Replace: []Replacement{{New: strings.TrimSuffix(text, "\n")}}})
				} else {
					out = append(out, Change{Op: loom.EditWrite, Path: target, Content: text})
				}
				continue
			}
			out = append(out, Change{Op: loom.EditShell, Path: target, Command: seg})
		}
	}
	return out
}

// intoTargets are the files a cp or mv of operands args writes, each
// with the file it came from: the last operand is the file (of one
// source) or the directory the sources go into (a name ending with /,
// or several sources); a name with no extension, of one source with
// one, may be either, and is read as both (a name that is no file of
// the repository is never blamed).
func intoTargets(args []string) [][2]string {
	if len(args) < 2 {
		return nil
	}
	dst, srcs := args[len(args)-1], args[:len(args)-1]
	var out [][2]string
	into := func(src string) {
		out = append(out, [2]string{src, strings.TrimSuffix(dst, "/") + "/" + path.Base(src)})
	}
	switch {
	case strings.HasSuffix(dst, "/") || len(srcs) > 1 || dst == "." || dst == "..":
		for _, src := range srcs {
			into(src)
		}
	case !strings.Contains(path.Base(dst), ".") && strings.Contains(path.Base(srcs[0]), "."):
		out = append(out, [2]string{srcs[0], dst})
		into(srcs[0])
	default:
		out = append(out, [2]string{srcs[0], dst})
	}
	return out
}

// splitCommands splits a line at ;, &&, || and |, outside quotes.
func splitCommands(line string) []string {
	var out []string
	for _, sg := range splitCommandsAt(line) {
		out = append(out, line[sg.start:sg.end])
	}
	return out
}

// span is one command of a line: where it is, and whether the command
// before it pipes into it.
type span struct {
	start, end int
	piped      bool
}

// splitCommandsAt splits a line at ;, &&, || and |, outside quotes.
func splitCommandsAt(line string) []span {
	var out []span
	var q byte
	start, piped := 0, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == ';' || c == '|' || c == '&' && i+1 < len(line) && line[i+1] == '&':
			out = append(out, span{start, i, piped})
			pipe := c == '|' && (i+1 >= len(line) || line[i+1] != '|')
			if i+1 < len(line) && (line[i+1] == '|' || line[i+1] == '&') {
				i++
			}
			start, piped = i+1, pipe
		}
	}
	return append(out, span{start, len(line), piped})
}

// operands are a command's words that are no options.
func operands(f []string) []string {
	var out []string
	for _, w := range f {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, ">") {
			continue
		}
		out = append(out, w)
	}
	return out
}

// inPlaceFiles are the files a sed -i or perl -pi command (its words
// f) edits: every operand after its script (sed's first operand when
// no -e names one; the word after -e, -f or perl's -pie and the like is
// a script, not a file). A glob (*.go) is kept as written: blame
// matches it against the files of the repository.
func inPlaceFiles(f []string) []string {
	perl := f[0] == "perl"
	script := false
	var files []string
	for i := 1; i < len(f); i++ {
		w := f[i]
		switch {
		case w == "-e" || w == "--expression" || w == "-f" || w == "--file" || w == "-E" && perl:
			script = true
			i++
		case perl && strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.HasSuffix(w, "e"):
			script = true
			i++
		case w == "--" || w == "":
		case strings.HasPrefix(w, "-") || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<"):
		case !script && !perl:
			script = true
		case !script && perl:
			// perl's script as its first operand: no -e, a script file.
			return nil
		default:
			files = append(files, w)
		}
	}
	return files
}

// fedInPlace reads a sed -i or perl -pi whose files another command
// gives: grep -l … DIR | xargs sed -i …, or find DIR … -exec sed -i … {}
// (f, the command's words; seg, as written). The files are those under
// the directories searched (a glob: DIR/**, with find's -name), and the
// command is the sed's own, so that its substitution is read.
func fedInPlace(seg string, f []string) []Change {
	k := slices.IndexFunc(f, func(w string) bool { return w == "sed" || w == "perl" })
	if k < 0 || !inPlace(f[k:]) {
		return nil
	}
	at := strings.Index(seg, f[k]+" ")
	if at < 0 {
		return nil
	}
	cmd := seg[at:]
	var globs []string
	if f[0] == "find" {
		name := "*"
		for i := 1; i < k; i++ {
			if (f[i] == "-name" || f[i] == "-iname") && i+1 < k {
				name = f[i+1]
			}
		}
		for _, w := range f[1:k] {
			if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "(") || w == "!" {
				break
			}
			globs = append(globs, strings.TrimSuffix(w, "/")+"/**/"+name)
		}
		if len(globs) == 0 {
			globs = []string{"./**/" + name}
		}
	} else {
		// The files xargs is fed are not in its words: any file under
		// the work directory, as far as the command tells.
		globs = []string{"./**"}
	}
	var out []Change
	for _, g := range globs {
		out = append(out, Change{Op: loom.EditShell, Path: g, Command: cmd})
	}
	return out
}

// inPlace says whether sed or perl edits its files in place.
func inPlace(f []string) bool {
	for _, w := range f[1:] {
		if strings.HasPrefix(w, "-i") || w == "--in-place" || strings.HasPrefix(w, "-pi") || strings.HasPrefix(w, "-p") && strings.Contains(w, "i") {
			return true
		}
	}
	return false
}
