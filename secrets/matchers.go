package secrets

import (
	"encoding/base64"
	"regexp"
	"strings"
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

// findKubernetesSecret returns the values of the data and stringData
// of each Kubernetes Secret in text (YAML or JSON), which are secrets
// whatever they hold (base64 of a password, a token, a file).
func findKubernetesSecret(text string, _ []int, out []Finding) []Finding {
	lower := strings.ToLower(text)
	if !strings.Contains(lower, "kind: secret") && !strings.Contains(lower, `"kind": "secret"`) && !strings.Contains(lower, `"kind":"secret"`) {
		return out
	}
	// Each YAML document, or the whole text.
	off := 0
	for _, doc := range strings.SplitAfter(text, "\n---") {
		l := strings.ToLower(doc)
		if strings.Contains(l, "kind: secret") || strings.Contains(l, `"kind": "secret"`) || strings.Contains(l, `"kind":"secret"`) {
			out = secretData(doc, off, out)
		}
		off += len(doc)
	}
	return out
}

// secretData returns the values under each data: and stringData: key of
// doc (whose offset in the text is off).
func secretData(doc string, off int, out []Finding) []Finding {
	for _, key := range []string{"data:", "stringData:", `"data":`, `"stringData":`} {
		for from := 0; ; {
			i := strings.Index(doc[from:], key)
			if i < 0 {
				break
			}
			i += from
			from = i + len(key)
			if i > 0 && isNameByte(doc[i-1]) && doc[i-1] != '"' {
				continue
			}
			if key[0] == '"' {
				out = jsonObjectValues(doc, from, off, out, "kubernetes-secret")
				continue
			}
			out = yamlBlockValues(doc, i, from, off, out)
		}
	}
	return out
}

// yamlBlockValues returns the values of the keys indented under the key
// at doc[at:from] (key: value lines, and block scalars |, >).
func yamlBlockValues(doc string, at, from, off int, out []Finding) []Finding {
	ls := strings.LastIndexByte(doc[:at], '\n') + 1
	indent := at - ls
	rest := doc[from:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 || strings.TrimSpace(rest[:nl]) != "" && !strings.HasPrefix(strings.TrimSpace(rest[:nl]), "#") {
		// data: {k: v} in flow style.
		return flowValues(doc, from, off, out)
	}
	pos := from + nl + 1
	block := -1 // the indentation of a block scalar's key, inside one
	file := -1  // the same, for a block scalar holding a config file
	for pos < len(doc) {
		end := strings.IndexByte(doc[pos:], '\n')
		line := doc[pos:]
		if end >= 0 {
			line = doc[pos : pos+end]
		}
		trimmed := strings.TrimLeft(line, " ")
		ind := len(line) - len(trimmed)
		if strings.TrimSpace(line) != "" {
			if ind <= indent {
				break
			}
			switch {
			case file >= 0 && ind > file:
				// A config file's line: what it holds under a
				// secret's name the other matchers find.
			case block >= 0 && ind > block:
				v := strings.TrimRight(trimmed, " \r")
				if len(v) >= 4 {
					out = append(out, Finding{RuleID: "kubernetes-secret", Start: off + pos + ind, End: off + pos + ind + len(v)})
				}
			case strings.HasPrefix(trimmed, "{{") || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "{%"):
				// A template's directive ({{- range … }}), a comment.
			default:
				block, file, out = yamlEntry(trimmed, pos, ind, off, out)
			}
		}
		if end < 0 {
			break
		}
		pos += end + 1
	}
	return out
}

// yamlEntry reads the line trimmed of a Secret's data, a key's, at pos
// and indented by ind: the start of a block scalar (block, or file for
// one holding a config file, is then the key's indentation; both are
// -1 otherwise), or the key's value, found.
func yamlEntry(trimmed string, pos, ind, off int, out []Finding) (block, file int, _ []Finding) {
	block, file = -1, -1
	k := strings.Index(trimmed, ":")
	if k <= 0 {
		return block, file, out
	}
	v := strings.TrimSpace(trimmed[k+1:])
	v = strings.TrimRight(v, "\r")
	if c := strings.Index(v, " #"); c > 0 && !strings.ContainsAny(v[:1], `"'`) {
		// key: value  # a comment
		v = strings.TrimSpace(v[:c])
	}
	switch {
	case (v == "|" || v == "|-" || v == "|+") && configFile(trimmed[:k]):
		file = ind
	case v == "|" || v == ">" || v == "|-" || v == ">-" || v == "|+" || v == ">+":
		block = ind
	case len(v) >= 4 && !strings.Contains(v, "{{") && !strings.HasPrefix(v, "$") && !strings.HasPrefix(v, "=") && !placeholder(strings.Trim(v, `"'`)) && !placeholderWord(v) && !strings.HasPrefix(strings.Trim(v, `"'`), "value") && !plainSecretData(trimmed[:k], strings.Trim(v, `"'`)):
		q := strings.Trim(v, `"'`)
		s := pos + ind + k + 1 + strings.Index(trimmed[k+1:], q)
		out = append(out, Finding{RuleID: "kubernetes-secret", Start: off + s, End: off + s + len(q)})
	}
	return block, file, out
}

// configFile reports whether a Secret's key names a config file
// (prometheus.yml, alertmanager.yaml, app.conf) and nothing about
// credentials: a Secret mounts whole files so, and their settings are
// no secrets but where their names say so, as anywhere else. A key
// that says credentials (credentials.yaml, htpasswd, auth.json, key.pem)
// or a .env file keeps its whole value a secret.
func configFile(key string) bool {
	key = strings.ToLower(strings.Trim(key, `"' `))
	dot := strings.LastIndexByte(key, '.')
	if dot <= 0 {
		return false
	}
	switch key[dot+1:] {
	case "yml", "yaml", "json", "toml", "ini", "conf", "cfg", "properties", "xml", "hcl":
	default:
		return false
	}
	for _, w := range []string{"cred", "secret", "pass", "auth", "token", "key", "cert", "jwk", "htpasswd", "netrc", "pgpass", "account", "login", "env"} {
		if strings.Contains(key[:dot], w) {
			return false
		}
	}
	return true
}

// plainSecretData reports whether a Secret's value under key is no
// secret for all that: what names a thing (a username, an account's
// name, an address, a host), or a word of a tutorial once decoded
// (admin, demo, mypassword).
func plainSecretData(key, v string) bool {
	words := nameWords(key)
	if n := len(words); n > 1 && (words[n-1] == "in" || words[n-1] == "out") {
		// username_in, password_out: iSCSI's CHAP of each direction.
		words = words[:n-1]
	}
	if len(words) > 0 {
		switch words[len(words)-1] {
		case "user", "username", "login", "name", "accountname", "address", "url", "uri", "host", "hostname",
			"endpoint", "port", "region", "email", "domain", "namespace", "bucket", "database", "db":
			return true
		}
		if len(words) == 1 && (strings.HasSuffix(words[0], "name") || strings.HasSuffix(words[0], "username")) {
			// azurestorageaccountname: a name written as one word.
			return true
		}
	}
	d, ok := plain64(v)
	if !ok {
		d = v
	}
	return len(d) < 4 || weakPlain(d)
}

// flowValues returns the values of a one-line mapping {k: v, k2: v2}
// that starts after from.
func flowValues(doc string, from, off int, out []Finding) []Finding {
	i := strings.IndexByte(doc[from:], '{')
	if i < 0 || strings.ContainsRune(doc[from:from+i], '\n') {
		return out
	}
	return jsonObjectValues(doc, from, off, out, "kubernetes-secret")
}

// jsonObjectValues returns the string values of the object that starts
// after from ("k": "v", …), up to its closing brace.
func jsonObjectValues(doc string, from, off int, out []Finding, id string) []Finding {
	i := strings.IndexByte(doc[from:], '{')
	if i < 0 || i > 8 {
		return out
	}
	i += from + 1
	end := strings.IndexByte(doc[i:], '}')
	if end < 0 {
		end = len(doc) - i
	}
	body := doc[i : i+end]
	for _, m := range pairRe.FindAllStringSubmatchIndex(body, -1) {
		if m[3]-m[2] >= 4 && !plainSecretData(strings.Trim(body[m[0]:m[2]], "\"' :\t"), body[m[2]:m[3]]) {
			out = append(out, Finding{RuleID: id, Start: off + i + m[2], End: off + i + m[3]})
		}
	}
	return out
}

// pairRe is one key and string value of a JSON object or flow mapping.
var pairRe = regexp.MustCompile(`["']?[\w.-]+["']?\s*:\s*["']?([^"',}\s]+)`)

// findDockerAuth returns the credentials of a Docker config.json's
// auths: each registry's auth (base64 of user:password) and identity
// token.
func findDockerAuth(text string, at []int, out []Finding) []Finding {
	for _, p := range at {
		seg := text[p:min(len(text), p+4096)]
		for _, m := range dockerAuthRe.FindAllStringSubmatchIndex(seg, -1) {
			v := seg[m[2]:m[3]]
			if placeholder(v) || placeholderAuth(v) {
				continue
			}
			out = append(out, Finding{RuleID: "docker-auth", Start: p + m[2], End: p + m[3]})
		}
	}
	return out
}

var dockerAuthRe = regexp.MustCompile(`"(?:auth|identitytoken|registrytoken|password)"\s*:\s*"([^"\s]{4,})"`)

// findPgpass returns the passwords of .pgpass lines:
// hostname:port:database:username:password, the port a number or *.
func findPgpass(text string, _ []int, out []Finding) []Finding {
	if strings.Count(text, ":") < 4 {
		return out
	}
	for pos := 0; pos < len(text); {
		end := strings.IndexByte(text[pos:], '\n')
		line := text[pos:]
		if end >= 0 {
			line = text[pos : pos+end]
		}
		if f, ok := pgpassLine(line); ok {
			out = append(out, Finding{RuleID: "pgpass", Start: pos + f[0], End: pos + f[1]})
		}
		if end < 0 {
			break
		}
		pos += end + 1
	}
	return out
}

// pgpassLine returns where the password of a .pgpass line is; a line
// that is the start of a JSON string ({"stdout":"host:…) is read from
// its quote.
func pgpassLine(line string) ([2]int, bool) {
	if f, ok := pgpassFields(line, false); ok {
		return f, true
	}
	// The start of a JSON string ({"stdout":"host:5432:…), tried from
	// each of the line's first quotes.
	for q, n := 0, 0; n < 8; n++ {
		k := strings.IndexByte(line[q:], '"')
		if k < 0 {
			break
		}
		q += k + 1
		if f, ok := pgpassFields(line[q:], true); ok {
			return [2]int{f[0] + q, f[1] + q}, true
		}
	}
	return [2]int{}, false
}

func pgpassFields(line string, inString bool) ([2]int, bool) {
	line = strings.TrimRight(line, "\r")
	if len(line) < 9 || len(line) > 512 || strings.Count(line, ":") < 4 {
		return [2]int{}, false
	}
	lead := len(line) - len(strings.TrimLeft(line, " \t+"))
	fields := strings.SplitN(line[lead:], ":", 5)
	if len(fields) != 5 {
		return [2]int{}, false
	}
	host, port, db, user, pw := fields[0], fields[1], fields[2], fields[3], fields[4]
	if q := strings.IndexByte(pw, '"'); q >= 0 && inString {
		pw = pw[:q]
	}
	if host == "" || db == "" || user == "" || len(pw) < 3 || strings.ContainsAny(pw, " \t|") || unescaped(pw, ':') {
		return [2]int{}, false
	}
	if allDigits(host) || allDigits(db) || allDigits(user) {
		// /etc/shadow (root:*:20228:0:…), hex dumps (31:62:e9:…).
		return [2]int{}, false
	}
	if port != "*" && (len(port) < 2 || len(port) > 5 || !allDigits(port)) {
		return [2]int{}, false
	}
	for _, f := range []string{host, db, user} {
		if strings.ContainsAny(f, " \t\"'/=|") {
			return [2]int{}, false
		}
	}
	if weakWord(pw) {
		return [2]int{}, false
	}
	s := lead + len(host) + len(port) + len(db) + len(user) + 4
	return [2]int{s, s + len(pw)}, true
}

// findNetrc returns the passwords of .netrc entries (machine HOST login
// USER password PASSWORD, on one line or several).
func findNetrc(text string, at []int, out []Finding) []Finding {
	for _, p := range at {
		seg := text[p:min(len(text), p+400)]
		m := netrcRe.FindStringSubmatchIndex(seg)
		if m == nil || weakWord(seg[m[2]:m[3]]) {
			continue
		}
		out = append(out, Finding{RuleID: "netrc-password", Start: p + m[2], End: p + m[3]})
	}
	return out
}

var netrcRe = regexp.MustCompile(`\Amachine\s+\S+\s+(?:login\s+\S+\s+)?password\s+(\S{3,})`)

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
	for _, m := range tfGetAttr.FindAllStringSubmatch(text, -1) {
		names[m[1]+m[2]] = true
	}
	for _, m := range tfSensitiveMap.FindAllStringSubmatch(text, -1) {
		for _, k := range tfTrue.FindAllStringSubmatch(m[1], -1) {
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
		if !tfSensitiveTrue.MatchString(seg) {
			continue
		}
		if m := tfValue.FindStringSubmatchIndex(seg); m != nil && m[3] > m[2] {
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
	tfGetAttr       = regexp.MustCompile(`"type"\s*:\s*"get_attr"\s*,\s*"value"\s*:\s*"([^"]+)"|"value"\s*:\s*"([^"]+)"\s*,\s*"type"\s*:\s*"get_attr"`)
	tfSensitiveMap  = regexp.MustCompile(`"(?:after_sensitive|sensitive_values)"\s*:\s*\{([^{}]*)\}`)
	tfTrue          = regexp.MustCompile(`"([^"]+)"\s*:\s*true`)
	tfSensitiveTrue = regexp.MustCompile(`\A"sensitive"\s*:\s*true`)
	tfValue         = regexp.MustCompile(`"value"\s*:\s*"((?:[^"\\]|\\.)*)"`)
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
var echoCommand = regexp.MustCompile(`(?:\bprintenv\s+([A-Za-z_][A-Za-z0-9_]*)|\becho\s+(?:-n\s+)?"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?)[ \t]*(?:\\n|"|$|\n)`)

// echoedName returns the variable command prints, when it prints one
// variable whose name says secret.
func echoedName(command string) (string, bool) {
	m := echoCommand.FindStringSubmatch(command)
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
