package secrets

import (
	"regexp"
	"strings"
	"sync"
)

// fillerPart is the part of a value of rule id that is to be random:
// an X bearer token starts with its A's, and a Slack token's numbers
// are a team's and a user's ids, its last part its secret.
func fillerPart(id, v string) string {
	switch id {
	case "twitter-bearer-token":
		return strings.TrimLeft(v, "A")
	case "slack-token":
		if i := strings.LastIndexByte(v, '-'); i >= 0 && len(v)-i > 8 {
			return v[i+1:]
		}
	}
	return v
}

// weak are the rules that find passwords by where they stand (a URL, a
// command line, a connection string): a placeholder word there is no
// password (postgres://user:password@, redis-cli -a bitnami).
var weak = map[string]bool{"url-credentials": true, "userinfo-password": true, "mysql-password-flag": true, "connection-string-password": true}

// secretCounted reports whether v is the word secret and three digits
// or more (secret123): a tutorial's password under a name
// (password=secret123, TruffleHog's negative case), but the password a
// URL sends to a host not kept for documentation
// (https://user:secret123@api.acme.io/; example.com's are left out
// before).
func secretCounted(v string) bool {
	d, ok := strings.CutPrefix(v, "secret")
	return ok && len(d) >= 3 && allDigits(d)
}

// fillerBody reports whether v is a key's shape filled with filler
// rather than a key: a run of eight of one character (sk_test_xxxxxxxx,
// AKIA0000000000000000), or counting (1234567890, abcdefgh, 1a2b3c4d).
func fillerBody(v string) bool {
	if len(v) > 128 {
		// A private key or a long token has runs of its own (zeros
		// encode as AAAA…), but not of x (ops_eyJxxxx…: a token's
		// shape filled in).
		l := strings.ToLower(v)
		return strings.Contains(l, strings.Repeat("x", 24))
	}
	run := 1
	for i := 1; i < len(v); i++ {
		c := v[i] | 0x20
		if c == v[i-1]|0x20 && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '*' || c == '.') {
			run++
			if run >= 8 {
				return true
			}
			continue
		}
		run = 1
	}
	l := strings.ToLower(v)
	if strings.Contains(l, "12345678") || strings.Contains(l, "abcdefgh") || strings.Contains(l, "xxxx") || pairSaidOver(l) {
		return true
	}
	// Counting again and again (a123b45c6d78e9f0…): documentation's
	// stand-in for a key.
	runs := 0
	for _, c := range []string{"123", "234", "345", "456", "567", "678", "789", "890"} {
		runs += strings.Count(l, c)
	}
	return runs >= 4 && runs*16 >= len(l) || countingInTurn(l)
}

// pairSaidOver reports whether l holds two characters said over eight
// times in a row (ghp_ababab…): a token's shape filled in.
func pairSaidOver(l string) bool {
	for i := 0; i+16 <= len(l); i++ {
		if l[i] != l[i+1] && l[i:i+16] == strings.Repeat(l[i:i+2], 8) {
			return true
		}
	}
	return false
}

// countingInTurn reports whether l is letters and digits counting up
// in turn (1a2b3c4d, a1b2c3d4e5f6), four of each or more: a stand-in
// for a key.
func countingInTurn(l string) bool {
	if len(l) < 8 || len(l) > 64 {
		return false
	}
	var last [2]byte
	var n [2]int
	for i := 0; i < len(l); i++ {
		c := l[i]
		k := 0
		switch {
		case c >= 'a' && c <= 'z':
			k = 1
		case c < '0' || c > '9':
			return false
		}
		if i > 0 && (l[i-1] >= 'a') == (k == 1) {
			// Two of a kind side by side: not in turn.
			return false
		}
		if n[k] > 0 && c != last[k]+1 {
			return false
		}
		last[k] = c
		n[k]++
	}
	return n[0] >= 4 && n[1] >= 4
}

var placeholderWords = []string{
	"example", "changeme", "change_me", "change-me", "changeit", "changethis", "change_this", "change-this", "placeholder", "redacted", "your_", "your-",
	"yourkey", "yourtoken", "yoursecret", "yourpassword", "yourapikey", "your.", "replace_me", "replace-me",
	"replaceme", "replace_with", "replace-with", "insert_", "insert-", "enter_", "enter-", "dummy", "xxxx",
	"***", "...", "…", "#{", "\\(", "\\#(", "{%", "process.env", "os.environ", "getenv", "env[",
	"not_a_real", "not-a-real", "notreal", "fake_", "fake-", "_here", "-here", "todo", "fixme", "12345678",
	"anoncvs", "anonymous",
}

// tutorialPasswords are the field's own word with a count after it, as
// tutorials write it: a value is one when it is one of them whole,
// maybe with a few digits or signs after it (password123!), never
// because it holds one among characters of its own. The passwords
// people choose (P@ssw0rd, qwerty123, letmein) are theirs
// (chosenPassword).
var tutorialPasswords = []string{"password123"}

// tutorialPassword reports whether l, lower case, is one of
// tutorialPasswords with at most three digits or signs after it.
func tutorialPassword(l string) bool {
	for _, w := range tutorialPasswords {
		if rest, ok := strings.CutPrefix(l, w); ok && len(rest) <= 3 && strings.Trim(rest, "0123456789!.#*") == "" {
			return true
		}
	}
	return false
}

// pyFormat is a name of Python's % formatting (%(password)s): a
// reference. A %( that no name and ) follow is a key's characters.
var pyFormat = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`%\([A-Za-z_][A-Za-z0-9_.]*\)`) })

// placeholder reports whether v reads as a placeholder or a reference
// to a secret kept elsewhere rather than a secret.
func placeholder(v string) bool {
	l := strings.ToLower(v)
	if hasAny(l, placeholderWords) || tutorialPassword(l) || pyFormat().MatchString(v) || templated(v) {
		return true
	}
	// [password], {token}: a word in brackets.
	if len(l) > 2 && (l[0] == '[' && l[len(l)-1] == ']' || l[0] == '{' && l[len(l)-1] == '}' || l[0] == '<' && l[len(l)-1] == '>') {
		return true
	}
	// <your-key>, sk-<token>, <user>:<pass>: names in angle brackets
	// make the value, with little else. A value that holds <…> among
	// more of its own (Xq7<a>Lm2Rz9Tk4) is a password like any other.
	if angled(l) {
		return true
	}
	// A run of one character (aaaaaaaa, 00000000).
	return strings.Count(l, l[:1]) == len(l) || counted(l, 4) || alphabetCounted(l)
}

// alphabetCounted reports whether l is the alphabet from a, maybe with
// a letter skipped, and a count from one after it (abcefg123,
// abcde-1234): a value typed to fill a form's field.
func alphabetCounted(l string) bool {
	if l == "" || l[0] != 'a' {
		return false
	}
	i := 1
	for i < len(l) && l[i] > l[i-1] && l[i]-l[i-1] <= 2 && l[i] <= 'z' {
		i++
	}
	if i < 4 {
		return false
	}
	if i < len(l) && (l[i] == '-' || l[i] == '_') {
		i++
	}
	d := l[i:]
	return len(d) >= 3 && strings.HasPrefix("1234567890", d)
}

// counted reports whether l is a word of at most letters letters and a
// count from one (api-1234, key_123, spu-12345): a stand-in for a key
// in docs and tests.
func counted(l string, letters int) bool {
	i := 0
	for i < len(l) && l[i] >= 'a' && l[i] <= 'z' {
		i++
	}
	if i == 0 || i > letters {
		return false
	}
	if i < len(l) && (l[i] == '-' || l[i] == '_') {
		i++
	}
	d := l[i:]
	return len(d) >= 3 && strings.HasPrefix("1234567890", d)
}

// angled reports whether l is made of names in angle brackets (<token>,
// <your-api-key>) and at most five letters and digits besides (sk-,
// ghp_, a separator).
func angled(l string) bool {
	rest := 0
	names := 0
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c == '<' {
			if j := strings.IndexByte(l[i:], '>'); j > 1 && identLikeAny(strings.NewReplacer("-", "_", " ", "_", ".", "_").Replace(l[i+1:i+j])) {
				names++
				i += j
				continue
			}
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			rest++
		}
	}
	return names > 0 && rest <= 5
}

func hasAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
