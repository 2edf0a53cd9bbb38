package secrets

import (
	"bytes"
	"encoding/base64"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// The assignment matcher finds values given to names that say they are
// secret, in every syntax agents meet: .env and shell lines (DB_PASSWORD=…,
// export API_TOKEN=…), YAML and TOML (password: …, quoted or not),
// JSON ("client_secret": "…"), Java properties
// (spring.datasource.password=…), code (apiKey = "…"), URL query
// parameters (?access_token=…), command-line flags (--password …),
// XML (<password>…</password>), Docker's environment lists
// ("API_KEY=…"), and Kubernetes' and ECS's name/value pairs. The name
// decides: its last credential word (password, secret, token, key …)
// must end it, or be followed only by words such as "value"; names of
// things about secrets (token_count, password_hash, secret_name,
// public_key) are not secrets. The value decides too: references,
// placeholders, code and words are not secrets, and the less a name
// says (a bare "key"), the more random its value must look.

// class is how strongly a name says its value is a secret.
type class int

const (
	notSecret class = iota
	// bareKey: a name that is only "key" or "auth": its value alone
	// must show it is a secret (letters of both cases and digits).
	bareKey
	// keyName: a key of some kind (API_KEY, signing_key): its value
	// must look random.
	keyName
	// secretName: secret, token, credentials: its value must not be
	// a word or a reference.
	secretName
	// passwordName: passwords are chosen by people: any value that is
	// not a placeholder or a reference is one.
	passwordName
)

// credWords are the words that make a name a credential's, by class.
var credWords = map[string]class{
	"password": passwordName, "passwd": passwordName, "pwd": passwordName, "pass": passwordName,
	"passphrase": passwordName, "passcode": passwordName, "pw": passwordName, "pword": passwordName,
	"secret": secretName, "token": secretName, "apikey": secretName, "credential": secretName,
	"credentials": secretName, "creds": secretName, "pat": secretName, "sas": secretName,
	"jwt": secretName, "bearer": secretName, "authtoken": secretName, "accesstoken": secretName,
	"auth": keyName, "key": keyName, "privatekey": secretName, "secretkey": secretName,
	"accesskey": secretName, "clientsecret": secretName, "refreshtoken": secretName,
	"dsn": notSecret, "appid": keyName,
}

// compound are credential words written as one word in names
// (SECRETKEY, apikey, dbpassword), split from their end.
var compound = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "key", "pwd", "pass", "credentials", "creds"}

// strongSuffix are the credential words that end a name written as one
// word whatever is before them (PGPASSWORD, mysqlsecret, sessiontoken).
var strongSuffix = map[string]bool{"password": true, "passwd": true, "passphrase": true, "secret": true, "token": true, "apikey": true, "credentials": true}

// afterOK are the words that may follow a name's credential word:
// api_key_value, secret_key_base, client_key_data.
var afterOK = map[string]bool{
	"base": true, "value": true, "val": true, "plain": true, "plaintext": true, "raw": true, "b64": true,
	"base64": true, "data": true, "hex": true, "string": true, "str": true, "secret": true, "encoded": true,
	"env": false,
}

// beforeNot are words that, anywhere before the credential word, make a
// name a thing about secrets or a key that is no credential.
var beforeNot = map[string]bool{
	"public": true, "pub": true, "publishable": true, "max": true, "min": true, "num": true, "total": true,
	"count": true, "hash": true, "hashed": true, "sort": true, "primary": true, "foreign": true,
	"partition": true, "cache": true, "map": true, "dict": true, "lookup": true, "idempotency": true,
	"i18n": true, "translation": true, "hot": true, "row": true, "object": true, "s3": true, "registry": true,
	"state": true, "route": true, "unique": true, "composite": true, "index": true, "csrf": true,
	"xsrf": true, "next": true, "page": true, "continuation": true, "cursor": true, "pagination": true,
	"sync": true, "etag": true, "id": true, "request": true, "no": true, "has": true, "is": true,
	"use": true, "show": true, "hide": true, "toggle": true, "verify": true, "validate": true, "check": true,
	"input": true, "field": true, "label": true, "old": false, "dummy": true, "fake": true, "test": false,
	"mock": true, "example": true, "sample": true, "placeholder": true, "default": false, "prompt": true,
	"completion": true, "output": true, "input_": true, "cached": true, "reasoning": true, "image": true,
	"audio": true, "usage": true, "bucket": true, "rate": true, "api": false, "event": true, "lock": true,
	"form": true, "policy": true, "rotation": true, "reset": false, "confirm": false, "forgot": true,
	"sk": false, "ssh": false, "gpg": false, "pgp": false, "tls": false, "ssl": false, "host": true,
	"known": true, "authorized": true, "trusted": true, "root": false, "ca": true, "cert": true,
	"certificate": true, "signature": true, "kid": true, "jwk": true, "jwks": true, "encrypted": true,
	"wrapped": true, "derived": true, "keyring": true, "keychain": true, "store": true, "vault": false,
	"env": false, "var": true, "variable": true, "ref": true, "reference": true, "secret": false,
	"access": false, "kms": true, "arn": true, "alias": true, "group": true, "list": true, "array": true,
	"keyboard": true, "hotkey": true, "shortcut": true, "press": true, "sequence": true,
	"expected": true, "want": true, "got": true, "wanted": true, "actual": true, "invalid": true, "bad": true, "non": true, "authenticity": true,
	"wrong": true, "missing": true, "empty": true, "unknown": true, "parse": true, "parsed": true,
}

// tailNot are words that, after the credential word, make a name a
// thing about secrets (token_count, password_hash, secret_name).
func tailOK(words []string) bool {
	for _, w := range words {
		if !afterOK[w] {
			return false
		}
	}
	return true
}

// nameWords splits a name into lower-case words: at _ - . / and at
// case changes (apiKey, APIKey, SecretAccessKey).
func nameWords(name string) []string {
	var words []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(name[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		upper := c >= 'A' && c <= 'Z'
		prev := name[i-1]
		prevLower := prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9'
		nextLower := i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z'
		prevUpper := prev >= 'A' && prev <= 'Z'
		if upper && (prevLower || prevUpper && nextLower) {
			flush(i)
			start = i
		}
	}
	flush(len(name))
	// Split compound words from their end: dbpassword, secretkey.
	out := words[:0:0]
	for _, w := range words {
		out = append(out, splitCompound(w)...)
	}
	return out
}

func splitCompound(w string) []string {
	if _, ok := credWords[w]; ok {
		return []string{w}
	}
	for _, c := range compound {
		if len(w) > len(c)+1 && strings.HasSuffix(w, c) {
			head := w[:len(w)-len(c)]
			// monkey, turkey, donkey, bypass, compass …: for the short
			// words the head must be a word of its own that qualifies;
			// the long ones end a name whatever is before them
			// (PGPASSWORD, sessiontoken).
			if qualifiers[head] || len(head) >= 2 && strongSuffix[c] {
				return append(splitCompound(head), c)
			}
		}
	}
	return []string{w}
}

// qualifiers are words that are written together with a credential word
// (apikey, secretkey, authtoken, dbpassword, rootpassword).
var qualifiers = map[string]bool{
	"api": true, "secret": true, "access": true, "auth": true, "private": true, "client": true,
	"db": true, "root": true, "admin": true, "user": true, "app": true, "master": true, "session": true,
	"refresh": true, "bearer": true, "service": true, "signing": true, "encryption": true, "account": true,
	"mysql": true, "postgres": true, "redis": true, "smtp": true, "mail": true, "ftp": true, "ldap": true,
	"bind": true, "keystore": true, "truststore": true, "store": true, "sa": true, "web": true,
}

// nameClass says how strongly name (as written) says its value is a
// secret.
func nameClass(name string) class {
	words := nameWords(name)
	last := -1
	var cls class
	for i, w := range words {
		if c, ok := credWords[w]; ok && c != notSecret {
			last, cls = i, c
		}
	}
	if last < 0 || !tailOK(words[last+1:]) {
		return notSecret
	}
	for _, w := range words[:last] {
		if beforeNot[w] {
			return notSecret
		}
	}
	if words[last] == "pwd" && len(words) == 1 {
		// A lone PWD is the working directory.
		return notSecret
	}
	if words[last] == "token" && len(words) == 2 && words[0] == "client" {
		// AWS's client tokens make a request idempotent.
		return notSecret
	}
	if words[last] == "token" && slices.Contains(words[:last], "initial") && slices.Contains(words[:last], "cluster") {
		// etcd's initial cluster token (--initial-cluster-token,
		// ETCD_INITIAL_CLUSTER_TOKEN) names the cluster being
		// bootstrapped, so that two clusters do not join; etcd's
		// documentation gives it as etcd-cluster-1.
		return notSecret
	}
	if cls == keyName && len(words) == 1 {
		// A bare "key" or "auth": the value alone must show it is one.
		return bareKey
	}
	if cls == keyName && words[last] == "key" {
		for _, w := range words[:last] {
			if credWords[w] >= secretName || w == "api" || w == "access" || w == "private" || w == "signing" || w == "encryption" || w == "master" || w == "license" {
				return secretName
			}
		}
	}
	return cls
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// findAssignments returns the values given to names that say secret:
// at are where the credential words of text are.
func findAssignments(text string, at []int, out []Finding) []Finding {
	last := -1
	for _, p := range at {
		if p < last || !wordEnds(text, p) {
			continue
		}
		// The whole name around the word.
		ns, ne := p, p
		for ns > 0 && isNameByte(text[ns-1]) {
			ns--
		}
		for ne < len(text) && isNameByte(text[ne]) {
			ne++
		}
		last = ne
		s, e := ns, ne
		for s < e && (text[s] == '-' || text[s] == '.') {
			s++
		}
		for e > s && (text[e-1] == '-' || text[e-1] == '.') {
			e--
		}
		flag := s > ns && text[ns] == '-'
		name := text[s:e]
		if len(name) < 2 || len(name) > 80 {
			continue
		}
		if s >= 2 && text[s-2:s] == "${" {
			// ${DB_PASSWORD:-default}: a shell's or a template's
			// reference, with a default for when it is unset.
			continue
		}
		if inARN(text, s) {
			// arn:aws:secretsmanager:…:secret:prod/db-AbCdEf: a
			// resource's name, not a value given to one.
			continue
		}
		if name != "pass" && strings.EqualFold(name, "pass") {
			// PASS, Pass: a test's result, not a password.
			continue
		}
		cls := nameClass(name)
		if cls == notSecret && flag {
			cls = flagClass(name)
		}
		if cls == bareKey && spacedQualifier(text, s) {
			// aylien key: …, Your API2CART key is …: a key named by
			// the words before it, as a setting's or a sentence's.
			cls = keyName
		}
		if cls == notSecret {
			continue
		}
		if f, ok := assignedValue(text, s, e, name, cls, flag); ok {
			if cls < passwordName && brokenTelegram(name, text[f.Start:f.End]) {
				// telegram_api_token = "0948:Amlrj…": a bot token's
				// shape with the wrong lengths is none.
				continue
			}
			if cls < passwordName && brokenJWT(text[f.Start:f.End]) {
				// apiKey := "eyJ0eXAiOiJKV1QiLCJhbGCiOi…": a token's
				// header that is no JSON.
				continue
			}
			if cls < passwordName && alteredKey(text, s, name, text[f.Start:f.End]) {
				// netsuite token - 'KeYcG56V…WD?5iGv…': a long key with
				// one byte no key's alphabet has is a key altered.
				continue
			}
			if signingKeyFingerprint(name, text[f.Start:f.End]) {
				// docker_repo_key: '9DC8…CD88': the fingerprint of a
				// package repository's public signing key.
				continue
			}
			if cls < passwordName && serviceMisfit(text, s, name, text[f.Start:f.End]) {
				// ramp token - 'ramp_id_tz8O…d?SIv…': a service's key
				// that its format does not allow.
				continue
			}
			out = append(out, f)
			last = max(last, f.End)
		}
	}
	return out
}

// An assignment is a name that says secret, found in a text, and what
// is around it: the steps of assignedValue read its value.
type assignment struct {
	text       string
	ns, ne     int // the name is text[ns:ne]
	name       string
	cls        class
	flag       bool // a command line's flag (--password)
	before     byte // the byte before the name, or 0
	lineStart  bool // the name starts its line
	quotedName bool // the name is quoted ("DB_PASSWORD": …)
}

// assignedValue reads the value given to the name text[ns:ne], if any:
// in a structure that says where its value is (a name/value pair, an
// XML attribute or element, a call's arguments), or after a separator
// (= : := => - …), quoted or not.
func assignedValue(text string, ns, ne int, name string, cls class, flag bool) (Finding, bool) {
	a := assignment{text: text, ns: ns, ne: ne, name: name, cls: cls, flag: flag, lineStart: atLineStart(text, ns)}
	if ns > 0 {
		a.before = text[ns-1]
	}
	i := a.afterName()
	if f, ok, done := a.structured(i); done {
		return f, ok
	}
	i = skipBlanks(text, i)
	if j := typedDecl(text, i); j > i {
		// A typed declaration: apiKey string = …, token: string = …,
		// client_secret: &str = …, API_TOKEN: str = ….
		i = j
	}
	switch sep := a.separator(i); sep {
	case "":
		return Finding{}, false
	case proseSep:
		return a.proseValue(i)
	default:
		return a.value(i, sep)
	}
}

// afterName returns where the name ends with its closing quote, if it
// is quoted ("DB_PASSWORD", ['DB_PASSWORD']), and sets quotedName.
func (a *assignment) afterName() int {
	text, i := a.text, a.ne
	if (a.before == '"' || a.before == '\'' || a.before == '`') && i < len(text) && text[i] == a.before {
		i++
		a.quotedName = true
	}
	if i < len(text) && text[i] == ']' && a.quotedName {
		i++
	}
	return i
}

// structured reads the value of a name in a structure that says where
// it is; done is false when the name is in none.
func (a *assignment) structured(i int) (f Finding, ok, done bool) {
	text := a.text
	switch {
	case nameKey(text, a.ns):
		// A Kubernetes or ECS pair (- name: DB_PASSWORD / value: …),
		// AWS SSM's ("Name": "/prod/api/DB_PASSWORD", … "Value": …).
		f, ok = pairValue(text, a.ne, a.cls)
		return f, ok, true
	case (a.before == '"' || a.before == '\'') && a.quotedName && attrKey(text, a.ns-1):
		// XML attributes: <add key="ClearTextPassword" value="…" />.
		f, ok = attrValue(text, i, a.cls)
		return f, ok, true
	case a.quotedName && callArg(text, a.ns-1):
		// A call: define('DB_PASSWORD', '…'), setenv("API_TOKEN", "…").
		if j, comma := argAfter(text, i); comma {
			f, ok = callValue(text, j, a.cls)
			return f, ok, true
		}
	case a.before == '<' && i < len(text) && text[i] == '>':
		// XML: <password>…</password>.
		f, ok = elementValue(text, i, a.cls)
		return f, ok, true
	}
	return Finding{}, false, false
}

// argAfter returns where the argument after the one that ends at i
// starts, when a comma follows it.
func argAfter(text string, i int) (int, bool) {
	j := skipBlanks(text, i)
	if j >= len(text) || text[j] != ',' {
		return i, false
	}
	return skipBlanks(text, j+1), true
}

// callValue reads a call's argument at j: a string on its line.
func callValue(text string, j int, cls class) (Finding, bool) {
	if j < len(text) && (text[j] == '"' || text[j] == '\'') {
		q := text[j]
		if e := strings.IndexByte(text[j+1:], q); e >= 0 && !strings.ContainsRune(text[j+1:j+1+e], '\n') {
			return checked(text, j+1, j+1+e, cls, "secret-assignment", true)
		}
	}
	return Finding{}, false
}

// elementValue reads the text of an XML element whose start tag ends
// at i (<password>…</password>), maybe on a line of its own between
// the tags.
func elementValue(text string, i int, cls class) (Finding, bool) {
	j := strings.Index(text[i+1:], "</")
	if j < 0 || j > 512 {
		return Finding{}, false
	}
	vs, ve := i+1, i+1+j
	for vs < ve && isSpace(text[vs]) {
		vs++
	}
	for ve > vs && isSpace(text[ve-1]) {
		ve--
	}
	if vs > i+1 && text[vs-1] == '\n' && text[vs] == '+' {
		// A diff's added lines: <apiToken>\n+    value\n+</apiToken>.
		vs++
		for vs < ve && (text[vs] == ' ' || text[vs] == '\t') {
			vs++
		}
		if k := strings.LastIndexByte(text[vs:ve], '\n'); k >= 0 && strings.TrimSpace(text[vs+k:ve]) == "+" {
			ve = vs + k
			for ve > vs && isSpace(text[ve-1]) {
				ve--
			}
		}
	}
	if strings.ContainsAny(text[vs:ve], "\n\r") {
		return Finding{}, false
	}
	return checked(text, vs, ve, cls, "secret-assignment", false)
}

// proseSep is separator's answer for a name written in a sentence.
const proseSep = "prose"

// separator returns the separator of the name and its value at i
// (= : := => ?= .= += ::= :::=, a flag's space, a dash before a quoted
// value), proseSep for a name in a sentence, or "" for none.
func (a *assignment) separator(i int) string {
	text := a.text
	switch {
	case strings.HasPrefix(text[i:], ":::="):
		return ":::="
	case strings.HasPrefix(text[i:], "::="):
		return "::="
	case strings.HasPrefix(text[i:], ":="), strings.HasPrefix(text[i:], "=>"), strings.HasPrefix(text[i:], "?="),
		strings.HasPrefix(text[i:], ".="), strings.HasPrefix(text[i:], "+="):
		return text[i : i+2]
	case i < len(text) && text[i] == '=':
		if i+1 < len(text) && text[i+1] == '=' {
			return ""
		}
		return "="
	case i < len(text) && text[i] == ':':
		if i+1 < len(text) && text[i+1] == ':' {
			return ""
		}
		return ":"
	case a.flag && i > a.ne && i < len(text) && text[i] != '-':
		return " "
	case i > a.ne && strings.HasPrefix(text[i:], "- ") && i+2 < len(text) && strings.ContainsRune("'\"`", rune(text[i+2])):
		// zulip token - 'value': a name, a dash, a quoted value.
		return "-"
	case (upperSnake(a.name) && len(a.name) > 4 || a.cls >= keyName) && !a.quotedName:
		return proseSep
	}
	return ""
}

// proseValue reads a value a sentence gives the name: I set
// DATADOG_API_KEY to 9005…, the DB_PASSWORD is …, your API2CART key
// is ….
func (a *assignment) proseValue(i int) (Finding, bool) {
	for _, w := range []string{" to ", " is ", " as "} {
		if strings.HasPrefix(a.text[i-1:], w) {
			return proseValue(a.text, i-1+len(w), a.cls)
		}
	}
	return Finding{}, false
}

// value reads the value after the separator sep at i: quoted, a
// structure's, or unquoted.
func (a *assignment) value(i int, sep string) (Finding, bool) {
	text := a.text
	if sep != " " {
		i += len(sep)
	}
	i = skipBlanks(text, i)
	if i >= len(text) {
		return Finding{}, false
	}
	if text[i] == '{' && sep == ":" {
		// "db_password": {"sensitive": true, "type": "string", "value": "…"}
		return pairValue(text, i, a.cls)
	}
	if a.name == "pass" && (!a.lineStart || text[i] != '"' && text[i] != '\'') {
		// A lone pass is a password only as a setting's name, quoted.
		return Finding{}, false
	}
	id := "secret-assignment"
	if sep == "=" && a.lineStart && upperSnake(a.name) {
		id = "dotenv-secret"
	}
	if q := text[i]; q == '"' || q == '\'' || q == '`' {
		end := strings.IndexByte(text[i+1:], q)
		nl := strings.IndexByte(text[i+1:], '\n')
		if end >= 0 && (nl < 0 || end < nl) {
			return checked(text, i+1, i+1+end, a.cls, id, true)
		}
		if end < 0 && nl < 0 {
			return Finding{}, false
		}
		i++
	}
	return a.unquotedValue(i, sep, id)
}

// unquotedValue reads a value that no quotes hold: to the end of the
// line for a line of its own (.env, YAML, properties), which may hold
// & ; , in a password; inside a quoted entry ("API_KEY=…") to the
// quote; in a URL's query to the next parameter; elsewhere to the
// first space or delimiter.
func (a *assignment) unquotedValue(i int, sep, id string) (Finding, bool) {
	text := a.text
	switch {
	case sep != "=" || a.quotedName && (a.before == '"' || a.before == '\''):
	case a.before == '"' || a.before == '\'':
		return a.entryValue(i, id)
	case a.before == '?' || a.before == '&' || a.before == ';':
		if badgeURL(text, a.ns) || exampleHost(text, a.ns) {
			return Finding{}, false
		}
		// A URL's query, or a connection string (…;Password=…;).
		return checked(text, i, endAt(text, i, " \t\r\n&#;\"'<>`)]},"), a.cls, id, false)
	case a.shellVariable():
		// A shell's or a .env's NAME=value (maybe before a command:
		// API_KEY=… go run .): to the first space.
		e := endAt(text, i, " \t\r\n")
		if k := strings.Index(text[i:e], "</"); k >= 0 {
			e = i + k
		}
		return checkedForm(text, i, e, a.cls, id, false, true)
	}
	if a.lineStart && !a.quotedName {
		return a.settingValue(i, sep, id)
	}
	return checked(text, i, endAt(text, i, " \t\r\n\"'`,;)]}<>"), a.cls, id, false)
}

// shellVariable reports whether the name, given a value by =, is a
// shell's or a .env's variable: on a line of its own, or in capitals
// and not inside a reference (${…}, $NAME).
func (a *assignment) shellVariable() bool {
	return (a.lineStart || upperSnake(a.name) && a.before != '$' && a.before != '{') && !a.quotedName && !strings.Contains(a.name, ".")
}

// endAt returns where the first byte of stops at i or after it is, or
// the text's end.
func endAt(text string, i int, stops string) int {
	if k := strings.IndexAny(text[i:], stops); k >= 0 {
		return i + k
	}
	return len(text)
}

// entryValue reads the value of "API_KEY=…" in a list (docker
// inspect's Env): the quotes hold it.
func (a *assignment) entryValue(i int, id string) (Finding, bool) {
	text := a.text
	e := i
	for e < len(text) && text[e] != a.before && text[e] != '\n' {
		e++
	}
	if k := formNext.FindStringIndex(text[i:e]); k != nil {
		// access_token=…&token_type=bearer: a form's body.
		e = i + k[0]
	}
	if k := strings.IndexAny(text[i:e], " \t"); k >= 0 && upperSnake(a.name) {
		// "PGPASSWORD=… psql -h db": a command line's variable.
		return checked(text, i, i+k, a.cls, id, false)
	}
	if e < len(text) && (text[e] == a.before || text[e] == '&') {
		return checked(text, i, e, a.cls, id, true)
	}
	return checked(text, i, e, a.cls, id, false)
}

// settingValue reads the value of a setting's line (YAML, properties)
// to the line's end, less a comment: a literal value; or, ended by a
// comma or a semicolon, an entry of a flow mapping, a line of JSON, a
// struct's literal in code.
func (a *assignment) settingValue(i int, sep, id string) (Finding, bool) {
	text := a.text
	e := i
	for e < len(text) && text[e] != '\n' && text[e] != '\r' && !endTag(text, e) {
		e++
	}
	v := text[i:e]
	if k := strings.Index(v, " #"); k >= 0 {
		v = v[:k]
	}
	e = i + len(strings.TrimRight(v, " \t"))
	if e > i && (text[e-1] == ',' || text[e-1] == ';') && !strings.ContainsAny(text[i:e-1], " ") {
		// key: value, in a flow mapping, a line of JSON, a
		// struct's literal in code.
		if sep == ":" {
			e--
		}
		return checked(text, i, e, a.cls, id, false)
	}
	return checkedForm(text, i, e, a.cls, id, false, true)
}

// telegramToken is a Telegram bot token as Telegram issues them: the
// bot's id, a colon, and 35 characters starting with A.
var telegramToken = regexp.MustCompile(`^\d{5,16}:A[A-Za-z0-9_-]{34}$`)

// brokenTelegram reports whether v, given to a name that says
// Telegram, starts as a bot token does (digits, a colon, an A) but is
// not one: a test's token with a part too short or too long.
func brokenTelegram(name, v string) bool {
	i := strings.IndexByte(v, ':')
	if i <= 0 || i+1 >= len(v) || v[i+1] != 'A' || !allDigits(v[:i]) || !strings.Contains(strings.ToLower(name), "telegram") {
		return false
	}
	return !telegramToken.MatchString(v)
}

// endTag reports whether an element's end tag starts at text[e]: the
// end of a value that <command>NAME=…</command> holds.
func endTag(text string, e int) bool {
	return text[e] == '<' && e+1 < len(text) && text[e+1] == '/'
}

// nameKey reports whether the name at ns is the value of a "name" key
// (name: DB_PASSWORD, "name": "DB_PASSWORD").
func nameKey(text string, ns int) bool {
	j := ns
	// A path before the name: /prod/api/DB_PASSWORD.
	for j > 0 && j > ns-200 && (isNameByte(text[j-1]) || text[j-1] == '/') {
		j--
	}
	if j > 0 && (text[j-1] == '"' || text[j-1] == '\'') {
		j--
	}
	return keyBefore(text, j, ':', "name")
}

// pairValue reads the value of the "value" key that follows a "name"
// key (within a few lines).
func pairValue(text string, from int, cls class) (Finding, bool) {
	end := min(len(text), from+240)
	seg := text[from:end]
	k := -1
	for _, v := range []string{"value:", "\"value\":", "'value':", "Value:", "\"Value\":"} {
		if j := strings.Index(seg, v); j >= 0 && (k < 0 || j < k) {
			k = j + len(v)
		}
	}
	if k < 0 || strings.Contains(seg[:k], "name:") || strings.Contains(seg[:k], "\"name\"") {
		return Finding{}, false
	}
	i := from + k
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		q := text[i]
		j := strings.IndexByte(text[i+1:], q)
		if j < 0 || strings.ContainsRune(text[i+1:i+1+j], '\n') {
			return Finding{}, false
		}
		return checked(text, i+1, i+1+j, cls, "secret-assignment", true)
	}
	e := i
	for e < len(text) && text[e] != '\n' && text[e] != '\r' && text[e] != ',' && text[e] != '}' {
		e++
	}
	return checked(text, i, i+len(strings.TrimRight(text[i:e], " \t")), cls, "secret-assignment", false)
}

func atLineStart(text string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch c := text[j]; c {
		case '\n', '\r':
			return true
		case ' ', '\t', '+', '-', '*', '#':
			// indentation, a diff's +/-, a list's dash, a comment's
			// mark
		case '>':
			// A quote's mark, or an element's start tag: the text of
			// <command>NAME=…</command> starts as a line does.
			k := j
			for k > 0 && j-k < 40 && isNameByte(text[k-1]) {
				k--
			}
			if k < j && k > 0 && text[k-1] == '<' {
				return atLineStart(text, k-1)
			}
		default:
			if c == 0x92 && j >= 2 && text[j-2:j+1] == "→" {
				// A line of a file read with numbers: "     3→NAME=…".
				k := j - 2
				for k > 0 && text[k-1] >= '0' && text[k-1] <= '9' {
					k--
				}
				if k < j-2 {
					return atLineStart(text, k)
				}
			}
			// export NAME=, set NAME=, ENV NAME=, $env:NAME =
			w := text[:j+1]
			for _, p := range []string{"export", "set", "ENV", "$env:", "setenv", "declare", "local", "readonly", "env"} {
				if strings.HasSuffix(w, p) && (len(w) == len(p) || !isNameByte(w[len(w)-len(p)-1])) && atLineStart(text, j+1-len(p)) {
					return true
				}
			}
			return false
		}
	}
	return true
}

// spacedQualifier reports whether the name at ns follows a word and a
// space on its line (aylien key:, the Stripe key is): the words before
// say whose key it is.
func spacedQualifier(text string, ns int) bool {
	if ns < 2 || text[ns-1] != ' ' {
		return false
	}
	j := ns - 1
	k := j
	for k > 0 && (text[k-1] >= 'a' && text[k-1] <= 'z' || text[k-1] >= 'A' && text[k-1] <= 'Z' || text[k-1] >= '0' && text[k-1] <= '9') {
		k--
	}
	if j-k < 2 || beforeNot[strings.ToLower(text[k:j])] {
		return false
	}
	return k == 0 || text[k-1] == ' ' || text[k-1] == '\t' || text[k-1] == '\n'
}

// inARN reports whether the name at ns is a part of an Amazon Resource
// Name (arn:partition:service:region:account:resource).
func inARN(text string, ns int) bool {
	if ns == 0 || text[ns-1] != ':' {
		return false
	}
	j := ns - 1
	for j > 0 && j > ns-256 && !isSpace(text[j-1]) && !strings.ContainsRune("\"'`=(,[{", rune(text[j-1])) {
		j--
	}
	return strings.HasPrefix(text[j:ns], "arn:")
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// typedDecl returns where the = of a typed declaration is, when
// text[i:] is a type between a name and its = (": string =",
// " String =", ": &str =", " []byte ="), else i.
func typedDecl(text string, i int) int {
	j := i
	if j < len(text) && text[j] == ':' {
		j++
	}
	for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	if j >= len(text) || j == i && (i == 0 || text[i-1] != ' ' && text[i-1] != '\t') {
		return i
	}
	start := j
	if c := text[j]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '&' || c == '*' || c == '[') {
		return i
	}
	for j < len(text) && j-start < 40 {
		c := text[j]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.&*[]<>?,'", c) >= 0 {
			j++
			continue
		}
		break
	}
	typ := text[start:j]
	sp := j
	for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	// The type stands apart from its = (": string = …"), which a
	// value's own = never does (base64's padding: MFNO…UiE=).
	if typ == "" || j == sp || j >= len(text) || text[j] != '=' || j+1 < len(text) && (text[j+1] == '=' || text[j+1] == '>') {
		return i
	}
	return j
}

func upperSnake(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// checked returns the finding text[s:e] if it reads as a secret for a
// name of class cls.
func checked(text string, s, e int, cls class, id string, quoted bool) (Finding, bool) {
	return checkedForm(text, s, e, cls, id, quoted, false)
}

// checkedForm is checked for a value that is quoted, or a literal: a
// setting's value on a line of its own (.env, YAML, properties), where
// code's names do not stand.
func checkedForm(text string, s, e int, cls class, id string, quoted, literal bool) (Finding, bool) {
	if e <= s {
		return Finding{}, false
	}
	v := text[s:e]
	if cls == passwordName && literal && envWord(text, s, v) {
		return Finding{RuleID: id, Start: s, End: e}, true
	}
	if !secretValue(v, cls, quoted, literal) || namesItself(text, s, v) {
		return Finding{}, false
	}
	return Finding{RuleID: id, Start: s, End: e}, true
}

// envWord reports whether v, at s in text, is a word of lower-case
// letters that an environment variable's line gives a password's name
// (REACT_APP_AUTH_PASSWORD=whiteduke): a setting's value is the password
// it sets, whatever word it is, unless it is a word that stands for one
// (changeme, password1, test) or a word of a format (true, none).
// Elsewhere (YAML, code) a short word is read as a name or a test's.
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
	line := strings.LastIndexByte(text[:j], '\n') + 1
	head := strings.TrimSpace(text[line:j])
	return head == "" || head == "export"
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
	if n < minLen || n > 512 {
		return false
	}
	l := strings.ToLower(v)
	if wordValues[l] || strings.HasPrefix(v, MarkerPrefix) || strings.Contains(v, "[REDACTED") || placeholderWord(v) {
		return false
	}
	if placeholder(v) || reference(v) || hashForm(v) || shortPrefixed(v) || decodedPlaceholder(v) {
		return false
	}
	if reservedStart(v, quoted) {
		return false
	}
	if u := strings.Trim(v, `'"`); u != v && u != "" && (reservedStart(u, true) || reference(u)) {
		// "'$PRECOMPILE_PASSWORD'": a reference quoted once more for
		// the shell.
		return false
	}
	if symbolsOnly(v) || selector(v) {
		return false
	}
	if t := strings.Trim(v, ",;:"); t != v && identLike(t) {
		// ,usernameLabel: (passwordLabel:"Password:",usernameLabel:…):
		// a label's name and its neighbour's, not a value.
		return false
	}
	if cls == passwordName && quoted && passphrase(v) && !prose(v) {
		// "correct horse battery staple": four words or more that a
		// password's name is given.
		return true
	}
	if !quoted && codeOperand(v, minLen, literal) {
		return false
	}
	if timeUUID(v) {
		// A UUID of version 1 is a time and a host's address: nothing
		// random to keep (token: "7488a646-e31f-11e4-aace-600308960662").
		return false
	}
	if typeSpec(v) {
		// password:string:redact, password:text:redact: a field's
		// type and options, as schema generators take them.
		return false
	}
	if d, ok := plain64(v); ok && weakPlain(d) {
		// Base64 of a tutorial's word (ZGVtbw== is demo): a
		// Secret's example, not a secret.
		return false
	}
	for _, r := range v {
		if r >= 0x80 && unicode.IsLetter(r) {
			// A word of a language (a translation: "Пароль",
			// "La contraseña es incorrecta."), not a key.
			return false
		}
	}
	if strings.Count(v, " ") >= 2 {
		return false
	}
	// A quoted value whose parentheses do not pair is a key's
	// characters (django-insecure-_du9e^cmago!%(^+=…), not code.
	keyChars := quoted && strings.Count(v, "(") != strings.Count(v, ")")
	if strings.ContainsAny(v, "()") && (cls != passwordName && !literal && !keyChars || codeLike(v)) || strings.Contains(v, "::") || strings.Contains(v, "->") {
		return false
	}
	if strings.Contains(v, "://") && !strings.Contains(v, "@") {
		return false
	}
	if looksLikePath(v) || dottedIdentifier(v) || indexExpr(v) {
		return false
	}
	if !quoted && !literal && cls != passwordName {
		// An unquoted token is made of token characters; a
		// setting's literal (JWT_SECRET=IzrT6M!JBu4yP&QebW) is taken
		// as written.
		for i := 0; i < len(v); i++ {
			c := v[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._~+/=:-%!@*$^", c) >= 0) {
				return false
			}
		}
	}
	if allDigits(v) && n < 12 || versionLike(v) || cls != passwordName && artifactVersion(v) {
		return false
	}
	var lower, upper, digit, other int
	for _, r := range v {
		switch {
		case unicode.IsLower(r):
			lower++
		case unicode.IsUpper(r):
			upper++
		case unicode.IsDigit(r):
			digit++
		case r == ' ':
			if cls != passwordName || !quoted || prose(v) {
				return false
			}
			other++
		default:
			other++
		}
	}
	kinds := 0
	for _, k := range []int{lower, upper, digit, other} {
		if k > 0 {
			kinds++
		}
	}
	// A name of code switches case at its words' starts only; a
	// random token of letters (PSIYbVgfkbRtQmWzXaLc) switches all the
	// time.
	identifier := digit == 0 && identLike(v) && caseSwitches(v)*3 <= n
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
		// People's passwords: anything but an identifier (a variable's
		// or a setting's name) or a short lower-case word; a
		// passphrase of four words or more is one
		// (staple-horse-velvet-battery).
		if (quoted || literal) && passphrase(v) {
			return true
		}
		if strings.Contains(v, " ") && lower+other == n && strings.Count(v, " ") == other {
			// "too short", "does not match": a test's words, not a
			// password (a passphrase has four words or more).
			return false
		}
		if identifier && (n < 12 || strings.ContainsAny(v, "_") || upper == 0) {
			return false
		}
		if lower == n && n < 12 {
			return false
		}
		return true
	case secretName:
		if identifier {
			return false
		}
		if kinds < 2 && n < 24 {
			// One kind of character: a token still when it is long
			// and no word (sktkgevqgqsnlgat, 3940443370678905).
			if n < 15 || lower+upper > 0 && vowelRatio(v) >= 0.2 || other > 0 {
				return false
			}
		}
		return random(v, 0.6)
	case bareKey:
		if lower == 0 || upper == 0 || digit == 0 || uuidLike(v) {
			return false
		}
		return random(v, 0.75)
	default:
		if identifier || kinds < 2 || strings.Count(v, " ") > 0 {
			return false
		}
		if uuidLike(v) {
			// A key given a UUID is an id more often than a key.
			return false
		}
		return random(v, 0.72)
	}
}

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

// selector reports whether v is a CSS selector of an element's id or
// class made of words (#add-password, .reset_password): the element that
// takes a password, not one.
func selector(v string) bool {
	if len(v) < 3 || v[0] != '#' && v[0] != '.' {
		return false
	}
	words := strings.FieldsFunc(v[1:], func(r rune) bool { return r == '-' || r == '_' })
	if len(words) < 2 {
		return false
	}
	for _, w := range words {
		if strings.ToLower(w) != w || !identLike(w) {
			return false
		}
	}
	return true
}

// caseSwitches counts where v's letters change from lower to upper case
// or back.
func caseSwitches(v string) int {
	n := 0
	prev := 0 // 1 lower, 2 upper
	for i := 0; i < len(v); i++ {
		c := v[i]
		cur := 0
		switch {
		case c >= 'a' && c <= 'z':
			cur = 1
		case c >= 'A' && c <= 'Z':
			cur = 2
		}
		if cur != 0 {
			if prev != 0 && cur != prev {
				n++
			}
			prev = cur
		}
	}
	return n
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

// identLike reports whether v reads as an identifier or a word: letters,
// _ - and . only, in words (snake_case, kebab-case, camelCase, a word).
func identLike(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	// Long runs of letters without vowels are not words (a key of
	// letters only, like Hugging Face's).
	return vowelRatio(v) >= 0.2
}

func vowelRatio(v string) float64 {
	letters, vowels := 0, 0
	for i := 0; i < len(v); i++ {
		c := v[i] | 0x20
		if c >= 'a' && c <= 'z' {
			letters++
			if strings.IndexByte("aeiouy", c) >= 0 {
				vowels++
			}
		}
	}
	if letters == 0 {
		return 0
	}
	return float64(vowels) / float64(letters)
}

func allDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// timeUUID reports whether v is a UUID of version 1 (its time and the
// address of the host that made it).
func timeUUID(v string) bool {
	return uuidLike(v) && v[14] == '1'
}

// typeSpec reports whether v is a type and its options joined by
// colons (string:redact, text:unique): a field's declaration.
func typeSpec(v string) bool {
	typ, rest, ok := strings.Cut(v, ":")
	if !ok || !wordValues[strings.ToLower(typ)] || rest == "" {
		return false
	}
	for _, o := range strings.Split(rest, ":") {
		if o == "" || !wordIdent(o) || strings.ToLower(o) != o {
			return false
		}
	}
	return true
}

func uuidLike(v string) bool {
	if len(v) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := v[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// codeLike reports whether v reads as a call or an expression.
func codeLike(v string) bool {
	i := strings.IndexByte(v, '(')
	if i <= 0 {
		return strings.HasPrefix(v, "(")
	}
	for _, c := range v[:i] {
		if !(c == '_' || c == '.' || unicode.IsLetter(c) || unicode.IsDigit(c)) {
			return false
		}
	}
	return true
}

func looksLikePath(v string) bool {
	if strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "/") {
		return true
	}
	for _, ext := range []string{".pem", ".key", ".json", ".txt", ".crt", ".p12", ".pfx", ".env", ".yaml", ".yml", ".toml", ".gpg", ".asc", ".jks", ".keystore"} {
		if strings.HasSuffix(strings.ToLower(v), ext) && !strings.ContainsAny(v, " ") {
			return true
		}
	}
	return false
}

// dottedIdentifier reports whether v is a reference such as
// settings.SECRET_KEY, config.api.token or self.password: words joined
// by dots, no digits.
func dottedIdentifier(v string) bool {
	if !strings.Contains(v, ".") {
		return false
	}
	for _, part := range strings.Split(v, ".") {
		if part == "" || !wordIdent(part) && !codeIdent(part) {
			return false
		}
	}
	return true
}

// codeIdent reports whether v is a name of code with digits in its
// words (ec2_ssh_key, utf8_name, s3): lower-case words joined by _,
// each starting with a letter, whose digits end it. A random token's
// pieces have digits inside (hq0esa, g1euhtctoefh1kcu) or mixed case.
func codeIdent(v string) bool {
	for _, w := range strings.Split(v, "_") {
		if w == "" {
			continue
		}
		if w[0] < 'a' || w[0] > 'z' {
			return false
		}
		digits := false
		for i := 0; i < len(w); i++ {
			c := w[i]
			switch {
			case c >= '0' && c <= '9':
				digits = true
			case c >= 'a' && c <= 'z' && !digits:
			default:
				return false
			}
		}
	}
	return true
}

// wordIdent reports whether v is an identifier of letters and _ (no
// digits: a random token's pieces have some).
func wordIdent(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$') {
			return false
		}
	}
	return true
}

func identLikeAny(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// reference reports whether v names a secret kept elsewhere rather
// than holding it: an environment variable, a template, a secret
// manager's address.
func reference(v string) bool {
	l := strings.ToLower(v)
	if pyFormat.MatchString(v) {
		return true
	}
	for _, p := range []string{"${", "{{", "<%", "$(", "process.env", "os.environ", "os.getenv", "getenv(", "env(", "env[",
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

// hashForm reports whether v is a hash written as such: an SRI hash
// (sha512-…), a Nix hash (sha256-…, sha256:…), a Go module hash (h1:…),
// a Docker digest (sha256:…).
func hashForm(v string) bool {
	l := strings.ToLower(v)
	for _, p := range []string{"sha1-", "sha256-", "sha384-", "sha512-", "sha1:", "sha256:", "sha384:", "sha512:", "md5-", "md5:", "h1:", "blake2b-", "blake3:", "xxh64:",
		"$2a$", "$2b$", "$2y$", "$argon2", "$scrypt$", "$pbkdf2", "$1$", "$5$", "$6$", "$apr1$", "{ssha}", "{sha}", "{bcrypt}"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
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

// indexExpr reports whether v reads as an expression of code: a name
// indexed or called (tokens[0], get_token(), cfg["key"]).
func indexExpr(v string) bool {
	i := 0
	for i < len(v) && (v[i] == '_' || v[i] == '.' || v[i] >= 'a' && v[i] <= 'z' || v[i] >= 'A' && v[i] <= 'Z' || i > 0 && v[i] >= '0' && v[i] <= '9') {
		i++
	}
	return i > 0 && i < len(v) && (v[i] == '[' || v[i] == '(')
}

// flagClass is the class of a command-line flag's name that ends with a
// credential word written together with others (-storepass,
// --srcstorepass, -keypass).
func flagClass(name string) class {
	l := strings.ToLower(name)
	if strings.HasSuffix(l, "initial-cluster-token") {
		// etcd's --initial-cluster-token names the cluster (nameClass).
		return notSecret
	}
	for _, w := range []string{"password", "passwd", "pass", "pwd", "secret", "token"} {
		if strings.HasSuffix(l, w) && len(l) > len(w) {
			return credWords[w]
		}
	}
	return notSecret
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

// identifierLike reports whether v reads as a name in code or a path
// of names (testP256PrivateKey, smallType/int32, jsFetchCredentials,
// urn:ietf:params:oauth:grant-type:jwt-bearer) rather than a random
// token: cut into words at its separators and case changes, its words
// are words (long enough, with vowels), and its runs of digits short.
// A random string of mixed case falls into many one-letter pieces.
func identifierLike(v string) bool {
	var segs []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			segs = append(segs, v[start:end])
		}
		start = -1
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			flush(i)
			k := i
			for k < len(v) && v[k] >= '0' && v[k] <= '9' {
				k++
			}
			if k-i > 4 {
				return false
			}
			i = k - 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if start < 0 {
				start = i
				continue
			}
			prev := v[i-1]
			upper := c >= 'A' && c <= 'Z'
			nextLower := i+1 < len(v) && v[i+1] >= 'a' && v[i+1] <= 'z'
			if upper && (prev >= 'a' && prev <= 'z' || prev >= 'A' && prev <= 'Z' && nextLower) {
				flush(i)
				start = i
			}
		case strings.IndexByte("_-./:$=*[]", c) >= 0:
			flush(i)
		default:
			return false
		}
	}
	flush(len(v))
	if len(segs) == 0 {
		return false
	}
	short, noVowel, letters, vowels, small := 0, 0, 0, 0, 0
	for k, s := range segs {
		if k > 0 && len(s) <= 2 {
			// Pieces of one or two letters after the first: Hm, Rs, Ne
			// in a random string; rare in a name (utf8Key, smallType).
			small++
		}
		letters += len(s)
		for k := 0; k < len(s); k++ {
			if strings.IndexByte("aeiouyAEIOUY", s[k]) >= 0 {
				vowels++
			}
		}
		if len(s) > 5 && strings.ToUpper(s) == s {
			// Capitals in a row longer than an acronym.
			return false
		}
		if len(s) == 1 {
			short++
			continue
		}
		if !strings.ContainsAny(s, "aeiouyAEIOUY") && len(s) >= 3 {
			noVowel++
			if len(s) > 4 {
				return false
			}
		}
	}
	return letters >= 4 && short <= 1 && small <= 1 && noVowel <= 1 && float64(letters)/float64(len(segs)) >= 3 && float64(vowels) >= 0.25*float64(letters)
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
	base := strings.TrimRight(l, "0123456789")
	switch base {
	case "pass", "password", "passwd", "pwd", "pw", "test", "user", "admin", "demo", "sample", "foo", "bar", "baz", "qux", "changeme", "letmein", "opensesame", "notasecret", "anoncvs", "anonymous", "guest", "token", "apikey", "key", "bearer", "auth", "leakabletoken":
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
	if len(letters) >= 4 && len(letters)*2 >= len(strings.TrimFunc(l, func(r rune) bool { return r < '0' })) && madeOf(letters, placeholderParts) {
		return true
	}
	return false
}

// placeholderParts are the words placeholder passwords are made of.
var placeholderParts = []string{"password", "passwd", "pass", "secret", "test", "admin", "user", "demo", "changeme", "change", "example",
	"sample", "dummy", "fake", "my", "your", "key", "token", "dev", "local", "default", "qwerty", "letmein", "db", "app", "root", "pwd",
	"super", "some", "the", "mock", "foo", "bar", "baz", "word", "pw", "redis", "mysql", "postgres", "pg", "mongo", "rabbit", "api",
	"new", "old", "temp", "tmp", "local", "docker", "secure"}

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
// pass word), or a short lower-case word (heymoe, sesam, imbecile).
func weakWord(v string) bool {
	l := strings.ToLower(v)
	if placeholder(v) || wordValues[l] || placeholderWord(v) {
		return true
	}
	// Words in lower case: heymoe, sesam, too-late-in-file.
	words := strings.ReplaceAll(v, "-", "_")
	return strings.ToLower(v) == v && wordIdent(words) && (len(v) <= 12 || strings.Contains(v, "-") && len(v) <= 24)
}

// exampleHost reports whether the URL around text[at] is on a host kept
// for documentation (example.com, .org, .net, *.example, *.test).
func exampleHost(text string, at int) bool {
	from := max(0, at-300)
	i := strings.LastIndex(text[from:at], "://")
	if i < 0 {
		return false
	}
	rest := text[from+i+3 : min(len(text), at+300)]
	if k := strings.IndexAny(rest, "/?# \t\n\"'"); k >= 0 {
		rest = rest[:k]
	}
	if k := strings.LastIndexByte(rest, '@'); k >= 0 {
		rest = rest[k+1:]
	}
	host := strings.ToLower(rest)
	if k := strings.IndexByte(host, ':'); k >= 0 {
		host = host[:k]
	}
	for _, d := range []string{"example.com", "example.org", "example.net"} {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return strings.HasSuffix(host, ".example") || strings.HasSuffix(host, ".test") || strings.HasSuffix(host, ".invalid")
}

// attrKey reports whether the quote at q opens the value of a key or
// name attribute (key="…", name='…').
func attrKey(text string, q int) bool {
	return keyBefore(text, q, '=', "key", "name")
}

// keyBefore reports whether what ends at text[j] is one of keys
// (case-insensitive, maybe quoted) and then sep, spaces around it.
func keyBefore(text string, j int, sep byte, keys ...string) bool {
	for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
		j--
	}
	if j == 0 || text[j-1] != sep {
		return false
	}
	j--
	for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
		j--
	}
	if j > 0 && (text[j-1] == '"' || text[j-1] == '\'') {
		j--
	}
	for _, k := range keys {
		if j >= len(k) && strings.EqualFold(text[j-len(k):j], k) && (j == len(k) || !isNameByte(text[j-len(k)-1])) {
			return true
		}
	}
	return false
}

// attrValue reads the value attribute that follows (value="…").
func attrValue(text string, from int, cls class) (Finding, bool) {
	seg := text[from:min(len(text), from+120)]
	k := strings.Index(strings.ToLower(seg), "value")
	if k < 0 || strings.ContainsAny(seg[:k], "<>\n") {
		return Finding{}, false
	}
	j := from + k + len("value")
	for j < len(text) && (text[j] == ' ' || text[j] == '=') {
		j++
	}
	if j >= len(text) || text[j] != '"' && text[j] != '\'' {
		return Finding{}, false
	}
	q := text[j]
	e := strings.IndexByte(text[j+1:], q)
	if e < 0 || strings.ContainsRune(text[j+1:j+1+e], '\n') {
		return Finding{}, false
	}
	return checked(text, j+1, j+1+e, cls, "secret-assignment", true)
}

// callArg reports whether the quote at q opens a call's first argument:
// define('…', setenv("….
func callArg(text string, q int) bool {
	j := q
	for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
		j--
	}
	// ( a call; { a pair of C#'s or C++'s initialiser: { "AccountKey", "…" }.
	return j > 0 && (text[j-1] == '(' || text[j-1] == '{')
}

// proseValue reads the word that follows "NAME to " in prose, which
// must look like a token (a digit among its characters) to count.
func proseValue(text string, from int, cls class) (Finding, bool) {
	if cls == passwordName && from < len(text) && (text[from] == '\'' || text[from] == '"') {
		// The password is 'Secret123': a quoted value a sentence gives
		// a password is one, as in code.
		e := strings.IndexAny(text[from+1:], "\n"+text[from:from+1])
		if e < 0 || text[from+1+e] != text[from] {
			return Finding{}, false
		}
		return checked(text, from+1, from+1+e, cls, "secret-assignment", true)
	}
	i := from
	if i < len(text) && text[i] == '`' {
		i++
	}
	e := i
	for e < len(text) && !strings.ContainsRune(" \t\r\n`'\",;)", rune(text[e])) {
		e++
	}
	for e > i && (text[e-1] == '.' || text[e-1] == ':') {
		e--
	}
	if e-i < 12 || !strings.ContainsAny(text[i:e], "0123456789") {
		return Finding{}, false
	}
	return checked(text, i, e, max(cls, secretName), "secret-assignment", false)
}

// formNext finds where a form's next field starts: &name=.
var formNext = regexp.MustCompile(`&[A-Za-z_][A-Za-z0-9_]*=`)

// badgeURL reports whether the query at ns belongs to an image's URL (a
// README's status badge: …/badge.svg?token=…), whose token only shows a
// build's status.
func badgeURL(text string, ns int) bool {
	q := strings.LastIndexByte(text[max(0, ns-200):ns], '?')
	if q < 0 {
		return false
	}
	path := strings.ToLower(text[max(0, ns-200) : max(0, ns-200)+q])
	return strings.HasSuffix(path, ".svg") || strings.HasSuffix(path, ".png") || strings.HasSuffix(path, "/badge")
}

// versionLike reports whether v is a package's version or where to get
// it (^4.17.21, npm:^9.0.2, workspace:*, git+https://…): what a lockfile
// or a manifest gives a package whose name ends in token (jsonwebtoken).
// artifactVersion reports whether v is a package's name and version
// (jjwt-jackson-0.11.2 of io.jsonwebtoken:jjwt-jackson-0.11.2, a Maven
// coordinate): words joined by dashes, then a dash and a version.
func artifactVersion(v string) bool {
	i := strings.LastIndexByte(v, '-')
	if i <= 0 || !versionLike(v[i+1:]) {
		return false
	}
	for _, w := range strings.Split(v[:i], "-") {
		if len(w) < 2 || strings.ToLower(w) != w || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" {
			return false
		}
	}
	return true
}

func versionLike(v string) bool {
	l := strings.ToLower(v)
	for _, p := range []string{"npm:", "workspace:", "link:", "portal:", "patch:", "github:", "git+", "git:", "catalog:", "jsr:"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	l = strings.TrimLeft(l, "^~<>=v ")
	if l == "" || l[0] < '0' || l[0] > '9' {
		return false
	}
	for i := 0; i < len(l); i++ {
		if c := l[i]; !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'x' || c == '*' || c >= 'a' && c <= 'z' && i > 0 && l[i-1] == '-') {
			return false
		}
	}
	return strings.Contains(l, ".")
}

// wordEnds reports whether the credential word at text[p] can end a
// word of a name: a short one (pat, key, pass, pw, sas, jwt) must not go
// on in lower case (path, pattern, keyboard, passed), so that the many
// words that only start like one cost nothing.
func wordEnds(text string, p int) bool {
	for _, w := range []string{"pat", "key", "pass", "pw", "sas", "jwt"} {
		if len(text)-p < len(w) || !strings.EqualFold(text[p:p+len(w)], w) {
			continue
		}
		e := p + len(w)
		if e >= len(text) {
			return true
		}
		c := text[e]
		if c < 'a' || c > 'z' {
			return true
		}
		rest := strings.ToLower(text[e:min(len(text), e+6)])
		return w == "pass" && (strings.HasPrefix(rest, "word") || strings.HasPrefix(rest, "wd") || strings.HasPrefix(rest, "phrase") || strings.HasPrefix(rest, "code"))
	}
	return true
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

// digitInside reports whether v has a digit with letters after it.
func digitInside(v string) bool {
	i := strings.IndexAny(v, "0123456789")
	if i < 0 {
		return false
	}
	return strings.IndexFunc(v[i:], unicode.IsLetter) >= 0
}

// codeOperand reports whether v, unquoted, is an operand of code rather
// than a literal: what is left when an argument's or a statement's end
// (, ; or a call's closing parenthesis) is taken off it is a member or a
// variable (keypair.PrivateKey;,
// storage_account.primary_access_key,), a type (pulumi.Input<string>),
// a word of the language (true,), a variable named for the secret it
// holds (clusterDBPassword, sql_user_password), or too short for its
// name (pwd,). A setting's literal (DB_PASSWORD=…) is judged so only
// when such an end follows it, as it does in code alone.
func codeOperand(v string, minLen int, literal bool) bool {
	c := strings.TrimRight(v, ",;)")
	if len(c) == len(v) && literal {
		return false
	}
	if len(c) < minLen || wordValues[strings.ToLower(c)] || dottedIdentifier(c) || typeExpr(c) {
		return true
	}
	return identLikeAny(c) && wordsOnly(c) && nameClass(c) != notSecret
}

// wordsOnly reports whether the name v is made of words: each of its
// words (cut at _ and case changes) letters alone, with a vowel unless
// it is as short as an acronym (clusterDBPassword, sql_user_password,
// msaSecret). A random token falls into pieces with digits or
// without vowels.
func wordsOnly(v string) bool {
	words := nameWords(v)
	if len(words) == 0 {
		return false
	}
	for _, w := range words {
		if len(w) > 16 || !wordIdent(w) || len(w) > 4 && !strings.ContainsAny(w, "aeiouy") {
			return false
		}
	}
	return true
}

// typeExpr reports whether v is a generic type: a name or a path of
// names with type arguments (pulumi.Input<string>, Output<Map<String,
// String>>, Promise<string[]>).
func typeExpr(v string) bool {
	k := strings.IndexByte(v, '<')
	if k <= 0 || !strings.HasSuffix(v, ">") {
		return false
	}
	if head := v[:k]; !dottedIdentifier(head) && !(identLikeAny(head) && wordsOnly(head)) {
		return false
	}
	args := strings.FieldsFunc(v[k:], func(r rune) bool { return strings.ContainsRune("<>,. |[]?", r) })
	if len(args) == 0 {
		return false
	}
	for _, a := range args {
		if !identLikeAny(a) || !wordsOnly(a) {
			return false
		}
	}
	return true
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
