package fileedit

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxScript bounds the script a code-mode call is read for.
const maxScript = 1 << 20

// scriptCall is one call of a nested tool a code-mode script makes
// (tools.apply_patch(…), tools.exec_command({cmd: …})): its tool, and
// its argument as text (a string's) or as an object's string members.
type scriptCall struct {
	tool  string
	text  string
	obj   map[string]string
	isObj bool
}

// scriptCalls reads the calls of nested tools in a script of Codex's
// code mode (its exec tool: JavaScript whose global tools object holds
// Codex's other tools, apply_patch and exec_command among them). An
// argument is read when it is a string literal (quoted or a template
// without substitutions), an object literal of such strings, or a
// constant bound to one earlier in the script; what cannot be read
// without running the script is left out.
func scriptCalls(src string) []scriptCall {
	if len(src) > maxScript {
		return nil
	}
	consts := map[string]string{}
	var out []scriptCall
	for i := 0; i < len(src); {
		if j, skipped, ok := skipLiteral(src, i); !ok {
			return out
		} else if skipped {
			i = j
			continue
		}
		if w, ok := wordAt(src, i); ok {
			rest := i + len(w)
			switch w {
			case "const", "let", "var":
				if j, ok := bindConst(src, rest, consts); ok {
					i = j
					continue
				}
			case "tools":
				if c, j, ok := toolCall(src, rest, consts); ok {
					out = append(out, c)
					i = j
					continue
				}
			}
			i = rest
			continue
		}
		i++
	}
	return out
}

// skipLiteral returns the index after the comment or string literal
// that starts at src[i], and whether one does; ok is false for one
// that does not end (the rest of the script is not read).
func skipLiteral(src string, i int) (next int, skipped, ok bool) {
	switch {
	case src[i] == '/' && i+1 < len(src) && src[i+1] == '/':
		for i < len(src) && src[i] != '\n' {
			i++
		}
		return i, true, true
	case src[i] == '/' && i+1 < len(src) && src[i+1] == '*':
		end := strings.Index(src[i+2:], "*/")
		if end < 0 {
			return i, false, false
		}
		return i + end + 4, true, true
	case src[i] == '"' || src[i] == '\'' || src[i] == '`':
		_, n, ok := jsString(src[i:])
		if !ok {
			return i, false, false
		}
		return i + n, true, true
	}
	return i, false, true
}

// bindConst reads `NAME = "literal"` after const, let or var (rest is
// the index after the keyword) into consts, and returns the index
// after the literal; false when what follows is not that.
func bindConst(src string, rest int, consts map[string]string) (int, bool) {
	j := skipSpace(src, rest)
	name, ok := wordAt(src, j)
	if !ok {
		return 0, false
	}
	j = skipSpace(src, j+len(name))
	if j >= len(src) || src[j] != '=' || j+1 < len(src) && src[j+1] == '=' {
		return 0, false
	}
	j = skipSpace(src, j+1)
	s, n, ok := jsString(src[j:])
	if !ok {
		return 0, false
	}
	consts[name] = s
	return j + n, true
}

// toolCall reads `.NAME(arg)` or `["NAME"](arg)` after the word tools
// (rest is the index after it): the call, and the index after its
// argument; false when what follows is no call of a tool with an
// argument callArg reads.
func toolCall(src string, rest int, consts map[string]string) (scriptCall, int, bool) {
	j := skipSpace(src, rest)
	var tool string
	if j < len(src) && src[j] == '.' {
		j = skipSpace(src, j+1)
		tool, _ = wordAt(src, j)
		j += len(tool)
	} else if j < len(src) && src[j] == '[' {
		if s, n, ok := jsString(src[skipSpace(src, j+1):]); ok {
			tool = s
			j = skipSpace(src, skipSpace(src, j+1)+n)
			if j < len(src) && src[j] == ']' {
				j++
			}
		}
	}
	j = skipSpace(src, j)
	if tool == "" || j >= len(src) || src[j] != '(' {
		return scriptCall{}, 0, false
	}
	c, n, ok := callArg(src[j+1:], consts)
	if !ok {
		return scriptCall{}, 0, false
	}
	c.tool = tool
	return c, j + 1 + n, true
}

// callArg reads a call's argument at the start of s: a string, a
// constant, or an object literal of them.
func callArg(s string, consts map[string]string) (scriptCall, int, bool) {
	i := skipSpace(s, 0)
	if str, n, ok := jsString(s[i:]); ok {
		return scriptCall{text: str}, i + n, true
	}
	if w, ok := wordAt(s, i); ok {
		if v, ok := consts[w]; ok {
			return scriptCall{text: v}, i + len(w), true
		}
		return scriptCall{}, 0, false
	}
	if i >= len(s) || s[i] != '{' {
		return scriptCall{}, 0, false
	}
	obj := map[string]string{}
	i++
	for {
		i = skipSpace(s, i)
		if i >= len(s) {
			return scriptCall{}, 0, false
		}
		if s[i] == '}' {
			return scriptCall{obj: obj, isObj: true}, i + 1, true
		}
		var key string
		if k, n, ok := jsString(s[i:]); ok {
			key, i = k, i+n
		} else if w, ok := wordAt(s, i); ok {
			key, i = w, i+len(w)
		} else {
			return scriptCall{}, 0, false
		}
		i = skipSpace(s, i)
		if i < len(s) && (s[i] == ',' || s[i] == '}') {
			// Shorthand {cmd}: the constant of that name.
			if v, ok := consts[key]; ok {
				obj[key] = v
			}
			if s[i] == ',' {
				i++
			}
			continue
		}
		if i >= len(s) || s[i] != ':' {
			return scriptCall{}, 0, false
		}
		i = skipSpace(s, i+1)
		if v, n, ok := jsString(s[i:]); ok {
			obj[key], i = v, i+n
		} else if w, ok := wordAt(s, i); ok {
			if v, ok := consts[w]; ok {
				obj[key] = v
			}
			i += len(w)
		} else {
			// A value of another kind (a number, an array): skipped to
			// the next member.
			depth := 0
			for i < len(s) && (depth > 0 || s[i] != ',' && s[i] != '}') {
				switch s[i] {
				case '[', '{', '(':
					depth++
				case ']', '}', ')':
					depth--
				}
				i++
			}
		}
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// wordAt is the identifier that starts at s[i], when one does (and is
// not the end of a longer one).
func wordAt(s string, i int) (string, bool) {
	if i >= len(s) || !identStart(s[i]) || i > 0 && identPart(s[i-1]) {
		return "", false
	}
	j := i + 1
	for j < len(s) && identPart(s[j]) {
		j++
	}
	return s[i:j], true
}

func identStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func identPart(c byte) bool { return identStart(c) || c >= '0' && c <= '9' }

// jsString reads the JavaScript string literal that starts s: its value,
// its length in s, and whether it is one (a template with a
// substitution is not: its value is not known).
func jsString(s string) (string, int, bool) {
	if s == "" || s[0] != '"' && s[0] != '\'' && s[0] != '`' {
		return "", 0, false
	}
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), i + 1, true
		case c == '\n' && q != '`':
			return "", 0, false
		case c == '$' && q == '`' && i+1 < len(s) && s[i+1] == '{':
			return "", 0, false
		case c == '\\' && i+1 < len(s):
			i = jsEscape(s, i+1, &b)
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

// jsEscape writes to b what the escape at s[i] (the byte after a
// backslash) stands for, and returns the index of its last byte.
func jsEscape(s string, i int, b *strings.Builder) int {
	switch e := s[i]; e {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'v':
		b.WriteByte('\v')
	case '0':
		b.WriteByte(0)
	case '\n':
		// A line continuation.
	case 'x':
		if i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteRune(rune(v))
				return i + 2
			}
		}
		b.WriteByte(e)
	case 'u':
		if end, ok := jsUnicode(s, i, b); ok {
			return end
		}
		b.WriteByte(e)
	default:
		b.WriteByte(e)
	}
	return i
}

// jsUnicode writes to b the character of the \u escape at s[i] (the
// u): \u{…}, or four hex digits and, for a surrogate, the pair's
// second half. It returns the index of the escape's last byte, and
// whether it is one.
func jsUnicode(s string, i int, b *strings.Builder) (int, bool) {
	if i+1 < len(s) && s[i+1] == '{' {
		if end := strings.IndexByte(s[i:], '}'); end > 0 {
			if v, err := strconv.ParseUint(s[i+2:i+end], 16, 32); err == nil && utf8.ValidRune(rune(v)) {
				b.WriteRune(rune(v))
				return i + end, true
			}
		}
		return i, false
	}
	if i+4 >= len(s) {
		return i, false
	}
	v, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
	if err != nil {
		return i, false
	}
	r := rune(v)
	i += 4
	// A surrogate pair.
	if utf8.ValidRune(r) {
		b.WriteRune(r)
	} else if i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
		if lo, err := strconv.ParseUint(s[i+3:i+7], 16, 16); err == nil {
			b.WriteRune((r-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000)
			i += 6
		}
	}
	return i, true
}

// fromScript reads the changes of a code-mode script: the patches it
// applied and what its shell commands tell, each command's in the
// directory it names (Dir, resolved against the session's).
func fromScript(src string) []Change {
	var out []Change
	for _, c := range scriptCalls(src) {
		switch nameSeparators.Replace(strings.ToLower(c.tool)) {
		case "applypatch":
			text := c.text
			if c.isObj {
				text = firstOf(c.obj, "input", "patch")
			}
			out = append(out, ParsePatch(text)...)
		case "execcommand", "shell", "shellcommand":
			cmd := c.text
			dir := ""
			if c.isObj {
				cmd, dir = firstOf(c.obj, "cmd", "command"), firstOf(c.obj, "workdir", "cwd")
			}
			for _, ch := range fromShell(cmd) {
				if dir != "" {
					ch.Dir = within(dir, ch.Dir)
				}
				out = append(out, ch)
			}
		}
	}
	return out
}

func firstOf(m map[string]string, keys ...string) string {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return ""
}
