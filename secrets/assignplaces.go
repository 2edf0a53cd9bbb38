package secrets

import (
	"strings"
)

// Where a name's value is written: a call's argument, an XML element
// or attribute, a name/value pair, a typed declaration, a sentence.

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
			s, e := j+1, j+1+e
			if e-s > 2 && text[s] != q && (text[s] == '"' || text[s] == '\'') && text[e-1] == text[s] {
				// '"951b…"': a string's literal quoted again, as
				// Gradle's buildConfigField writes it into code.
				s, e = s+1, e-1
			}
			return checked(text, s, e, cls, "secret-assignment", true)
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
	// An element's text is a literal: a password there is one
	// whatever word it is.
	return checkedForm(text, vs, ve, cls, "secret-assignment", false, true)
}

// proseSep is separator's answer for a name written in a sentence.
const proseSep = "prose"

// endAt returns where the first byte of stops at i or after it is, or
// the text's end.
func endAt(text string, i int, stops string) int {
	if k := strings.IndexAny(text[i:], stops); k >= 0 {
		return i + k
	}
	return len(text)
}

// carrierQuote cuts the unquoted value text[i:e] at the quote that
// closes the JSON string carrying its line ({"content":"export
// TOKEN=…"}): a " after which JSON's punctuation or the line's end
// comes is the string's end, not the value's byte.
func carrierQuote(text string, i, e int) int {
	for k := i; k < e; k++ {
		if text[k] == '"' && (k == i || text[k-1] != '\\') && (k+1 == len(text) || strings.IndexByte("},]\r\n", text[k+1]) >= 0) {
			return k
		}
	}
	return e
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
	// A value to its line's end is a setting's literal (YAML's
	// value: letmein); one a comma or a brace ends may be code's
	// (Pulumi's { name: "DB_PASSWORD", value: dbPassword }).
	literal := e == len(text) || text[e] == '\n' || text[e] == '\r'
	return checkedForm(text, i, i+len(strings.TrimRight(text[i:e], " \t")), cls, "secret-assignment", false, literal)
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
	j = typeEnd(text, j)
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

// typeEnd returns where the type that starts at text[start] ends: its
// name, path and type arguments, 40 bytes at the most.
func typeEnd(text string, start int) int {
	j := start
	for j < len(text) && j-start < 40 {
		c := text[j]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.&*[]<>?,'", c) >= 0 {
			j++
			continue
		}
		break
	}
	return j
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

// callArg reports whether the quote at q opens a call's first argument
// (define('…', setenv("…), or one after a quoted argument, as Gradle's
// calls without parentheses give a name and its value after a type:
// buildConfigField 'String', 'API_KEY', '"…"'.
func callArg(text string, q int) bool {
	j := blanksBefore(text, q)
	if j > 1 && text[j-1] == ',' {
		// Gradle's buildConfigField 'String', 'API_KEY', '"…"': the
		// argument before is a type's name. A list of names
		// (["user","password","host"], socket.io's fields of a URL)
		// gives the name no value.
		k := blanksBefore(text, j-1)
		if k == 0 || text[k-1] != '\'' && text[k-1] != '"' {
			return false
		}
		o := strings.LastIndexByte(text[max(0, k-12):k-1], text[k-1])
		if o < 0 {
			return false
		}
		switch text[max(0, k-12)+o+1 : k-1] {
		case "String", "boolean", "Boolean", "int", "Integer", "long", "Long":
			return true
		}
		return false
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
