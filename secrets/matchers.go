package secrets

import (
	"encoding/base64"
	"regexp"
	"strings"
	"sync"
)

// A matcher is a built-in rule that reads context rather than a shape:
// a value given to a name that says secret, a Kubernetes Secret's data,
// a .pgpass line. It finds with Go code where an expression would be
// slow or could not say it.
type matcher struct {
	id          string
	description string
	// keywords, when set, are words (lower case) of which a text must
	// hold one for the matcher to run on it; at are then where they are.
	keywords []string
	find     func(text string, at []int, out []Finding) []Finding
}

// matchers are the built-in matchers, in the order they run.
var matchers = []matcher{
	{id: "secret-assignment", description: "a value given to a name that says secret (password, api_key, client_secret, token …) in code, JSON, YAML, properties, URLs' query, flags and XML; dotenv-secret for .env and shell lines",
		keywords: []string{"pass", "pwd", "_pw", "pw_", "-pw", "secret", "token", "key", "cred", "auth", "pat", "sas", "jwt", "bearer"},
		find:     findAssignments},
	{id: "kubernetes-secret", description: "the values of a Kubernetes Secret's data and stringData",
		keywords: []string{"secret"}, find: findKubernetesSecret},
	{id: "docker-auth", description: "registry credentials of a Docker config.json (auths)",
		keywords: []string{"auths"}, find: findDockerAuth},
	{id: "pgpass", description: "the password of a .pgpass line (host:port:database:user:password)",
		find: findPgpass},
	{id: "netrc-password", description: "the password of a .netrc machine entry",
		keywords: []string{"machine"}, find: findNetrc},
	{id: "cookie", description: "session and authentication cookies in Cookie and Set-Cookie headers",
		keywords: []string{"cookie"}, find: findCookies},
	{id: "terraform-sensitive", description: "the values Terraform's state, plan and outputs mark sensitive",
		keywords: []string{"sensitive_attributes", "after_sensitive", "sensitive_values", "\"sensitive\""}, find: findTerraform},
	{id: "echoed-variable", description: "the value a command printed of a variable whose name says secret (printenv API_TOKEN, echo $DB_PASSWORD)",
		keywords: []string{"printenv", "echo"}, find: findEchoed},
	{id: serviceKeyID, description: "a key of no shape of its own right after its service's name (cloze: …, kanban '…'), in one of the formats the service issues",
		find: findServiceKeys},
	{id: "token-shape", description: "tokens known by their shape alone: Discord bot tokens, Mailgun keys",
		find: findShapes},
}

// dotenvID is the id the assignment matcher gives to .env and shell
// lines.
const dotenvID = "dotenv-secret"

// sessionCookies are names of cookies that hold a session or a login.
var sessionCookies = []string{"sess", "sid", "token", "auth", "jwt", "login", "remember", "csrf", "xsrf", "identity", "refresh", "access", "secure-", "host-", "user_session", "_gh_sess", "credential", "key"}

// findCookies returns the values of session and login cookies, and of
// any cookie whose value looks random, in Cookie and Set-Cookie headers.
func findCookies(text string, at []int, out []Finding) []Finding {
	for _, p := range at {
		i, end, set, ok := cookieHeader(text, p)
		if !ok {
			continue
		}
		out = cookieValues(text[i:end], i, set, out)
	}
	return out
}

// cookieHeader returns where the value of the Cookie or Set-Cookie
// header whose name ends with the "cookie" at text[p] is, within its
// quotes or to its line's end; set says Set-Cookie. ok is false when the
// word names no header.
func cookieHeader(text string, p int) (i, end int, set, ok bool) {
	i = p + len("cookie")
	for i < len(text) && (text[i] == '"' || text[i] == '\'' || text[i] == '\\') {
		i++
	}
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i >= len(text) || text[i] != ':' && text[i] != '=' {
		return 0, 0, false, false
	}
	// A header's name ends there: Cookie, Set-Cookie, cookie.
	if p > 0 && isNameByte(text[p-1]) && text[p-1] != '-' {
		return 0, 0, false, false
	}
	set = p >= 4 && strings.EqualFold(text[p-4:p], "set-")
	i++
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	// 'Cookie': 'a=b; c=d' (a dict's repr), "Cookie": "…" (JSON).
	var quote byte
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		quote = text[i]
		i++
	}
	return i, headerEnd(text, i, quote), set, true
}

// headerEnd returns where the header's value that starts at text[i]
// ends: at its closing quote (when quote is not 0), at any quote
// otherwise, at its line's end.
func headerEnd(text string, i int, quote byte) int {
	end := i
	for end < len(text) && text[end] != '\n' && text[end] != '\r' && (quote == 0 && text[end] != '"' && text[end] != '\'' || text[end] != quote) {
		// A header line in a repr (b'…\r\nCookie: a=b\r\n…') ends at
		// its escaped line break.
		if text[end] == '\\' && end+1 < len(text) && (text[end+1] == 'r' || text[end+1] == 'n') {
			break
		}
		end++
	}
	return end
}

// cookieValues appends the findings of a Cookie header's value, which
// starts at off in the text: the values of session and login cookies,
// and of any cookie whose value looks random (of Set-Cookie, the cookie
// set, not its attributes).
func cookieValues(header string, off int, set bool, out []Finding) []Finding {
	for k, pair := range strings.Split(header, ";") {
		start := off
		off += len(pair) + 1
		if set && k > 0 {
			break
		}
		eq := strings.IndexByte(pair, '=')
		if eq <= 0 {
			continue
		}
		name := strings.ToLower(strings.TrimSpace(pair[:eq]))
		v := strings.TrimSpace(pair[eq+1:])
		if len(v) < 8 || placeholder(v) || wordValues[strings.ToLower(v)] {
			continue
		}
		session := false
		for _, s := range sessionCookies {
			if strings.Contains(name, s) {
				session = true
				break
			}
		}
		if !session && !(len(v) >= 16 && Entropy(v) >= 3.5) {
			continue
		}
		vs := start + eq + 1 + strings.Index(pair[eq+1:], v)
		out = append(out, Finding{RuleID: "cookie", Start: vs, End: vs + len(v)})
	}
	return out
}

// findShapes returns the tokens that have a shape of their own but no
// prefix to look for: Discord bot tokens (base64 of a user id, a
// timestamp and an HMAC, joined by dots) and Mailgun's newer keys (32,
// 8 and 8 hex digits).
func findShapes(text string, _ []int, out []Finding) []Finding {
	// Found in the one pass over the runs of token characters
	// (Detector.findBase64, which calls shapeRuns); this is the
	// matcher's entry, for its id and description.
	return out
}

// shapeRuns appends the tokens of a known shape among the runs of name
// characters in text[i:j].
func shapeRuns(text string, i, j int, out []Finding) []Finding {
	for s := i; s < j; {
		if !nameBytes[text[s]] {
			s++
			continue
		}
		e, sep := s+1, false
		for e < j && nameBytes[text[e]] {
			sep = sep || text[e] == '.' || text[e] == '-'
			e++
		}
		if n := e - s; sep && n >= 49 && n <= 80 {
			tok := text[s:e]
			if discordToken(tok) || mailgunKey(tok) {
				id := "discord-bot-token"
				if tok[0] != 'M' && tok[0] != 'N' && tok[0] != 'O' {
					id = "mailgun-api-key"
				}
				out = append(out, Finding{RuleID: id, Start: s, End: e})
			}
		}
		s = e
	}
	return out
}

// nameBytes holds the bytes of names and tokens: letters, digits, _ - .
var nameBytes = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = isNameByte(byte(c))
	}
	return t
}()

func discordToken(t string) bool {
	if t[0] != 'M' && t[0] != 'N' && t[0] != 'O' {
		return false
	}
	parts := strings.Split(t, ".")
	if len(parts) != 3 || len(parts[0]) < 23 || len(parts[0]) > 28 || len(parts[1]) != 6 || len(parts[2]) < 27 || len(parts[2]) > 40 {
		return false
	}
	for _, p := range parts {
		if strings.ContainsAny(p, ".") {
			return false
		}
	}
	return Entropy(parts[2]) >= 3.5
}

func mailgunKey(t string) bool {
	if len(t) != 50 || t[32] != '-' || t[41] != '-' {
		return false
	}
	for k := 0; k < len(t); k++ {
		if k == 32 || k == 41 {
			continue
		}
		if c := t[k]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return Entropy(t) >= 3.3
}

// findTerraform returns the values that Terraform's own JSON marks
// sensitive: in a state (sensitive_attributes' get_attr steps), a plan
// (after_sensitive, sensitive_values) and outputs ("sensitive": true
// beside a "value").
func findTerraform(text string, at []int, out []Finding) []Finding {
	names := map[string]bool{}
	for _, m := range tfGetAttr().FindAllStringSubmatch(text, -1) {
		names[m[1]+m[2]] = true
	}
	for _, m := range tfSensitiveMap().FindAllStringSubmatch(text, -1) {
		for _, k := range tfTrue().FindAllStringSubmatch(m[1], -1) {
			names[k[1]] = true
		}
	}
	delete(names, "id")
	for name := range names {
		key := `"` + name + `"`
		for from := 0; ; {
			i := strings.Index(text[from:], key)
			if i < 0 {
				break
			}
			i += from + len(key)
			from = i
			j := i
			for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r') {
				j++
			}
			if j >= len(text) || text[j] != ':' {
				continue
			}
			j++
			for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r') {
				j++
			}
			switch {
			case j < len(text) && text[j] == '"':
				if e := jsonStringEnd(text, j); e > j+1 {
					out = append(out, Finding{RuleID: "terraform-sensitive", Start: j + 1, End: e})
				}
			case j < len(text) && text[j] == '{':
				out = jsonObjectValues(text, j, 0, out, "terraform-sensitive")
			}
		}
	}
	// terraform output -json: {"name": {"sensitive": true, "type": …, "value": "…"}}
	for _, p := range at {
		if !strings.HasPrefix(text[p:], `"sensitive"`) {
			continue
		}
		seg := text[p:min(len(text), p+300)]
		if !tfSensitiveTrue().MatchString(seg) {
			continue
		}
		if m := tfValue().FindStringSubmatchIndex(seg); m != nil && m[3] > m[2] {
			out = append(out, Finding{RuleID: "terraform-sensitive", Start: p + m[2], End: p + m[3]})
		}
	}
	return out
}

// jsonStringEnd returns where the JSON string that starts at text[i]
// (a quote) ends (its closing quote), or i when it does not.
func jsonStringEnd(text string, i int) int {
	for k := i + 1; k < len(text); k++ {
		switch text[k] {
		case '\\':
			k++
		case '"':
			return k
		case '\n':
			return i
		}
	}
	return i
}

var (
	tfGetAttr = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`"type"\s*:\s*"get_attr"\s*,\s*"value"\s*:\s*"([^"]+)"|"value"\s*:\s*"([^"]+)"\s*,\s*"type"\s*:\s*"get_attr"`)
	})
	tfSensitiveMap = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`"(?:after_sensitive|sensitive_values)"\s*:\s*\{([^{}]*)\}`)
	})
	tfTrue          = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"([^"]+)"\s*:\s*true`) })
	tfSensitiveTrue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\A"sensitive"\s*:\s*true`) })
	tfValue         = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"value"\s*:\s*"((?:[^"\\]|\\.)*)"`) })
)

// unescaped reports whether s holds c other than escaped with \.
func unescaped(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == c {
			return true
		}
	}
	return false
}

// placeholderAuth reports whether v is base64 of user:password where the
// password stands for one ("isaacs:not my real password", "user:pass").
func placeholderAuth(v string) bool {
	dec, ok := decode64(v)
	if !ok {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return false
		}
		dec = string(b)
	}
	_, pw, found := strings.Cut(dec, ":")
	l := strings.ToLower(pw)
	return found && (weakWord(pw) || strings.Contains(l, "not my real") || strings.Contains(l, "example"))
}

// echoCommand is a command that prints one variable: printenv NAME,
// echo $NAME, echo "${NAME}".
var echoCommand = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:\bprintenv\s+([A-Za-z_][A-Za-z0-9_]*)|\becho\s+(?:-n\s+)?"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?)[ \t]*(?:\\n|"|$|\n)`)
})

// echoedName returns the variable command prints, when it prints one
// variable whose name says secret.
func echoedName(command string) (string, bool) {
	m := echoCommand().FindStringSubmatch(command)
	if m == nil {
		return "", false
	}
	name := m[1] + m[2]
	return name, nameClass(name) != notSecret
}

// echoedValue reports whether out, what such a command printed, is one
// value that can be a secret.
func echoedValue(out string) bool {
	v := strings.TrimSpace(out)
	return len(v) >= 8 && len(v) <= 512 && !strings.ContainsAny(v, " \t\n") && !placeholder(v) && !placeholderWord(v) && !reference(v)
}

// findEchoed returns the value printed after a command that prints a
// variable whose name says secret, in a text that holds both (a
// search's body: the call's input, then its output).
func findEchoed(text string, at []int, out []Finding) []Finding {
	for _, p := range at {
		seg := text[p:min(len(text), p+200)]
		if _, ok := echoedName(seg); !ok {
			continue
		}
		nl := strings.IndexByte(seg, '\n')
		if nl < 0 {
			continue
		}
		s := p + nl + 1
		e := s
		for e < len(text) && text[e] != '\n' {
			e++
		}
		line := strings.TrimSpace(text[s:e])
		line = strings.Trim(line, `"`)
		line = strings.TrimSuffix(line, `\n`)
		if !echoedValue(line) {
			continue
		}
		k := strings.Index(text[s:e], line)
		out = append(out, Finding{RuleID: "echoed-variable", Start: s + k, End: s + k + len(line)})
	}
	return out
}
