package secrets

import (
	"regexp"
	"strings"
	"sync"
)

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
	for _, m := range pairRe().FindAllStringSubmatchIndex(body, -1) {
		if m[3]-m[2] >= 4 && !plainSecretData(strings.Trim(body[m[0]:m[2]], "\"' :\t"), body[m[2]:m[3]]) {
			out = append(out, Finding{RuleID: id, Start: off + i + m[2], End: off + i + m[3]})
		}
	}
	return out
}

// pairRe is one key and string value of a JSON object or flow mapping.
var pairRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`["']?[\w.-]+["']?\s*:\s*["']?([^"',}\s]+)`) })

// findDockerAuth returns the credentials of a Docker config.json's
// auths: each registry's auth (base64 of user:password) and identity
// token.
func findDockerAuth(text string, at []int, out []Finding) []Finding {
	for _, p := range at {
		seg := text[p:min(len(text), p+4096)]
		for _, m := range dockerAuthRe().FindAllStringSubmatchIndex(seg, -1) {
			v := seg[m[2]:m[3]]
			if placeholder(v) || placeholderAuth(v) {
				continue
			}
			out = append(out, Finding{RuleID: "docker-auth", Start: p + m[2], End: p + m[3]})
		}
	}
	return out
}

var dockerAuthRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"(?:auth|identitytoken|registrytoken|password)"\s*:\s*"([^"\s]{4,})"`)
})

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
		m := netrcRe().FindStringSubmatchIndex(seg)
		if m == nil || weakWord(seg[m[2]:m[3]]) {
			continue
		}
		out = append(out, Finding{RuleID: "netrc-password", Start: p + m[2], End: p + m[3]})
	}
	return out
}

// A diff's + may start each of its lines.
var netrcRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\Amachine\s+\S+\s+(?:\+\s*)?(?:login\s+\S+\s+(?:\+\s*)?)?password\s+(\S{3,})`)
})
