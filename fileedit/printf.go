package fileedit

import (
	"strconv"
	"strings"
)

// printed is what an echo or printf command (its words f, quotes
// removed; seg the command as written) writes to its output, when its
// words say it: no expansion ($, a command's output) outside single
// quotes, and a printf format of plain text, escapes and %s or %d. Its
// words stop at the first redirect.
func printed(seg string, f []string) (string, bool) {
	if len(f) == 0 || expands(seg) {
		return "", false
	}
	var args []string
	for _, w := range f[1:] {
		if strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<") || strings.HasPrefix(w, "1>") {
			break
		}
		args = append(args, w)
	}
	switch f[0] {
	case "echo":
		newline, escapes := true, false
		for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
			newline = newline && !strings.Contains(args[0], "n")
			escapes = strings.Contains(args[0], "e")
			args = args[1:]
		}
		out := strings.Join(args, " ")
		if escapes {
			var ok bool
			if out, ok = unescape(out); !ok {
				return "", false
			}
		}
		if newline {
			out += "\n"
		}
		return out, true
	case "printf":
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return "", false
		}
		return format(args[0], args[1:])
	}
	return "", false
}

// format is printf's output of format and its arguments: the format
// again for the arguments left, as printf does, each %s or %d one of
// them.
func format(f string, args []string) (string, bool) {
	var b strings.Builder
	for first := true; first || len(args) > 0; first = false {
		used := false
		for i := 0; i < len(f); i++ {
			c := f[i]
			switch {
			case c == '%' && i+1 < len(f):
				i++
				switch f[i] {
				case '%':
					b.WriteByte('%')
				case 's', 'd':
					used = true
					if len(args) > 0 {
						if f[i] == 'd' {
							if _, err := strconv.Atoi(args[0]); err != nil {
								return "", false
							}
						}
						b.WriteString(args[0])
						args = args[1:]
					} else if f[i] == 'd' {
						b.WriteByte('0')
					}
				default:
					return "", false
				}
			case c == '%':
				return "", false
			case c == '\\' && i+1 < len(f):
				s, ok := unescape(f[i : i+2])
				if !ok {
					return "", false
				}
				b.WriteString(s)
				i++
			default:
				b.WriteByte(c)
			}
		}
		if !used {
			break
		}
	}
	return b.String(), true
}

// unescape reads the backslash escapes of echo -e and printf's format
// (\n, \t, \\ and the quotes); another is not read.
func unescape(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '\\', '\'', '"':
			b.WriteByte(s[i])
		default:
			return "", false
		}
	}
	return b.String(), true
}

// expands says whether a command line holds an expansion outside
// single quotes ($VAR, $(…), `…`, a glob in a word's text is none):
// what it prints is then not in its words.
func expands(seg string) bool {
	var q byte
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case q == '\'':
			if c == '\'' {
				q = 0
			}
		case c == '\\' && i+1 < len(seg):
			i++
		case c == '\'' && q == 0:
			q = c
		case c == '"':
			if q == '"' {
				q = 0
			} else {
				q = c
			}
		case c == '`', c == '$' && i+1 < len(seg) && seg[i+1] != ' ' && seg[i+1] != '"':
			return true
		}
	}
	return false
}
