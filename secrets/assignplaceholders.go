package secrets

import (
	"bytes"
	"encoding/base64"
	"strings"
	"unicode"
)

// Values that stand for a secret rather than being one: placeholders,
// references to secrets kept elsewhere, words of docs and tests.

// symbolsOnly reports whether v holds no letter and no digit (!@#$%^&*()):
// a mask or a test of a form's rules, not a password.
func symbolsOnly(v string) bool {
	for _, r := range v {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// passphrase reports whether v is four words or more of three to ten
// lower-case letters joined by one separator (- . _ or a space).
func passphrase(v string) bool {
	var sep byte
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == '-' || c == '.' || c == '_' || c == ' ' {
			sep = c
			break
		}
	}
	if sep == 0 {
		return false
	}
	words := strings.Split(v, string(sep))
	if len(words) < 4 {
		return false
	}
	for _, w := range words {
		if len(w) < 3 || len(w) > 10 || strings.ToLower(w) != w || !identLike(w) || strings.ContainsAny(w, "-._") {
			return false
		}
	}
	return !placeholder(v)
}

// plain64 decodes v when it is base64 (padded as encoders pad it) of
// printable text of three bytes or more: short values too, which
// decode64 leaves alone.
func plain64(v string) (string, bool) {
	if len(v) < 4 || len(v)%4 != 0 {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(v)
	// echo adds a newline to what it gives base64 (test-api-key\n).
	b = bytes.TrimSuffix(b, []byte("\n"))
	if err != nil || len(b) < 3 {
		return "", false
	}
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return "", false
		}
	}
	return string(b), true
}

// weakPlain reports whether d, decoded from base64, is a word of a
// tutorial rather than a secret: a word of a format, a placeholder, or
// a short lower-case word.
func weakPlain(d string) bool {
	l := strings.ToLower(d)
	return wordValues[l] || placeholderWord(d) || placeholder(d) || len(d) <= 12 && identLike(d) && l == d || counted(l, 10)
}

// reference reports whether v names a secret kept elsewhere rather
// than holding it: an environment variable, a template, a secret
// manager's address.
func reference(v string) bool {
	l := strings.ToLower(v)
	if pyFormat().MatchString(v) || templated(v) {
		return true
	}
	for _, p := range []string{"<%", "$(", "process.env", "os.environ", "os.getenv", "getenv(", "env(", "env[",
		"secrets.", "vars.", "var.", "local.", "data.", "module.", "vault:", "arn:aws", "projects/", "op://", "awssecretsmanager",
		"keyvault", "enc[", "sops", "!ref", "!sub", "!getatt", "lookup(", "config.", "settings.", "params.", "args.", "props.",
		"this.", "self.", "ctx.", "context.", "request.", "req.", "opts.", "options.", "cfg.", "conf.", "environ[", "env.",
		"import.meta", "deno.env", "system.getenv", "environment.get", "configuration[", "dotenv"} {
		if strings.Contains(l, p) {
			return true
		}
	}
	for _, p := range []string{"env:", "file:", "fd:", "keychain:", "secret:", "vault://", "awskms:"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	for _, p := range []string{} {
		if strings.Contains(l, p) {
			return true
		}
	}
	return false
}

// templated reports whether v holds a template's or a shell's
// reference: {{ .Values.password }}, ${{ secrets.TOKEN }}, ${DB_PASS},
// ${DB_PASS:-dev}, or one cut short where v ends ({{ .Values.pw, pw }}).
// Braces that do not pair as a template's do (m{{h}o)p${e]nob(ody…}})
// are a password's characters.
func templated(v string) bool {
	if strings.Contains(v, "}}") && !strings.Contains(v, "{{") {
		return true
	}
	for i := 0; i+1 < len(v); i++ {
		if v[i+1] != '{' || v[i] != '{' && v[i] != '$' {
			continue
		}
		rest := v[i+2:]
		if v[i] == '{' {
			j := strings.IndexAny(rest, "{}")
			if j < 0 || strings.HasPrefix(rest[j:], "}}") {
				return true
			}
			continue
		}
		if strings.HasPrefix(rest, "{") {
			// ${{ …}}: the {{ is read next.
			continue
		}
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			j = len(rest)
		}
		if !strings.ContainsAny(rest[:j], "{$<>#") && paired(rest[:j]) {
			return true
		}
	}
	return false
}

// paired reports whether the brackets and parentheses of s close in
// the order they open (cfg["pw"], f(x)).
func paired(s string) bool {
	var open []byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[':
			open = append(open, c)
		case ')', ']':
			want := byte('(')
			if c == ']' {
				want = '['
			}
			if len(open) == 0 || open[len(open)-1] != want {
				return false
			}
			open = open[:len(open)-1]
		}
	}
	return len(open) == 0
}

// prose reports whether v, holding spaces, reads as a sentence rather
// than a passphrase.
func prose(v string) bool {
	words := strings.Fields(strings.ToLower(v))
	if len(words) > 5 {
		return true
	}
	for _, w := range words {
		switch strings.Trim(w, ".,:;!?") {
		case "the", "a", "an", "your", "is", "be", "must", "enter", "to", "of", "at", "for", "with", "and", "or", "not", "here", "this", "that", "in", "on", "new", "my":
			return true
		}
	}
	return false
}

// reservedStart reports whether v starts as a reference, a template, a
// structure or a comment rather than a value: ${VAR}, $VAR, %VAR%,
// <token>, (sensitive value), [a, b], {…}, !Ref, &anchor, *alias, an
// unquoted # comment. A password that merely starts with one of these
// characters is still a password.
func reservedStart(v string, quoted bool) bool {
	rest := v[1:]
	switch v[0] {
	case '$':
		return rest != "" && (rest[0] == '{' || rest[0] == '(' || rest[0] == '_' || rest[0] >= 'A' && rest[0] <= 'Z' || identLikeAny(rest))
	case '%':
		return strings.HasSuffix(rest, "%") || strings.HasPrefix(rest, "(")
	case '<':
		return angled(strings.ToLower(v))
	case ':':
		// :public_key.generate_key(…), :secret: an atom of Elixir or
		// Ruby, unquoted in code.
		return !quoted && rest != "" && (rest[0] >= 'a' && rest[0] <= 'z' || rest[0] == '_')
	case '(':
		return strings.HasSuffix(rest, ")")
	case '[':
		return strings.HasSuffix(rest, "]") || !quoted
	case '{':
		return strings.HasSuffix(rest, "}") || !quoted
	case '!':
		return rest != "" && (rest[0] >= 'A' && rest[0] <= 'Z' || rest[0] == '!')
	case '&', '*':
		return identLikeAny(strings.ReplaceAll(rest, "-", "_"))
	case '#':
		return !quoted
	case '@':
		return identLikeAny(rest)
	}
	return false
}

// placeholderWord reports whether v is a word standing for a password in
// docs and tests: pass3, password16, secret1, someuser's somepassword,
// letters alone around a credential word.
func placeholderWord(v string) bool {
	l := strings.ToLower(strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '_' || r == ':' || r == '.' || r == '\'' || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, v))
	if chosenPassword(v) {
		// letmein, admin123, open sesame: passwords people choose,
		// not words that stand for one.
		return false
	}
	base := strings.TrimRight(l, "0123456789")
	switch base {
	case "pass", "password", "passwd", "pwd", "pw", "test", "user", "admin", "demo", "sample", "foo", "bar", "baz", "qux", "changeme", "changethis", "notasecret", "anoncvs", "anonymous", "guest", "token", "apikey", "key", "bearer", "auth", "leakabletoken":
		return len(l)-len(base) <= 4
	}
	if l == "550e8400e29b41d4a716446655440000" {
		// The example UUID of RFC 4122's text, in every doc.
		return true
	}
	// Letters and digits of placeholder words only: test123TEST,
	// user@123, my-secret-key, testpass.
	letters := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r
		}
		return -1
	}, l)
	if letters == "secret" && l != v {
		// Secret123: the word with digits of one's own and a capital,
		// as a password's rules ask, is a password someone set (a
		// stand-in says secret123, password1 or pass3).
		return false
	}
	if digits := len(l) - len(strings.TrimRight(l, "0123456789")); digits >= 3 && strings.ToLower(v[1:]) != v[1:] && strings.ToUpper(v) != v {
		// secretKey456: words with a capital inside and digits of
		// one's own after them, as a password's rules ask, are a
		// password someone set (a stand-in says secretkey or
		// password123).
		return false
	}
	if len(letters) >= 4 && len(letters)*2 >= len(strings.TrimFunc(l, func(r rune) bool { return r < '0' })) && madeOf(letters, placeholderParts) {
		return true
	}
	return false
}

// placeholderParts are the words placeholder passwords are made of.
var placeholderParts = []string{"password", "passwd", "pass", "secret", "test", "admin", "user", "demo", "changeme", "change", "example",
	"sample", "dummy", "fake", "my", "your", "key", "token", "dev", "local", "default", "db", "app", "root", "pwd",
	"super", "some", "the", "mock", "foo", "bar", "baz", "word", "pw", "redis", "mysql", "postgres", "pg", "mongo", "rabbit", "api",
	"new", "old", "temp", "tmp", "local", "docker", "secure", "proxy", "repo", "sql"}

// madeOf reports whether s is parts put end to end.
func madeOf(s string, parts []string) bool {
	if s == "" {
		return true
	}
	for _, p := range parts {
		if strings.HasPrefix(s, p) && madeOf(s[len(p):], parts) {
			return true
		}
	}
	return false
}

// weakWord reports whether v, found as a password where a structure says
// it is one (a .pgpass or .netrc line, a URL), stands for one rather
// than being one: a placeholder, a word of docs and tests (pwd3, foo,
// pass word), a documented sample (scott's tiger, Redis's foobared),
// or words in lower case joined by a dash (too-late-in-file). A word
// of one's own (hunter2, heymoe, goodspec) is a password someone chose.
func weakWord(v string) bool {
	if chosenPassword(v) {
		return false
	}
	l := strings.ToLower(v)
	return placeholder(v) || wordValues[l] || placeholderWord(v) || sampleWords[l] || joinedWords(v)
}

// joinedWords reports whether v is words in lower case joined by _ or
// a dash (too-late-in-file, smtp_password): a name more often than a
// password, where code's names can stand.
func joinedWords(v string) bool {
	return strings.ToLower(v) == v && wordIdent(strings.ReplaceAll(v, "-", "_")) && strings.ContainsAny(v, "-_") && len(v) <= 24
}

// sampleWords are the passwords documentation gives in its examples
// (Oracle's and SQLAlchemy's scott/tiger, Redis's foobared, Microsoft's
// contoso), and the words that are a label or a
// setting's kind where a password's name is given one (a form's
// "confirm", pg_hba's "md5" and "trust", a store's "keyring").
var sampleWords = map[string]bool{
	"tiger": true, "foobared": true, "contoso": true, "fabrikam": true,
	"hello": true, "world": true, "helloworld": true, "foobar": true, "foobarbaz": true, "secret": true,
	"mysecret": true, "topsecret": true, "s3cr3t": true, "pass": true, "login": true, "abc": true, "abcd": true,
	"abcdef": true, "asdf": true, "asdfasdf": true, "nopass": true, "nopassword": true,
	"blank": true, "nothing": true, "ignored": true, "unused": true, "invalid": true, "wrong": true,
	"incorrect": true, "bad": true, "badpass": true, "badpassword": true, "wrongpass": true,
	"wrongpassword": true, "correct": true, "valid": true, "other": true, "another": true, "different": true,
	"new": true, "old": true, "current": true, "confirm": true, "repeat": true, "again": true, "same": true,
	"short": true, "long": true, "weak": true, "strong": true, "simple": true, "complex": true, "plain": true,
	"plaintext": true, "cleartext": true, "encrypted": true, "hashed": true, "hash": true, "salt": true,
	"sha256": true, "md5": true, "bcrypt": true, "argon2": true, "pbkdf2": true, "scrypt": true, "crypt": true,
	"ssh": true, "http": true, "https": true, "ftp": true, "ldap": true, "oauth": true, "jwt": true,
	"local": true, "remote": true, "file": true, "stdin": true, "keyring": true, "keychain": true,
	"vault": true, "kms": true, "aws": true, "gcp": true, "azure": true, "docker": true, "kubernetes": true,
	"service": true, "system": true, "server": true, "client": true, "database": true, "mysql": true,
	"postgres": true, "postgresql": true, "mongo": true, "mongodb": true, "redis": true, "rabbitmq": true,
	"mariadb": true, "oracle": true, "sqlite": true, "mssql": true, "elastic": true, "kibana": true,
	"grafana": true, "jenkins": true, "gitlab": true, "github": true, "minio": true, "minioadmin": true,
	"manager": true, "operator": true, "superuser": true, "sysadmin": true, "administrator": true,
	"username": true, "usern": true, "login1": true, "name": true, "email": true, "mail": true,
	"field": true, "input": true, "form": true, "label": true, "text": true, "show": true, "hide": true,
	"visible": true, "reset": true, "forgot": true, "change": true, "update": true, "create": true,
	"submit": true, "cancel": true, "enter": true, "type": true, "verify": true, "match": true,
	"mismatch": true, "length": true, "policy": true, "rules": true, "expired": true, "expires": true,
	"required": true, "optional": true, "disabled": true, "enabled": true, "allow": true, "deny": true,
	"ask": true, "interactive": true, "never": true, "always": true, "manual": true, "external": true,
	"internal": true, "inline": true, "config": true, "settings": true, "options": true, "secrets": true,
	"credentials": true, "creds": true, "auth": true, "basic": true, "digest": true, "bearer": true,
	"sasl": true, "scram": true, "kerberos": true, "ntlm": true, "trust": true, "peer": true, "ident": true,
	"reject": true, "sspi": true, "cert": true, "radius": true, "pam": true, "native": true,
}

// knownPrefixes start the tokens of providers that write their kind
// into their keys.
var knownPrefixes = []string{"sk_test_", "sk_live_", "rk_test_", "rk_live_", "pk_test_", "pk_live_", "xoxb-", "xoxp-", "xoxa-", "xoxe-",
	"xoxs-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "sk-ant-", "sk-proj-", "sk-", "akia", "aiza", "hf_", "npm_",
	"whsec_", "shpat_", "dop_v1_", "sg."}

// shortPrefixed reports whether v is a provider's prefix with a few
// characters after it (sk_test_123, xoxb-111, ghp_xxx): a stand-in in
// docs and tests, since every real one is longer.
func shortPrefixed(v string) bool {
	l := strings.ToLower(v)
	for _, p := range knownPrefixes {
		if strings.HasPrefix(l, p) {
			return len(v) < 20
		}
	}
	return false
}

// decodedPlaceholder reports whether v is base64 of a placeholder
// (bXktc2VjcmV0LWtleQ== is my-secret-key, and user:not my real
// password is no password either).
func decodedPlaceholder(v string) bool {
	if len(v) < 8 || len(v)%4 != 0 {
		return false
	}
	dec, ok := decode64(v)
	if !ok {
		return false
	}
	l := strings.ToLower(dec)
	if _, pw, found := strings.Cut(dec, ":"); found && weakWord(pw) {
		return true
	}
	return strings.Contains(l, "not my real") || strings.Contains(l, "example") || placeholderWord(dec) || placeholder(dec)
}
