package secrets

import (
	"math"
	"slices"
	"strings"
)

// passwordPlace are the rules that find a password by where it stands.
var passwordPlace = map[string]bool{"url-credentials": true, "userinfo-password": true, "mysql-password-flag": true, "connection-string-password": true,
	"basic-auth-flag": true, "password-argument": true}

// allowedValue reports whether the allow-list names v.
func (d *Detector) allowedValue(v string) bool {
	if len(d.allowIDs) > 0 && d.allowIDs[ValueID(v)] {
		return true
	}
	for _, a := range d.allow {
		if a.MatchString(v) {
			return true
		}
	}
	return false
}

// allowed drops the findings of text that the allow-list names, and
// the published examples whatever rule found them.
func (d *Detector) allowed(text string, f []Finding) []Finding {
	return slices.DeleteFunc(f, func(x Finding) bool {
		v := text[x.Start:x.End]
		return exampleValues[v] || d.allowedValue(v)
	})
}

// accepted reports whether a value any rule found can be a secret: not
// a marker, not a documented example, not a placeholder.
func accepted(v string) bool {
	l := strings.ToLower(v)
	if strings.HasPrefix(v, MarkerPrefix) || strings.Contains(l, "example") || strings.Contains(v, MarkerPrefix) ||
		strings.HasPrefix(v, "AKIAIOSFODNN7") || strings.HasPrefix(v, "wJalrXUtnFEMI/K7MDENG") || strings.Contains(l, "helloworld") {
		// The documented example keys (AKIAIOSFODNN7EXAMPLE and
		// wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, and their start
		// with other letters after it: AKIAIOSFODNN7SECRETS,
		// …bPxRfiCYESAMPLEKEY) are everywhere in code and docs, and no
		// secret; nor is a key's shape filled with "hello world"
		// (glptt-hellOworld380_testin).
		return false
	}
	if strings.Trim(v, "•●*") == "" {
		// A password shown masked (••••••••).
		return false
	}
	return !fillerBody(v) && !exampleValue(v)
}

// exampleValues are keys published as examples in projects' docs and
// copied from there into countless repositories and tutorials, as
// AKIAIOSFODNN7EXAMPLE is: no one's secret (docs/security.md says where
// each is from).
var exampleValues = map[string]bool{
	// The bcrypt hashes of golang.org/x/crypto/bcrypt's tests (of
	// "allmine" and its too long password), copied with the package.
	"$2a$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt.wU1qD4aFDcga": true,
	"$2$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt.wU1qD4aFDcga":  true,
	"$2a$10$XajjQvNhvvRt5GSeFk1xFe5l47dONXg781AmZtd869sO8zfsHuw7C": true,
	"$2a$10$LK9XRuhNxHHCvjX3tdkRKei1QiCDUKrJRhZv7WWZPuQGRUM92rOUa": true,
	// The Ceph keys of the Kubernetes project's volume examples (rbd,
	// cephfs, persistent-volume-provisioning/rbd).
	"AQB16V1VoF5mExAA5kCQs7bBj8VULRw26C84HA==": true,
	"AQDCZLtXORt+JhAAAXhDV4rlgpl2ccp4zDVROA==": true,
	"AQAMgXhVwBCeDhAA9nlPaFyfUSatGD4drFWDvQ==": true,
	// The storage account key of its azure_file example.
	"xIF1zJbnnojFLMSkBp50mx02rHsMK2sjU7mFt4L13hoB7drAaJ8jD6+A443jJogV7y2FUOhQCWPmM6YaNHy7qg==": true,
	// The passwords of NuGet's nuget.config reference
	// (packageSourceCredentials' ClearTextPassword).
	"33f!!lloppa":    true,
	"hal+9ooo_da!sY": true,
	// The public, search-only Algolia key of yarn's website, in its
	// sources and every copy of them.
	"6fe4476ee5a1832882e326b506d14126": true,
	// A Google API key of the Firebase Android SDK's examples.
	"AIzayDNSXIbFmlXbIE6mCzDLQAqITYefhixbX4A": true,
}

// exampleValue reports whether v, or what it decodes to from base64
// (a Secret's data), is one of exampleValues.
func exampleValue(v string) bool {
	if exampleValues[v] {
		return true
	}
	if len(v) < 40 || len(v) > 200 {
		return false
	}
	d, ok := plain64(v)
	return ok && exampleValues[d]
}

func (r *rule) accept(v string) bool {
	return !r.standIn(v) && r.fits(v)
}

// standIn reports whether v, found by the rule, stands for a secret
// rather than being one: a value the allow-list or the rule's filler
// takes, a placeholder, a word, a shell's variable, base64 of a test's
// word.
func (r *rule) standIn(v string) bool {
	if i := strings.Index(v, "</"); i > 0 {
		// curl -u username:token</command>: the value ends where
		// the XML element that holds it closes.
		v = v[:i]
	}
	if r.ID == "sentry-token" && shortSentrySecret(v) {
		return true
	}
	if !accepted(fillerPart(r.ID, v)) {
		return true
	}
	if r.ID == "url-credentials" && secretCounted(v) {
		return false
	}
	if passwordPlace[r.ID] && chosenPassword(v) {
		// postgres://app:iloveyou@…, mysql -pletmein: a password
		// people choose, where the structure says it is one.
		return false
	}
	if r.Placeholders && (placeholder(v) || wordValues[strings.ToLower(v)] || placeholderWord(v)) {
		return true
	}
	if weak[r.ID] && weakWord(v) && !(r.ID == "connection-string-password" && joinedWords(v) && !namesAField(v) && !placeholderWord(v) && !sampleWords[strings.ToLower(v)]) {
		// A connection string's Password=… is a literal, no name of
		// code: words joined there (specialbill_user) are a password.
		return true
	}
	if r.Placeholders && strings.HasPrefix(v, "$") && reservedStart(v, false) {
		// curl --user "$USER:$GITHUB_PASSWORD": a shell's variable.
		return true
	}
	if f := fillerPart(r.ID, v); r.ID == "slack-token" && !strings.ContainsAny(f, "0123456789") && identifierLike(f) {
		// xoxe.xoxp-1-SlackAppConfigurationAccessTokenHere: words
		// where the secret goes.
		return true
	}
	if r.ID == "password-argument" && (placeholder(v) || reference(v) || reservedStart(v, false)) {
		return true
	}
	if r.Placeholders {
		// dGVzdC1hcGkta2V5Cg== (test-api-key): base64 of a test's
		// word, as echo and base64 make it, is no secret either.
		if d, ok := plain64(v); ok && weakPlain(d) {
			return true
		}
	}
	return false
}

// shortSentrySecret reports whether v, a Sentry organization token
// (sntrys_, base64 of its claims, _, its secret), has a secret of other
// than the 43 characters Sentry gives it: a test's token made to fail.
func shortSentrySecret(v string) bool {
	body, ok := strings.CutPrefix(v, "sntrys_")
	i := strings.LastIndexByte(body, '_')
	return ok && i > 0 && len(body)-i-1 != 43
}

// fits reports whether v has what the rule asks of a secret's shape:
// no stub key, no code, a digit, both cases, the entropy.
func (r *rule) fits(v string) bool {
	if r.ID == "private-key" && stubKey(v) {
		return false
	}
	if r.NotCode && (dottedIdentifier(v) || codeLike(v) || placeholderWord(v)) {
		return false
	}
	if r.NeedDigit && !strings.ContainsAny(v, "0123456789") {
		return false
	}
	if r.NeedCase && (strings.ToLower(v) == v || strings.ToUpper(v) == v) {
		return false
	}
	return r.MinEntropy == 0 || Entropy(v) >= r.MinEntropy
}

// Entropy is the Shannon entropy of s in bits per byte.
func Entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var n [256]int
	for i := 0; i < len(s); i++ {
		n[s[i]]++
	}
	e, l := 0.0, float64(len(s))
	for _, c := range n {
		if c > 0 {
			p := float64(c) / l
			e -= p * math.Log2(p)
		}
	}
	return e
}

// sameAsUser reports whether the password text[s:e] of a URL is its
// user's name again (postgresql://umami:umami@…): a default, not a
// secret.
func sameAsUser(text string, s, e int) bool {
	k := strings.LastIndex(text[max(0, s-200):s], "://")
	if k < 0 {
		return false
	}
	user := text[max(0, s-200)+k+3 : s]
	user = strings.TrimSuffix(user, ":")
	return user != "" && strings.EqualFold(user, text[s:e])
}

// stubKey reports whether v is a whole private key block whose body is
// too short to be a key (-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n
// -----END …): a stand-in in an example file.
func stubKey(v string) bool {
	end := strings.Index(v, "-----END")
	if end < 0 {
		return false
	}
	start := strings.Index(v[5:], "-----")
	if start < 0 {
		return false
	}
	body := v[5+start+5 : end]
	n := 0
	for i := 0; i < len(body); i++ {
		if c := body[i]; c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' {
			n++
		}
	}
	return n < 40
}

// namesAField reports whether words joined by _ or a dash end in a
// credential's word (smtp_password, db-secret): the field's name given
// as its value, a template's.
func namesAField(v string) bool {
	w := strings.ToLower(v[max(strings.LastIndexAny(v, "_-"), -1)+1:])
	switch w {
	case "password", "passwd", "pwd", "pass", "secret", "key", "token":
		return true
	}
	return false
}
