package secrets

import (
	"strings"
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

// findAssignments returns the values given to names that say secret:
// at are where the credential words of text are.
func findAssignments(text string, at []int, out []Finding) []Finding {
	last := -1
	for _, p := range at {
		if p < last || !wordEnds(text, p) {
			continue
		}
		ns, ne, s, e := nameAround(text, p)
		last = ne
		if f, ok := gluedValue(text, p, s, e); ok {
			out = append(out, f)
			last = max(last, f.End)
			continue
		}
		flag := s > ns && text[ns] == '-'
		name := text[s:e]
		cls := assignedClass(text, s, name, flag)
		if cls == notSecret {
			continue
		}
		if f, ok := assignedValue(text, s, e, name, cls, flag); ok && !misfit(text, s, name, text[f.Start:f.End], cls) {
			out = append(out, f)
			last = max(last, f.End)
		}
	}
	return out
}

// nameAround returns the whole name around the credential word at
// text[p]: ns and ne with the dashes and dots around it (a flag's
// leading dashes), s and e without them.
func nameAround(text string, p int) (ns, ne, s, e int) {
	ns, ne = p, p
	for ns > 0 && isNameByte(text[ns-1]) {
		ns--
	}
	for ne < len(text) && isNameByte(text[ne]) {
		ne++
	}
	s, e = ns, ne
	for s < e && (text[s] == '-' || text[s] == '.') {
		s++
	}
	for e > s && (text[e-1] == '-' || text[e-1] == '.') {
		e--
	}
	return ns, ne, s, e
}

// assignedClass is the class of the name at text[s:], a flag's name
// when flag, as one given a value: notSecret for a name too short or
// too long, a reference, a part of a resource's name or a test's
// result.
func assignedClass(text string, s int, name string, flag bool) class {
	if len(name) < 2 || len(name) > 80 {
		return notSecret
	}
	if s >= 2 && text[s-2:s] == "${" {
		// ${DB_PASSWORD:-default}: a shell's or a template's
		// reference, with a default for when it is unset.
		return notSecret
	}
	if inARN(text, s) {
		// arn:aws:secretsmanager:…:secret:prod/db-AbCdEf: a
		// resource's name, not a value given to one.
		return notSecret
	}
	if name != "pass" && strings.EqualFold(name, "pass") {
		// PASS, Pass: a test's result, not a password.
		return notSecret
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
	return cls
}

// misfit reports whether v, the value given to the name at text[s:],
// has the shape of a key that its name or its format says it cannot
// be, or of a public key's fingerprint.
func misfit(text string, s int, name, v string, cls class) bool {
	if cls < passwordName && brokenTelegram(name, v) {
		// telegram_api_token = "0948:Amlrj…": a bot token's
		// shape with the wrong lengths is none.
		return true
	}
	if cls < passwordName && brokenJWT(v) {
		// apiKey := "eyJ0eXAiOiJKV1QiLCJhbGCiOi…": a token's
		// header that is no JSON.
		return true
	}
	if cls < passwordName && alteredKey(text, s, name, v) {
		// netsuite token - 'KeYcG56V…WD?5iGv…': a long key with
		// one byte no key's alphabet has is a key altered.
		return true
	}
	if signingKeyFingerprint(name, v) {
		// docker_repo_key: '9DC8…CD88': the fingerprint of a
		// package repository's public signing key.
		return true
	}
	// ramp token - 'ramp_id_tz8O…d?SIv…': a service's key that its
	// format does not allow.
	return cls < passwordName && serviceMisfit(text, s, name, v)
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
	case a.before == '"' && a.quotedName && tfVariable(text, a.ns-1):
		// Terraform: variable "db_password" { … default = "…" }.
		if j := tfDefault(text, i); j > 0 {
			f, ok = a.value(j, "=")
			return f, ok, true
		}
		return Finding{}, false, true
	case a.before == '<' && i < len(text) && text[i] == '>':
		// XML: <password>…</password>.
		f, ok = elementValue(text, i, a.cls)
		return f, ok, true
	}
	return Finding{}, false, false
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
			if comparisonOps[sep] && a.cls >= secretName {
				return comparedValue(text, i+1, i+1+end, id)
			}
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
		// A password there is a literal, whatever word it is.
		return checkedForm(text, i, endAt(text, i, " \t\r\n&#;\"'<>`)]},"), a.cls, id, false, true)
	case a.shellVariable():
		// A shell's or a .env's NAME=value (maybe before a command:
		// API_KEY=… go run .): to the first space.
		e := carrierQuote(text, i, endAt(text, i, " \t\r\n"))
		if k := strings.Index(text[i:e], "</"); k >= 0 {
			e = i + k
		}
		return checkedForm(text, i, e, a.cls, id, false, true)
	}
	if a.lineStart && !a.quotedName {
		return a.settingValue(i, sep, id)
	}
	// A flag's password is a literal, whatever word it is
	// (--password letmein); elsewhere an unquoted word is code's.
	return checkedForm(text, i, endAt(text, i, " \t\r\n\"'`,;)]}<>"), a.cls, id, false, a.flag)
}

// shellVariable reports whether the name, given a value by =, is a
// shell's or a .env's variable: on a line of its own, or in capitals
// and not inside a reference (${…}, $NAME).
func (a *assignment) shellVariable() bool {
	return (a.lineStart || upperSnake(a.name) && a.before != '$' && a.before != '{') && !a.quotedName && !strings.Contains(a.name, ".")
}

// entryValue reads the value of "API_KEY=…" in a list (docker
// inspect's Env): the quotes hold it.
func (a *assignment) entryValue(i int, id string) (Finding, bool) {
	text := a.text
	e := i
	for e < len(text) && text[e] != a.before && text[e] != '\n' {
		e++
	}
	if k := formNext().FindStringIndex(text[i:e]); k != nil {
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
	e = carrierQuote(text, i, e)
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
	if !secretValue(v, cls, quoted, literal) || namesItself(text, s, v) || cls == passwordName && anonymousLogin(text, s, v) {
		return Finding{}, false
	}
	return Finding{RuleID: id, Start: s, End: e}, true
}

// gluedValue reads a value written right after its name with a dash
// between them (prospect-token-ba98…, hiveage-secret-KEY-ABC1…,
// hellosign-PRIVATE-key-LaKS…==), which a name's bytes take in as one
// name: the name, text[s:e], is cut at its last dash after the
// credential word at p when what follows is one word of letters and
// digits, 16 bytes or more and random (not base64 of text), that the
// name before the dash says is secret. A value with dashes or dots of its own
// (release-token-2024-01, secret-key-generator.v2) is part of a name.
func gluedValue(text string, p, s, e int) (Finding, bool) {
	d := strings.LastIndexByte(text[p:e], '-')
	if d <= 0 {
		return Finding{}, false
	}
	d += p
	ve := e
	for ve < len(text) && text[ve] == '=' {
		// base64's padding (…kdfhKJH3LdF==).
		ve++
	}
	if ve < len(text) && strings.IndexByte(" \t\r\n'\"`})]<>,;|&:", text[ve]) < 0 {
		// The value goes on: a path, a host, a URL, or a key with a
		// byte no key's alphabet has ('key-8Dbq…C?zfe…'), which is
		// a key altered.
		return Finding{}, false
	}
	v := text[d+1 : e]
	if len(v) < 16 || strings.IndexByte(v, '.') >= 0 || !letterAndDigit(v) {
		return Finding{}, false
	}
	if _, text := decode64(v); text {
		// bedrock-api-key-YmVkcm9jay5…: base64 of text is a token's
		// own body after its prefix, which its format checks, not a
		// random key given to a name.
		return Finding{}, false
	}
	name := text[s:d]
	cls := assignedClass(text, s, name, false)
	if cls == notSecret {
		return Finding{}, false
	}
	f, ok := checked(text, d+1, ve, cls, "secret-assignment", false)
	if !ok || misfit(text, s, name, text[f.Start:f.End], cls) {
		return Finding{}, false
	}
	return f, true
}
