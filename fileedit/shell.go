package fileedit

import (
	"regexp"
	"strings"
	"sync"

	"github.com/loomhq/loom"
)

// maxShell bounds the command line a shell call is read for.
const maxShell = 1 << 20

var heredoc = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<<-?\s*(?:'([^'\n]+)'|"([^"\n]+)"|([A-Za-z_][A-Za-z0-9_]*))`)
})

// fromShell reads what a shell command line tells of the files it
// wrote: a patch it applied (Codex's apply_patch run as a command), a
// here-document written or appended to a file (cat > f <<EOF, tee f
// <<EOF), moves and removals (mv, git mv, rm, git rm); a file it
// wrote otherwise (a redirect of a program's output, sed -i, cp) is
// named with what cannot be known of it left out (loom.EditShell).
func fromShell(cmd string) []Change {
	if len(cmd) > maxShell {
		return nil
	}
	if strings.Contains(cmd, "*** Begin Patch") {
		return ParsePatch(cmd)
	}
	var out []Change
	lines := strings.Split(cmd, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := heredoc().FindStringSubmatchIndex(line); m != nil {
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
			head := line[:m[0]] + line[m[1]:]
			if target, appending, ok := heredocTarget(head); ok {
				text := strings.Join(body, "\n")
				if appending {
					out = append(out, Change{Op: loom.EditChange, Path: target, Replace: []Replacement{{New: text}}})
				} else {
					out = append(out, Change{Op: loom.EditWrite, Path: target, Content: text + "\n"})
				}
				i = j
				continue
			}
			out = append(out, simpleCommands(head)...)
			i = j
			continue
		}
		out = append(out, simpleCommands(line)...)
	}
	return out
}

// heredocTarget is the file a here-document's command writes: the
// target of its redirect, or tee's file.
func heredocTarget(head string) (path string, appending, ok bool) {
	f := words(head)
	for i, w := range f {
		switch {
		case (w == ">" || w == ">>") && i+1 < len(f):
			return f[i+1], w == ">>", true
		case strings.HasPrefix(w, ">>") && len(w) > 2:
			return w[2:], true, true
		case strings.HasPrefix(w, ">") && len(w) > 1 && w[1] != '&':
			return w[1:], false, true
		}
	}
	for i, w := range f {
		if w == "tee" {
			app := false
			for _, a := range f[i+1:] {
				if a == "-a" || a == "--append" {
					app = true
					continue
				}
				if !strings.HasPrefix(a, "-") && a != "|" {
					return a, app, true
				}
			}
		}
	}
	return "", false, false
}

// simpleCommands reads the commands of one line, split at ;, &&, ||
// and |.
func simpleCommands(line string) []Change {
	var out []Change
	for _, seg := range splitCommands(line) {
		f := words(seg)
		if len(f) == 0 {
			continue
		}
		if f[0] == "git" && len(f) > 1 {
			f = f[1:]
		}
		args := operands(f[1:])
		switch f[0] {
		case "mv":
			if len(args) == 2 {
				out = append(out, Change{Op: loom.EditMove, Path: args[1], From: args[0]})
			}
		case "rm":
			for _, a := range args {
				out = append(out, Change{Op: loom.EditDelete, Path: a})
			}
		case "sed", "perl":
			if inPlace(f) && len(args) > 1 {
				out = append(out, Change{Op: loom.EditShell, Path: args[len(args)-1], Command: seg})
			}
		case "cp":
			if len(args) == 2 {
				out = append(out, Change{Op: loom.EditShell, Path: args[1], Command: seg})
			}
		}
		for i, w := range f {
			target := ""
			switch {
			case (w == ">" || w == ">>") && i+1 < len(f):
				target = f[i+1]
			case strings.HasPrefix(w, ">") && len(w) > 1 && w[1] != '&' && w != ">>":
				target = strings.TrimPrefix(strings.TrimPrefix(w, ">"), ">")
			}
			if target != "" && target != "/dev/null" && !strings.HasPrefix(target, "&") {
				out = append(out, Change{Op: loom.EditShell, Path: target, Command: seg})
			}
		}
	}
	return out
}

// splitCommands splits a line at ;, &&, || and |, outside quotes.
func splitCommands(line string) []string {
	var out []string
	var q byte
	start := 0
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
			out = append(out, line[start:i])
			if i+1 < len(line) && (line[i+1] == '|' || line[i+1] == '&') {
				i++
			}
			start = i + 1
		}
	}
	return append(out, line[start:])
}

// words splits a command into words, quotes removed; a redirect's
// operator is a word of its own unless written against its file.
func words(s string) []string {
	var out []string
	var b strings.Builder
	var q byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else {
				b.WriteByte(c)
			}
		case c == '\'' || c == '"':
			q, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		case c == '2' && !in && i+1 < len(s) && s[i+1] == '>':
			// 2> and 2>&1: the error stream, no file of the command's.
			j := i + 2
			for j < len(s) && s[j] != ' ' {
				j++
			}
			i = j
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
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

// inPlace says whether sed or perl edits its files in place.
func inPlace(f []string) bool {
	for _, w := range f[1:] {
		if strings.HasPrefix(w, "-i") || w == "--in-place" || strings.HasPrefix(w, "-pi") || strings.HasPrefix(w, "-p") && strings.Contains(w, "i") {
			return true
		}
	}
	return false
}
