package secrets

import (
	"slices"
	"strings"
)

// The passwords people choose. A credential's place (a password's
// name, a URL's password, a .netrc or .pgpass line, a command's
// password flag) given one of the commonest passwords gives away a
// credential as it gives away any other: letmein, iloveyou, dragon,
// trustno1, admin123, P@ssw0rd123 are what people set, and a reviewer
// redacts them from a transcript however weak they are. What stands for
// a password in docs and templates is another list (placeholderWord,
// placeholder: password, changeme, your_password, example, xxxx,
// <password>): the field's own word, or a word that says "put yours
// here".

// chosenWords are the commonest passwords of the published lists of
// leaked passwords, lower case, without the digits and signs people
// add after them (trustno1 and welcome1 keep theirs: the list has them
// so).
var chosenWords = map[string]bool{
	"letmein": true, "iloveyou": true, "dragon": true, "monkey": true, "trustno1": true, "opensesame": true,
	"sunshine": true, "princess": true, "football": true, "baseball": true, "welcome": true, "welcome1": true,
	"master": true, "shadow": true, "superman": true, "batman": true, "starwars": true, "whatever": true,
	"freedom": true, "qwerty": true, "qwertyuiop": true, "azerty": true, "asdfgh": true, "asdfghjkl": true,
	"zxcvbn": true, "zxcvbnm": true, "1qaz2wsx": true, "zaq12wsx": true, "1q2w3e4r": true, "1q2w3e": true,
	"hunter": true, "hunter2": true, "mustang": true, "michael": true, "jordan": true, "jennifer": true,
	"charlie": true, "ninja": true, "loveme": true, "lovely": true, "flower": true, "hello123": true,
	"pokemon": true, "computer": true, "soccer": true, "hockey": true, "killer": true, "cheese": true,
	"matrix": true, "access": true, "abc123": true, "pass123": true, "admin123": true,
	"root123": true, "qwe123": true, "123456": true, "1234": true, "12345": true, "1234567": true,
	"123123": true, "654321": true, "111111": true, "000000": true, "123321": true, "121212": true,
	"666666": true, "696969": true, "7777777": true, "112233": true,
}

// leetPasswords are "password" and "secret" spelled as a password's
// rules ask (a digit, a sign): someone's choice, where the plain word
// is the field's own.
var leetPasswords = []string{"p@ssw0rd", "p@ssword", "passw0rd", "p4ssw0rd", "p4ssword", "pa55word", "pa55w0rd", "p@55w0rd", "p@$$w0rd", "p@$$word"}

// chosenPassword reports whether v is one of the passwords people
// choose: one of chosenWords or leetPasswords whole, or with at most
// four digits or signs after it (letmein1, dragon2024, P@ssw0rd123!),
// or spelled as two words (open sesame, open_sesame, open-sesame); or
// a short word of one's own and a count from one (anon123, mike1234).
func chosenPassword(v string) bool {
	if len(v) < 4 || len(v) > 24 {
		return false
	}
	l := strings.ToLower(v)
	for _, sep := range []string{" ", "_", "-"} {
		if strings.Count(l, sep) == 1 && !strings.HasPrefix(l, sep) && !strings.HasSuffix(l, sep) {
			if j := strings.ReplaceAll(l, sep, ""); chosenWords[j] || slices.Contains(leetPasswords, j) {
				return true
			}
		}
	}
	if chosenWords[l] || slices.Contains(leetPasswords, l) || wordAndCount(l) {
		return true
	}
	base := strings.TrimRight(l, "0123456789!.#*?$@")
	if base == "" || len(l)-len(base) > 4 {
		return false
	}
	return chosenWords[base] && !allDigits(base) || slices.Contains(leetPasswords, base)
}

// wordAndCount reports whether l is a word of three or four letters of
// one's own and a count from one after it (anon123, mike1234): what a
// user sets when asked for letters and digits. A word that stands for
// a password or a key (pass123, key_123, test1234, api-1234) and the
// alphabet counted (abcd1234) are placeholders.
func wordAndCount(l string) bool {
	base := strings.TrimRight(l, "0123456789")
	return len(base) >= 3 && wordIdent(base) && !strings.Contains(base, "_") && counted(l, 4) &&
		!alphabetCounted(l) && !madeOf(base, placeholderParts) && !sampleWords[base]
}
