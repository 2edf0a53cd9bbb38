package secrets

import (
	"strings"
)

// What parts a name that says secret from its value: = : := => and
// the rest, a flag's space, a dash before a quoted value, a C
// preprocessor's definition, a Terraform variable's default, and a
// comparison with a literal, which holds the secret the code accepts.

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
	case comparison(text[i:]) > 0:
		return text[i : i+comparison(text[i:])]
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
	case i > a.ne && i < len(text) && (text[i] == '"' || text[i] == '\'') && defined(text, a.ns):
		// #define WIFI_PASSWORD "…": a C preprocessor's definition,
		// the name and its quoted value parted by blanks.
		return " "
	case (upperSnake(a.name) && len(a.name) > 4 || a.cls >= keyName) && !a.quotedName:
		return proseSep
	}
	return ""
}

// tfVariable reports whether the quote at q opens the name of a
// Terraform variable's block: variable "…".
func tfVariable(text string, q int) bool {
	j := blanksBefore(text, q)
	return j < q && strings.HasSuffix(text[:j], "variable") && (j == len("variable") || !isNameByte(text[j-len("variable")-1]))
}

// tfDefault returns where the = of the default of the variable block
// that opens at i (after blanks) is, or 0: the block's end, or 512
// bytes, come first.
func tfDefault(text string, i int) int {
	i = skipBlanks(text, i)
	if i >= len(text) || text[i] != '{' {
		return 0
	}
	block := text[i:min(len(text), i+512)]
	if e := strings.Index(block, "\n}"); e >= 0 {
		block = block[:e]
	}
	for k := 0; ; {
		d := strings.Index(block[k:], "default")
		if d < 0 {
			return 0
		}
		d += k
		j := skipBlanks(block, d+len("default"))
		if (d == 0 || !isNameByte(block[d-1])) && j < len(block) && block[j] == '=' && (j+1 >= len(block) || block[j+1] != '=') {
			return i + j
		}
		k = d + len("default")
	}
}

// defined reports whether the name at ns is defined by the C
// preprocessor: #define (or # define) and blanks before it.
func defined(text string, ns int) bool {
	j := blanksBefore(text, ns)
	if j == ns || !strings.HasSuffix(text[:j], "define") {
		return false
	}
	return strings.HasSuffix(strings.TrimRight(text[:j-len("define")], " \t"), "#")
}

// comparison returns the length of the comparison that starts s (==,
// !=, ===, !==) when a quoted literal follows it, else 0: code that
// checks a secret against a literal (if creds.Secret != "open-sesame")
// holds the secret it accepts.
func comparison(s string) int {
	n := 0
	switch {
	case strings.HasPrefix(s, "===") || strings.HasPrefix(s, "!=="):
		n = 3
	case strings.HasPrefix(s, "==") || strings.HasPrefix(s, "!="):
		n = 2
	default:
		return 0
	}
	j := skipBlanks(s, n)
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		return n
	}
	return 0
}

// comparisonOps are the separators comparison returns.
var comparisonOps = map[string]bool{"==": true, "!=": true, "===": true, "!==": true}

// comparedValue reads the literal text[s:e] a secret is checked
// against: the password the code accepts, whatever words make it
// (open-sesame), unless it stands for one or is no token (a word of a
// format, a placeholder, a reference, a label, a word without a digit
// or a sign).
func comparedValue(text string, s, e int, id string) (Finding, bool) {
	v := text[s:e]
	if f, ok := checked(text, s, e, passwordName, id, true); ok {
		return f, ok
	}
	if len(v) < 6 || len(v) > 128 || standsFor(v, true) || notToken(v, passwordName, 4, true, false) || !strings.ContainsFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		return Finding{}, false
	}
	return Finding{RuleID: id, Start: s, End: e}, true
}
