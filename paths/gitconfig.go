package paths

import (
	"bytes"
	"fmt"
	"strings"
)

// configVar is one variable of a git config file: section and key in
// lower case, the subsection as written.
type configVar struct {
	section, subsection, key, value string
}

// parseGitConfig reads the variables of a git config file in the order
// they appear, by the syntax of git-config(1): [section] and
// [section "subsection"] headers (and the old [section.subsection]),
// comments after # or ;, values with quotes, escapes and a backslash at
// the end of a line continuing it. A key without '=' has the value "".
// [include] and [includeIf] are read as variables like any other: the
// files they name are not read.
//
// It is written here rather than taken from a library because the INI
// readers that follow git's syntax map sections into structs, which
// loses the order of remotes, and a parse error costs nothing worse than
// the path rule (see DetectProject).
func parseGitConfig(b []byte) ([]configVar, error) {
	b = bytes.ReplaceAll(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), []byte("\r\n"), []byte("\n"))
	var vars []configVar
	var section, sub string
	line := 1
	for i := 0; i < len(b); {
		bad := fmt.Errorf("bad config line %d", line)
		switch c := b[i]; {
		case c == '\n':
			line++
			i++
		case isConfigSpace(c):
			i++
		case c == '#' || c == ';':
			i = endOfLine(b, i)
		case c == '[':
			var ok bool
			if section, sub, i, ok = parseSectionHeader(b, i+1); !ok {
				return nil, bad
			}
		case isLetter(c) && section != "":
			start := i
			for i < len(b) && (isLetter(b[i]) || b[i] >= '0' && b[i] <= '9' || b[i] == '-') {
				i++
			}
			v := configVar{section: section, subsection: sub, key: strings.ToLower(string(b[start:i]))}
			for i < len(b) && isConfigSpace(b[i]) {
				i++
			}
			switch {
			case i < len(b) && b[i] == '=':
				var lines int
				var ok bool
				if v.value, i, lines, ok = parseConfigValue(b, i+1); !ok {
					return nil, bad
				}
				line += lines
			case i < len(b) && b[i] != '\n' && b[i] != '#' && b[i] != ';':
				return nil, bad
			}
			vars = append(vars, v)
		default:
			return nil, bad
		}
	}
	return vars, nil
}

// parseSectionHeader reads a section header from just after its '[' and
// returns the index just after its ']'.
func parseSectionHeader(b []byte, i int) (section, sub string, next int, ok bool) {
	start := i
	for i < len(b) && (isLetter(b[i]) || b[i] >= '0' && b[i] <= '9' || b[i] == '-' || b[i] == '.') {
		i++
	}
	name := strings.ToLower(string(b[start:i]))
	if name == "" || i >= len(b) {
		return "", "", i, false
	}
	if b[i] == ']' {
		section, sub, _ = strings.Cut(name, ".")
		return section, sub, i + 1, section != ""
	}
	for i < len(b) && isConfigSpace(b[i]) {
		i++
	}
	if i >= len(b) || b[i] != '"' {
		return "", "", i, false
	}
	var s strings.Builder
	for i++; i < len(b) && b[i] != '"'; i++ {
		if b[i] == '\\' {
			i++
		}
		if i >= len(b) || b[i] == '\n' {
			return "", "", i, false
		}
		s.WriteByte(b[i])
	}
	if i+1 >= len(b) || b[i+1] != ']' {
		return "", "", i, false
	}
	return name, s.String(), i + 2, true
}

// parseConfigValue reads a value from just after its '=' up to the end
// of its line (not consumed), and says how many line ends continuations
// took. Unquoted whitespace around it is dropped; within it, each
// whitespace character counts as one space, as git reads it.
func parseConfigValue(b []byte, i int) (value string, next, lines int, ok bool) {
	var s strings.Builder
	quoted, spaces := false, 0
	for ; i < len(b) && b[i] != '\n'; i++ {
		c := b[i]
		if !quoted && isConfigSpace(c) {
			if s.Len() > 0 {
				spaces++
			}
			continue
		}
		if !quoted && (c == '#' || c == ';') {
			i = endOfLine(b, i)
			break
		}
		s.WriteString(strings.Repeat(" ", spaces))
		spaces = 0
		switch c {
		case '"':
			quoted = !quoted
		case '\\':
			if i++; i >= len(b) {
				return "", i, lines, false
			}
			switch e := b[i]; e {
			case '\n':
				lines++
			case '\\', '"':
				s.WriteByte(e)
			case 'n':
				s.WriteByte('\n')
			case 't':
				s.WriteByte('\t')
			case 'b':
				s.WriteByte('\b')
			default:
				return "", i, lines, false
			}
		default:
			s.WriteByte(c)
		}
	}
	return s.String(), i, lines, !quoted
}

func endOfLine(b []byte, i int) int {
	if n := bytes.IndexByte(b[i:], '\n'); n >= 0 {
		return i + n
	}
	return len(b)
}

func isConfigSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
