package blame

import (
	"regexp"
	"strings"
)

// substitution reads the s/// of a sed -i or perl -pi command: a
// function that applies it to one line, false when the command holds
// none that can be read (another sed command, a script file, an
// expression over several lines).
func substitution(cmd string) (func(string) string, bool) {
	f := words(cmd)
	if len(f) == 0 {
		return nil, false
	}
	prog := f[0][strings.LastIndexByte(f[0], '/')+1:]
	if prog != "sed" && prog != "perl" {
		return nil, false
	}
	ere := prog == "perl"
	var script string
	for i := 1; i < len(f); i++ {
		w := f[i]
		switch {
		case w == "-e" || w == "--expression":
			if i+1 < len(f) && script == "" {
				script = f[i+1]
			}
			i++
		case w == "-E" || w == "-r" || w == "--regexp-extended":
			ere = true
		case strings.HasPrefix(w, "-") && prog == "perl" && strings.HasSuffix(w, "e") && !strings.HasPrefix(w, "--"):
			// perl -pi -e, -pie
			if i+1 < len(f) && script == "" {
				script = f[i+1]
			}
			i++
		case strings.HasPrefix(w, "-"):
		case script == "" && prog == "sed":
			script = w
		}
	}
	script = strings.TrimSuffix(strings.TrimSpace(script), ";")
	if len(script) < 4 || script[0] != 's' {
		return nil, false
	}
	d := script[1]
	parts, ok := splitUnescaped(script[2:], d)
	if !ok || len(parts) != 3 {
		return nil, false
	}
	pat, repl, flags := parts[0], parts[1], parts[2]
	if strings.ContainsAny(flags, "emsx") && prog == "perl" || strings.Contains(flags, "w") {
		return nil, false
	}
	if !ere {
		pat = breToERE(pat)
	}
	if strings.Contains(flags, "i") || strings.Contains(flags, "I") {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, false
	}
	template := goTemplate(repl, prog == "perl")
	all := strings.Contains(flags, "g")
	return func(line string) string {
		if all {
			return re.ReplaceAllString(line, template)
		}
		loc := re.FindStringSubmatchIndex(line)
		if loc == nil {
			return line
		}
		var b []byte
		b = re.ExpandString(b, template, line, loc)
		return line[:loc[0]] + string(b) + line[loc[1]:]
	}, true
}

// splitUnescaped splits s at unescaped d, an escaped d taken as d.
func splitUnescaped(s string, d byte) ([]string, bool) {
	var out []string
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == d:
			b.WriteByte(d)
			i++
		case s[i] == '\\' && i+1 < len(s):
			b.WriteByte('\\')
			b.WriteByte(s[i+1])
			i++
		case s[i] == d:
			out = append(out, b.String())
			b.Reset()
		default:
			b.WriteByte(s[i])
		}
	}
	out = append(out, b.String())
	return out, len(out) == 3
}

// breToERE turns a basic regular expression (sed's own) into the
// syntax of package regexp: \( \) \{ \} \+ \? \| are its operators,
// and ( ) { } + ? | themselves.
func breToERE(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p) && strings.IndexByte("(){}+?|", p[i+1]) >= 0:
			b.WriteByte(p[i+1])
			i++
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
		case strings.IndexByte("(){}+?|", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// goTemplate turns a replacement (sed's & and \1, perl's $1) into
// package regexp's template.
func goTemplate(r string, perl bool) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '\\' && i+1 < len(r) && r[i+1] >= '0' && r[i+1] <= '9':
			b.WriteString("${" + string(r[i+1]) + "}")
			i++
		case c == '\\' && i+1 < len(r) && r[i+1] == 'n':
			b.WriteByte('\n')
			i++
		case c == '\\' && i+1 < len(r):
			if r[i+1] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(r[i+1])
			}
			i++
		case c == '&' && !perl:
			b.WriteString("${0}")
		case c == '$' && perl && i+1 < len(r) && r[i+1] >= '0' && r[i+1] <= '9':
			b.WriteString("${" + string(r[i+1]) + "}")
			i++
		case c == '$':
			b.WriteString("$$")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// words splits a command into words, quotes removed.
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
