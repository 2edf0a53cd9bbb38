package secrets

import (
	"maps"
	"strings"
)

// A key with no shape of its own (32 letters and digits, 12 capitals
// and digits) is known by the name of its service written right before
// it: cloze: 1a2b3c…, kanban '11XQ98FVS8WI', a Jenkins credential's
// <id>{agora 3devtbiys8…}</id>, apiMetrics := "5po8TFGa…". The service
// is one of services' (services.go), named by the words of the
// name before the value, or by that name and one word after it (alegra
// Key=…, apideck id …); the value must fit one of the service's
// formats exactly — its alphabet, and a length that format fixes to a
// narrow range — and read as a secret (random, no word, no
// placeholder). A service's format of any length ([a-z0-9]{8,}) or of
// a few characters says too little to tell a key from a word, and is
// not used.

const serviceKeyID = "service-key"

// serviceCredWords are the words that may stand between a service's
// name and its key: alegra Key=…, lemonsqueezy token = '…',
// {apideck id …}, and login, which SonarQube's scanners give its token
// to ($sonarLogin = "4924…", sonar.login=…).
var serviceCredWords = map[string]bool{
	"key": true, "token": true, "secret": true, "id": true, "apikey": true, "api": true, "pat": true,
	"auth": true, "access": true, "client": true, "app": true, "account": true, "org": true, "login": true,
	"private": true,
}

// credName reports whether name is credential's words only, up to
// three: SECRET, SECRET_ACCESS_KEY, and one word a credential's word
// and key or token glued (secretkey, privatekey, accesstoken).
func credName(name string) bool {
	if len(name) < 2 || len(name) > 24 || strings.IndexByte("ktsiapcol", lowerByte(name[0])) < 0 {
		// Most names are none: known so without splitting them.
		return false
	}
	w := nameWords(name)
	if len(w) == 0 || len(w) > 3 {
		return false
	}
	for _, x := range w {
		if !serviceCredWords[x] && !serviceCredWords[strings.TrimSuffix(x, "key")] && !serviceCredWords[strings.TrimSuffix(x, "token")] {
			return false
		}
	}
	return true
}

// tight reports whether the format says enough to know a key by: ten
// characters or more, letters in its alphabet, and a length fixed to
// within a half of its least.
func (f serviceFormat) tight() bool {
	return f.min >= 10 && f.max <= f.min+f.min/2 && f.max <= 512 && f.hi&letterBits != 0
}

// findServiceKeys finds nothing itself: the keys after their
// service's name are found in the detector's one pass over the runs of
// token characters (findBase64), by serviceRun. The matcher stands for
// them among the rules (its id, to disable it).
func findServiceKeys(_ string, _ []int, out []Finding) []Finding { return out }

// serviceRun appends the key that text[i:j], a run of token
// characters, starts with, or that starts after an = inside it (a
// name and its value written as one run: sonar.login=5524…,
// -Dsonar.login=…), when it holds a letter and a digit and a
// service's name is before it: a text holds few such runs, and a
// service's name is looked up only for them (the names, over a
// thousand, would slow the pass that finds every rule's keywords).
func serviceRun(text string, i, j int, out []Finding) []Finding {
	for s := i; s < j; s++ {
		if s > i && (text[s-1] != '=' || text[s] == '=' || serviceCredWords[strings.ToLower(strings.Trim(text[i:s-1], "-."))]) {
			// Only after an = that ends a name of the run's own:
			// adobe ID=…, a credential's word alone, is read as the
			// service's name and a space before it are, at the
			// run's start.
			continue
		}
		k := s
		for k < j && keyByte[text[k]] {
			k++
		}
		if k-s < 10 || s == 0 || !letterAndDigit(text[s:k]) {
			continue
		}
		if f, ok := serviceKeyAt(text, s); ok {
			return append(out, f)
		}
	}
	return out
}

// keyByte are tokenByte but the colon, which parts a name from its
// value.
var keyByte = func() (t [256]bool) {
	t = tokenByte
	t[':'] = false
	return t
}()

// letterAndDigit reports whether v holds a letter and a digit.
func letterAndDigit(v string) bool {
	letter, digit := false, false
	for i := 0; i < len(v) && !(letter && digit); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c|0x20 >= 'a' && c|0x20 <= 'z':
			letter = true
		}
	}
	return letter && digit
}

// serviceKeyAt reports the key that starts at s when a service's name
// is before it.
func serviceKeyAt(text string, s int) (Finding, bool) {
	j := s
	if strings.IndexByte("'\"`{([<", text[j-1]) >= 0 {
		j--
	}
	j = blanksBefore(text, j)
	for k := 0; k < 3 && j > 0 && strings.IndexByte(":=>-", text[j-1]) >= 0; k++ {
		j--
	}
	j = blanksBefore(text, j)
	if j > 1 && text[j-1] == ',' && text[s-1] != ',' {
		// 'sonar.login', '826d…': a name and its value given as two
		// quoted arguments (Gradle's property "sonar.login", "…").
		if k := blanksBefore(text, j-1); k > 0 && (text[k-1] == '\'' || text[k-1] == '"') && (text[s-1] == '\'' || text[s-1] == '"') {
			j = k - 1
		}
	}
	ns, ne := nameBefore(text, j)
	if ne-ns < 2 {
		return Finding{}, false
	}
	cred := false
	for k := 0; k < 3 && ne > ns && credName(text[ns:ne]); k++ {
		// alegra Key=…, clarifai access key …: the service is the
		// name before the credential's words.
		ns, ne = nameBefore(text, blanksBefore(text, ns))
		cred = true
	}
	name := strings.Trim(text[ns:ne], "-.")
	if strings.HasPrefix(text[ns:ne], "-D") {
		// -Dsonar.login=…: a Java system property given on the
		// command line.
		name = name[1:]
	}
	if len(name) < 3 || len(name) > 80 {
		return Finding{}, false
	}
	fs := namedServiceFormats(name)
	if len(fs) == 0 {
		return Finding{}, false
	}
	if w := nameWords(name); len(w) > 1 && serviceCredWords[w[len(w)-1]] {
		// sonarLogin, kanbanToken: the service's name and a
		// credential's word in one.
		cred = true
	}
	f, ok := serviceValue(text, ne, fs, cred || nameClass(name) != notSecret)
	if ok && signingKeyFingerprint(text[ns:ne], text[f.Start:f.End]) {
		// docker_ubuntu_repo_repokey: '9DC8…': Docker's repository
		// signing key, by its fingerprint.
		return Finding{}, false
	}
	return f, ok && f.Start == s
}

func blanksBefore(text string, j int) int {
	for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
		j--
	}
	return j
}

// nameBefore returns the name that ends at j.
func nameBefore(text string, j int) (int, int) {
	ns := j
	for ns > 0 && j-ns <= 80 && isNameByte(text[ns-1]) {
		ns--
	}
	return ns, j
}

// namedServiceFormats returns the tight formats of the services the
// words of name say (every run of up to four of its words, joined:
// apimetrics in apiMetrics, sumo in SUMO_ACCESS_ID).
func namedServiceFormats(name string) []serviceFormat {
	if !mayNameService(name) {
		return nil
	}
	aliased := services().aliased
	words := nameWords(name)
	var out []serviceFormat
	for i := range words {
		w := ""
		for j := i; j < len(words) && j < i+4; j++ {
			w += words[j]
			if len(w) < 3 {
				continue
			}
			for _, f := range aliased[w] {
				if f.tight() {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// serviceAliases are names a service goes by in code that are not its
// own: the client library's (pyowm, OpenWeather's Python client) or
// its short name (owm).
var serviceAliases = map[string]string{
	"owm": "openweather", "pyowm": "openweather", "openweathermap": "openweather",
}

// aliasedFormats are formats with their aliases' entries, so that a
// name is looked up once.
func aliasedFormats(formats map[string][]serviceFormat) map[string][]serviceFormat {
	m := maps.Clone(formats)
	for a, name := range serviceAliases {
		m[a] = formats[name]
	}
	return m
}

// servicePrefixes are the first three bytes of the names of formats
// with a tight format, and of their aliases.
func servicePrefixes(formats map[string][]serviceFormat) map[[3]byte]bool {
	m := map[[3]byte]bool{}
	for k, fs := range formats {
		for _, f := range fs {
			if len(k) >= 3 && f.tight() {
				m[[3]byte{k[0], k[1], k[2]}] = true
			}
		}
	}
	for k := range serviceAliases {
		m[[3]byte{k[0], k[1], k[2]}] = true
	}
	return m
}

// mayNameService reports whether a word of name may start a service's
// name: three letters of one at a word's start.
func mayNameService(name string) bool {
	prefixes := services().prefixes
	for i := 0; i+3 <= len(name); i++ {
		if i > 0 && isAlnum(name[i-1]) && !(name[i] >= 'A' && name[i] <= 'Z' && name[i-1] >= 'a' && name[i-1] <= 'z') {
			continue
		}
		k := [3]byte{lowerByte(name[i]), lowerByte(name[i+1]), lowerByte(name[i+2])}
		if prefixes[k] {
			return true
		}
	}
	return false
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// serviceValue reads the value after a service's name that ends at i:
// after a separator (: = := => -), or a space, maybe one word of
// serviceCredWords, maybe a quote or a brace; and reports it when it
// fits one of fs and reads as a secret. credNamed says the name holds
// a credential's word (github_client_secret, not github).
func serviceValue(text string, i int, fs []serviceFormat, credNamed bool) (Finding, bool) {
	credWord := false
	if i < len(text) && (text[i] == '\'' || text[i] == '"') {
		// The name's closing quote, and a comma before the value's
		// (two quoted arguments).
		if k := skipBlanks(text, i+1); k < len(text) && text[k] == ',' {
			i = k + 1
		}
	}
	i = skipBlanks(text, i)
	if j := serviceSep(text, i); j > i {
		i = skipBlanks(text, j)
	} else {
		// Up to three credential's words: paydirtapp SECRET key …
		for n := 0; n < 3; n++ {
			k := wordAfter(text, i)
			if k == i || !credName(text[i:k]) {
				break
			}
			credNamed, credWord = true, true
			i = skipBlanks(text, k)
			if j := serviceSep(text, i); j > i {
				i = skipBlanks(text, j)
				break
			}
		}
	}
	i, e, quoted, ok := serviceToken(text, i)
	if !ok {
		return Finding{}, false
	}
	v := text[i:e]
	if v[0] == '=' || jwtOutOfShape(v) {
		return Finding{}, false
	}
	if !credNamed && gitObjectID(v) {
		// github: 9fceb02d…, github.sha: a commit, not a key, unless
		// a key's word names it (github_client_secret).
		return Finding{}, false
	}
	fits := false
	for _, f := range fs {
		// A credential's word between the service's name and the
		// value (coinapi SECRET …) says enough to take a key whose
		// letters are off its format's.
		if f.fits(v) || credWord && f.fitsLetters(v) {
			fits = true
			break
		}
	}
	if !fits || !secretValue(v, secretName, quoted, false) || !accepted(v) {
		return Finding{}, false
	}
	return Finding{RuleID: serviceKeyID, Start: i, End: e}, true
}

// serviceToken returns where the token that text[i] starts (after an
// opening quote or bracket) is, 10 bytes or more, and whether a quote
// holds it; ok is false when there is none, or when it goes on with
// bytes no format of its has (a path, a URL, an e-mail address). An
// element's end tag ends it (a Jenkins job's <command>…</command>).
func serviceToken(text string, i int) (int, int, bool, bool) {
	quoted := false
	if i < len(text) && strings.IndexByte("'\"`{([<", text[i]) >= 0 {
		quoted = text[i] != '{' && text[i] != '(' && text[i] != '[' && text[i] != '<'
		i++
	}
	e := i
	for e < len(text) && tokenByte[text[e]] && text[e] != ':' {
		e++
	}
	for e > i && (text[e-1] == '.' || text[e-1] == '-') {
		e--
	}
	if e-i < 10 {
		return 0, 0, false, false
	}
	if e < len(text) && strings.IndexByte(" \t\r\n'\"`})]>,;|/&.-", text[e]) < 0 && !(text[e] == ':' && e+1 < len(text) && text[e+1] == ' ') && !strings.HasPrefix(text[e:], "</") {
		// The value goes on with bytes no format of its has: a path,
		// a URL, an e-mail address.
		return 0, 0, false, false
	}
	return i, e, quoted, true
}

func skipBlanks(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return i
}

// serviceSep returns where a separator of a name and its value at i
// ends, or i.
func serviceSep(text string, i int) int {
	for _, s := range []string{":=", "=>", "->", "=", ":", "- "} {
		if strings.HasPrefix(text[i:], s) {
			if s == ":" && strings.HasPrefix(text[i:], "::") {
				return i
			}
			return i + len(s)
		}
	}
	return i
}

// wordAfter returns where the word of letters at i ends.
func wordAfter(text string, i int) int {
	k := i
	for k < len(text) && k-i <= 24 && (text[k]|0x20 >= 'a' && text[k]|0x20 <= 'z' || text[k] == '_') {
		k++
	}
	return k
}

// jwtOutOfShape reports whether v is a JSON Web Token's shape (a
// header of base64 JSON, a part after a dot starting eyJ/ey) whose
// first part does not start as a token's does ("ey"): a token altered.
func jwtOutOfShape(v string) bool {
	if strings.HasPrefix(v, "ey") {
		return false
	}
	dot := strings.IndexByte(v, '.')
	return strings.Contains(v, "hbGciOi") || dot > 0 && strings.HasPrefix(v[dot+1:], "ey")
}

// gitObjectID reports whether v is as git names its objects: 40 or 64
// hex digits in lower case.
func gitObjectID(v string) bool {
	if len(v) != 40 && len(v) != 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
