package blame

import (
	"regexp"
	"strings"

	"github.com/loomhq/loom/internal/shell"
)

// substitution reads the s/// of a sed -i or perl -pi command: a
// function that applies it to one line, false when the command holds
// none that can be read (another sed command, a script file, an
// expression over several lines). Several expressions (-e A -e B, or
// s///; s/// in one) are applied in turn, as sed does.
func substitution(cmd string) (func(string) string, bool) {
	f := shell.Words(cmd)
	if len(f) == 0 {
		return nil, false
	}
	prog := f[0][strings.LastIndexByte(f[0], '/')+1:]
	if prog != "sed" && prog != "perl" {
		return nil, false
	}
	ere := prog == "perl"
	var scripts []string
	for i := 1; i < len(f); i++ {
		w := f[i]
		switch {
		case w == "-e" || w == "--expression":
			if i+1 < len(f) {
				scripts = append(scripts, f[i+1])
			}
			i++
		case w == "-E" || w == "-r" || w == "--regexp-extended":
			ere = true
		case strings.HasPrefix(w, "-") && prog == "perl" && strings.HasSuffix(w, "e") && !strings.HasPrefix(w, "--"):
			// perl -pi -e, -pie
			if i+1 < len(f) {
				scripts = append(scripts, f[i+1])
			}
			i++
		case strings.HasPrefix(w, "-") || w == "":
			// An option, or the empty suffix of BSD sed's -i ''.
		case len(scripts) == 0 && prog == "sed":
			scripts = append(scripts, w)
		}
	}
	var subs []func(string) string
	for _, script := range scripts {
		for _, one := range splitScript(script) {
			sub, ok := oneSubstitution(one, prog == "perl", ere)
			if !ok {
				return nil, false
			}
			subs = append(subs, sub)
		}
	}
	if len(subs) == 0 {
		return nil, false
	}
	return func(line string) string {
		for _, sub := range subs {
			line = sub(line)
		}
		return line
	}, true
}

// splitScript splits a script into its commands at the ; or line ends
// between them (those inside an s/// are its own).
func splitScript(script string) []string {
	var out []string
	rest := strings.TrimSpace(script)
	for rest != "" {
		if len(rest) < 2 || rest[0] != 's' {
			return append(out, rest)
		}
		d, n := rest[1], 0
		end := len(rest)
		for i := 2; i < len(rest); i++ {
			if rest[i] == '\\' {
				i++
				continue
			}
			if rest[i] == d {
				if n++; n == 2 {
					// The flags run to the next ; or line end.
					end = i + 1 + strings.IndexFunc(rest[i+1:]+";", func(r rune) bool { return r == ';' || r == '\n' })
					break
				}
			}
		}
		out = append(out, rest[:end])
		rest = strings.TrimSpace(strings.TrimLeft(rest[min(end, len(rest)):], ";\n"))
	}
	return out
}

// oneSubstitution reads one s/// command of sed's (ere: its extended
// syntax) or perl's.
func oneSubstitution(script string, perl, ere bool) (func(string) string, bool) {
	script = strings.TrimSuffix(strings.TrimSpace(script), ";")
	if len(script) < 4 || script[0] != 's' {
		return nil, false
	}
	d := script[1]
	parts, ok := splitUnescaped(script[2:], d)
	if !ok || len(parts) != 3 {
		return nil, false
	}
	pat, repl, flags := parts[0], parts[1], strings.TrimSpace(parts[2])
	if strings.ContainsAny(flags, "emsx") && perl || strings.Contains(flags, "w") {
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
	template := goTemplate(repl, perl)
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
