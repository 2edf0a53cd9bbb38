package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// The test of a value given to a name that says secret: whether it
// reads as one.

// telegramToken is a Telegram bot token as Telegram issues them: the
// bot's id, a colon, and 35 characters starting with A.
var telegramToken = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{5,16}:A[A-Za-z0-9_-]{34}$`) })

// brokenTelegram reports whether v, given to a name that says
// Telegram, starts as a bot token does (digits, a colon, an A) but is
// not one: a test's token with a part too short or too long.
func brokenTelegram(name, v string) bool {
	i := strings.IndexByte(v, ':')
	if i <= 0 || i+1 >= len(v) || v[i+1] != 'A' || !allDigits(v[:i]) || !strings.Contains(strings.ToLower(name), "telegram") {
		return false
	}
	return !telegramToken().MatchString(v)
}

// envWord reports whether v, at s in text, is a word of lower-case
// letters that an environment variable's line gives a password's name
// (REACT_APP_AUTH_PASSWORD=whiteduke): a setting's value is the password
// it sets, whatever word it is, unless it is a word that stands for one
// (changeme, password1, test) or a word of a format (true, none). A
// line commented out counts. Elsewhere (YAML, code) a short word is
// read as a name or a test's.
func envWord(text string, s int, v string) bool {
	if len(v) < 4 || len(v) > 24 || s == 0 || text[s-1] != '=' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 'a' || v[i] > 'z' {
			return false
		}
	}
	if wordValues[v] || placeholder(v) || placeholderWord(v) || vowelRatio(v) < 0.2 {
		return false
	}
	// The name before =: upper case, digits and _ only, from the
	// line's start (or after export).
	j := s - 1
	for j > 0 && (text[j-1] >= 'A' && text[j-1] <= 'Z' || text[j-1] >= '0' && text[j-1] <= '9' || text[j-1] == '_') {
		j--
	}
	if j == s-1 {
		return false
	}
	// From the line's start, as a setting's line is read anywhere: after
	// export, a diff's +, a read tool's line number, or a comment's #
	// (a line commented out still sets the password where it is
	// uncommented).
	return atLineStart(text, j)
}

// wordValues are values that are words of a language or a format, not
// secrets.
var wordValues = map[string]bool{
	"true": true, "false": true, "null": true, "none": true, "nil": true, "undefined": true, "yes": true,
	"no": true, "on": true, "off": true, "string": true, "str": true, "bool": true, "boolean": true,
	"int": true, "integer": true, "number": true, "object": true, "any": true, "bytes": true,
	"required": true, "optional": true, "secret": true, "password": true, "token": true, "changeme": true,
	"example": true, "placeholder": true, "redacted": true, "hidden": true, "masked": true,
	"sensitive": true, "empty": true, "unset": true, "default": true, "auto": true, "env": true,
	"postgres": true, "root": true, "admin": true, "test": true, "user": true, "guest": true,
	"secretstr": true, "secretbytes": true, "text": true, "varchar": true, "char": true, "uuid": true,
	"self": true, "this": true, "value": true, "values": true, "bearer": true, "basic": true, "na": true,
	"n/a": true, "tbd": true, "todo": true, "xxx": true, "dummy": true, "fake": true, "mock": true,
	"pending": true, "generated": true, "random": true, "keep": true, "inherit": true, "prompt": true,
	// The passwords of tests and tutorials.
	"abc123": true, "123456": true, "1234": true, "12345": true, "pass123": true, "test123": true,
	"admin123": true, "password1": true, "qwerty123": true, "secret1": true, "mypassword": true,
	"none,": true, "null,": true, "nil,": true,
}

// secretValue reports whether v, given to a name of class cls, reads as
// a secret: not a placeholder, a reference, code, a path, a hash or a
// word, and random enough for what its name says.
func secretValue(v string, cls class, quoted, literal bool) bool {
	n := len(v)
	minLen := map[class]int{passwordName: 4, secretName: 8, keyName: 16, bareKey: 16}[cls]
	if n < minLen || n > 512 && (cls != secretName && !jwtHeaded(v) || n > 2048) {
		// A token's or a secret's name may hold a long one
		// (Tallyfy's, Viewneo's, of 900 bytes and more), and so may a
		// key's when the value is a JSON Web Token (Lemon Squeezy's
		// API keys, of 900 bytes); a key's name so long a value is a
		// public key or data more often.
		return false
	}
	if cls == passwordName && chosenPassword(v) {
		// letmein, iloveyou, admin123: what people set, a
		// password's name gives away as any other.
		return true
	}
	if standsFor(v, quoted) {
		return false
	}
	if cls == passwordName && quoted && passphrase(v) && !prose(v) {
		// "correct horse battery staple": four words or more that a
		// password's name is given.
		return true
	}
	if notToken(v, cls, minLen, quoted, literal) {
		return false
	}
	k, ok := countChars(v, cls, quoted)
	if !ok {
		return false
	}
	// A name of code (testP256PrivateKey, smallType/int32,
	// jsFetchCredentials), where one can stand: unquoted in code, a path
	// or a URN anywhere, a quoted word without digits inside. A
	// setting's literal or a quoted value with digits among its letters
	// is taken as written: a random token can look like a name.
	if cls != passwordName && identifierLike(v) && (!quoted && !literal || strings.ContainsAny(v, "/:=*") || quoted && !digitInside(v)) {
		return false
	}
	switch cls {
	case passwordName:
		return passwordValue(v, k, quoted, literal)
	case secretName:
		return secretNameValue(v, k)
	case bareKey:
		if k.lower == 0 || k.upper == 0 || k.digit == 0 || uuidLike(v) {
			return false
		}
		return random(v, 0.75)
	default:
		if k.identifier || k.kinds() < 2 || strings.Count(v, " ") > 0 {
			return false
		}
		if uuidLike(v) {
			// A key given a UUID is an id more often than a key.
			return false
		}
		return random(v, 0.72)
	}
}

// standsFor reports whether v stands for a secret, or for something
// else, rather than holding one: a word of a format, a placeholder, a
// reference, a hash, a mask or a selector, a label's name.
func standsFor(v string, quoted bool) bool {
	l := strings.ToLower(v)
	if wordValues[l] || strings.HasPrefix(v, MarkerPrefix) || strings.Contains(v, "[REDACTED") || placeholderWord(v) {
		return true
	}
	if placeholder(v) || reference(v) || hashForm(v) || shortPrefixed(v) || decodedPlaceholder(v) {
		return true
	}
	if reservedStart(v, quoted) || len(v) > 2 && v[0] == '\\' && v[1] == '$' && reservedStart(v[1:], quoted) {
		// \$_POST[…]: a reference escaped for the shell or a
		// heredoc is a reference still.
		return true
	}
	if u := strings.Trim(v, `'"`); u != v && u != "" && (reservedStart(u, true) || reference(u)) {
		// "'$PRECOMPILE_PASSWORD'": a reference quoted once more for
		// the shell.
		return true
	}
	if symbolsOnly(v) || selector(v) || qualifiedName(v) {
		return true
	}
	if t := strings.Trim(v, ",;:"); t != v && identLike(t) {
		// ,usernameLabel: (passwordLabel:"Password:",usernameLabel:…):
		// a label's name and its neighbour's, not a value.
		return true
	}
	return false
}

// notToken reports whether v is written as something other than a
// token: code, a UUID of time, a field's type, base64 of a tutorial's
// word, words of a language, a path, a URL without credentials, a
// number or a version.
func notToken(v string, cls class, minLen int, quoted, literal bool) bool {
	if !quoted && codeOperand(v, minLen, literal) {
		return true
	}
	if timeUUID(v) {
		// A UUID of version 1 is a time and a host's address: nothing
		// random to keep (token: "7488a646-e31f-11e4-aace-600308960662").
		return true
	}
	if typeSpec(v) {
		// password:string:redact, password:text:redact: a field's
		// type and options, as schema generators take them.
		return true
	}
	if d, ok := plain64(v); ok && weakPlain(d) {
		// Base64 of a tutorial's word (ZGVtbw== is demo): a
		// Secret's example, not a secret.
		return true
	}
	for _, r := range v {
		if r >= 0x80 && unicode.IsLetter(r) {
			// A word of a language (a translation: "Пароль",
			// "La contraseña es incorrecta."), not a key.
			return true
		}
	}
	if strings.Count(v, " ") >= 2 {
		return true
	}
	if codeText(v, cls, quoted, literal) {
		return true
	}
	if !quoted && !literal && cls != passwordName && !tokenChars(v) {
		// An unquoted token is made of token characters; a
		// setting's literal (JWT_SECRET=IzrT6M!JBu4yP&QebW) is taken
		// as written.
		return true
	}
	return allDigits(v) && len(v) < 12 || versionLike(v) || cls != passwordName && artifactVersion(v)
}

// codeText reports whether v reads as code, a path or a URL without
// credentials rather than a value.
func codeText(v string, cls class, quoted, literal bool) bool {
	// A quoted value whose parentheses do not pair, in number or in
	// order, is a key's characters (django-insecure-_du9e^cmago!%(^+=…,
	// m{{h}o)p${e]nob(ody[…), not code.
	keyChars := quoted && !paired(v)
	if strings.ContainsAny(v, "()") && (cls != passwordName && !literal && !keyChars || codeLike(v)) || strings.Contains(v, "::") || strings.Contains(v, "->") {
		return true
	}
	if strings.Contains(v, "://") && !strings.Contains(v, "@") {
		return true
	}
	return looksLikePath(v) || dottedIdentifier(v) || indexExpr(v)
}

// tokenChars reports whether v is made of the characters tokens are
// written with.
func tokenChars(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._~+/=:-%!@*$^", c) >= 0) {
			return false
		}
	}
	return true
}

// charCounts are how many characters of each kind a value holds, and
// whether it reads as a name of code.
type charCounts struct {
	lower, upper, digit, other int
	identifier                 bool
}

// kinds is how many kinds of character the value holds.
func (k charCounts) kinds() int {
	n := 0
	for _, c := range []int{k.lower, k.upper, k.digit, k.other} {
		if c > 0 {
			n++
		}
	}
	return n
}

// countChars counts v's characters by kind; ok is false when v holds a
// space that only a quoted password's passphrase may hold.
func countChars(v string, cls class, quoted bool) (k charCounts, ok bool) {
	for _, r := range v {
		switch {
		case unicode.IsLower(r):
			k.lower++
		case unicode.IsUpper(r):
			k.upper++
		case unicode.IsDigit(r):
			k.digit++
		case r == ' ':
			if cls != passwordName || !quoted || prose(v) {
				return k, false
			}
			k.other++
		default:
			k.other++
		}
	}
	// A name of code switches case at its words' starts only; a
	// random token of letters (PSIYbVgfkbRtQmWzXaLc) switches all the
	// time.
	k.identifier = k.digit == 0 && identLike(v) && caseSwitches(v)*3 <= len(v)
	return k, true
}

// passwordValue decides for a value given to a password's name.
// People's passwords are anything but an identifier (a variable's or a
// setting's name) or a short lower-case word; a passphrase of four words
// or more is one (staple-horse-velvet-battery).
func passwordValue(v string, k charCounts, quoted, literal bool) bool {
	n := len(v)
	if (quoted || literal) && passphrase(v) {
		return true
	}
	if strings.Contains(v, " ") && k.lower+k.other == n && strings.Count(v, " ") == k.other {
		// "too short", "does not match": a test's words, not a
		// password (a passphrase has four words or more).
		return false
	}
	if (quoted || literal) && chosenWord(v) {
		// $password = "goodspec": a word a person chose, as a
		// string's or a setting's value (a name of code is unquoted).
		return true
	}
	if k.identifier && (n < 12 || strings.ContainsAny(v, "_") || k.upper == 0) {
		return false
	}
	return k.lower != n || n >= 12
}

// chosenWord reports whether v, given to a password's name, is a word
// a person chose (goodspec, hunter2, thisismypassword): lower-case
// letters, maybe digits after them, that no placeholder's test takes
// for a stand-in (standsFor has been asked already: password, secret,
// mypassword, pass123, changeme) and that is no documented sample
// (tiger, foobared, contoso). A word joined by _ or - is a name
// (smtp_password, open_sesame), and a word of fewer than four letters
// says too little.
func chosenWord(v string) bool {
	letters := strings.TrimRight(v, "0123456789")
	if len(letters) < 4 || len(v) > 24 {
		return false
	}
	for i := 0; i < len(letters); i++ {
		if letters[i] < 'a' || letters[i] > 'z' {
			return false
		}
	}
	return !weakWord(v) && vowelRatio(letters) >= 0.2
}

// secretNameValue decides for a value given to a name that says secret
// or token.
func secretNameValue(v string, k charCounts) bool {
	n := len(v)
	if k.identifier {
		return false
	}
	if k.kinds() < 2 && n < 24 {
		// One kind of character: a token still when it is long
		// and no word (sktkgevqgqsnlgat, 3940443370678905).
		if n < 15 || k.lower+k.upper > 0 && vowelRatio(v) >= 0.2 || k.other > 0 {
			return false
		}
	}
	return random(v, 0.6)
}

// random reports whether v's characters are spread as a random string's
// are: its entropy at least share of what its alphabet allows (hex: 4
// bits a character, base64: 6), and at most 3.5 bits.
func random(v string, share float64) bool {
	alphabet := 0.0
	hexOnly := true
	var lower, upper, digit, other bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			if c >= 'a' {
				lower = true
			} else {
				upper = true
			}
		case c >= 'a' && c <= 'z':
			lower, hexOnly = true, false
		case c >= 'A' && c <= 'Z':
			upper, hexOnly = true, false
		default:
			other, hexOnly = true, false
		}
	}
	switch {
	case hexOnly && !(lower && upper):
		alphabet = 16
	default:
		for _, k := range []struct {
			on bool
			n  float64
		}{{lower, 26}, {upper, 26}, {digit, 10}, {other, 12}} {
			if k.on {
				alphabet += k.n
			}
		}
	}
	max := math.Log2(alphabet)
	// A short string cannot reach its alphabet's entropy: at most
	// log2(len) bits.
	max = math.Min(max, math.Log2(float64(len(v))))
	return Entropy(v) >= math.Min(3.5, share*max)
}

// namesItself reports whether v holds the name it is given to, or is
// held by it (encryptionKey: "encryptionKey1024", X_PASSWD = "passwd",
// "cert.key" => "cert.key.b64"): a constant naming a thing, not a
// secret. The name is the word run just before the value.
func namesItself(text string, s int, v string) bool {
	j := s
	for j > 0 && !isNameByte(text[j-1]) && s-j < 8 {
		j--
	}
	e := j
	for j > 0 && isNameByte(text[j-1]) {
		j--
	}
	name := strings.ToLower(strings.Trim(text[j:e], "-._"))
	l := strings.ToLower(v)
	if len(name) < 3 {
		return false
	}
	return strings.Contains(l, name) || len(l) >= 4 && strings.Contains(name, l)
}

// anonymousLogin reports whether v, a password's value, is what an
// anonymous login (FTP's) is given by convention: the user's address,
// or a word ending in @ (busybox@, guest@), with the user anonymous on
// its line or one of the two before it.
func anonymousLogin(text string, s int, v string) bool {
	at := strings.IndexByte(v, '@')
	if at <= 0 || strings.ContainsAny(v, " :/") || at != len(v)-1 && !strings.Contains(v[at:], ".") {
		return false
	}
	start := s
	for range 3 {
		if i := strings.LastIndexByte(text[:max(start-1, 0)], '\n'); i >= 0 {
			start = i + 1
		} else {
			start = 0
			break
		}
	}
	return strings.Contains(strings.ToLower(text[start:s]), "anonymous")
}

// signingKeyFingerprint reports whether v, given to name, is the
// fingerprint of a public signing key (40 or 16 hex digits of one
// case, maybe in groups of four) under a name that says GPG or a
// package repository (docker_repo_key, apt_gpg_key): package
// repositories publish these so that their packages can be checked.
func signingKeyFingerprint(name, v string) bool {
	found := false
	for _, w := range nameWords(name) {
		switch w {
		case "gpg", "pgp", "gnupg", "repo", "repokey", "apt", "yum", "keyserver", "fingerprint", "keyid":
			found = true
		}
	}
	if !found {
		return false
	}
	h := strings.ReplaceAll(strings.Trim(v, `"'`), " ", "")
	if len(h) != 40 && len(h) != 16 {
		return false
	}
	upper, lower := false, false
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'A' && c <= 'F':
			upper = true
		case c >= 'a' && c <= 'f':
			lower = true
		default:
			return false
		}
	}
	return !(upper && lower)
}

// qualifiedName reports whether v is a name in a namespace, its last
// part words of code (clm17486:AgencyIdentificationCodeContentType,
// xsd:NonNegativeIntegerType): a label of a schema or a selector, not a
// token, whose part after a colon is random.
func qualifiedName(v string) bool {
	i := strings.LastIndexByte(v, ':')
	if i <= 0 {
		return false
	}
	name := v[i+1:]
	if len(name) < 16 || !identLike(name) || strings.ContainsAny(name, "0123456789_") || !identifierLike(name) {
		return false
	}
	words := 0
	for _, w := range nameWords(name) {
		if len(w) >= 4 {
			words++
		}
	}
	return words >= 3
}

// jwtHeaded reports whether v starts as a JSON Web Token does: a
// header of base64 JSON naming its algorithm or type, then a dot.
func jwtHeaded(v string) bool {
	h, _, ok := strings.Cut(v, ".")
	if !ok || !strings.HasPrefix(h, "eyJ") {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(h, "="))
	return err == nil && json.Valid(b) && (bytes.Contains(b, []byte(`"alg"`)) || bytes.Contains(b, []byte(`"typ"`)))
}
