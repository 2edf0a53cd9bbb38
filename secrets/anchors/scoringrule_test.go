package anchors_test

import (
	"encoding/base64"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/loomhq/loom/secrets"
)

// The scoring rule of docs/security.md ("The scoring rule"): of the
// values Kingfisher's examples must lose, left out of recall are
// (a) values that are not secrets (user names, client ids,
// $VAR/#{…}/${…} references, public keys, labels), (b) self-declared
// fakes (EXAMPLE markers, base64 of sentences), (c) bare words with no
// credential context, and (d) a field's own word or a template token
// only when the rest of the text is a template too. Everything else is
// counted. ruleClass decides each value by the criteria below; a case
// no criterion can decide is in handRulings, with its reason.

const (
	ruleCounted   = "counted"
	ruleNotSecret = "(a) not a secret"
	ruleFake      = "(b) self-declared fake"
	ruleBare      = "(c) bare word"
	ruleTemplate  = "(d) template"
)

// A ruling is a value's class under the rule and the criterion that
// decided it.
type ruling struct{ class, why string }

// handRulings decides the cases no criterion below can, keyed by rule
// and example ("kingfisher.gcp.1/examples[0]"). values, when given,
// are what is scored in place of the case's own: Kingfisher's capture
// there runs over more than the secret.
var handRulings = map[string]struct {
	ruling
	values []string
}{
	"kingfisher.gcp.1/examples[0]": {ruling: ruling{ruleNotSecret,
		"the value is the whole text: a service account's public field (auth_provider_x509_cert_url, an address Google publishes) given a run of hex, under no secret's name"}},
	"kingfisher.linkedin.1/examples[1]": {ruling: ruling{ruleNotSecret,
		"LinkedIn's \"API key\" (14 characters) is its OAuth client id, sent in the clear in every authorization URL; the secret beside it is LinkedIn's other rule"}},
	"kingfisher.hiveage.1/examples[0]": {ruling: ruling{ruleFake,
		"the key is hiveage-secret-KEY-ABC123XYZ789abcd5678: a placeholder's letters (ABC, XYZ) and counting (abcd5678), which the capture cuts before its abcd"}},
	"kingfisher.google.6/examples[1]": {ruling: ruling{ruleCounted,
		"the capture runs from the client id (no secret) to the client secret: the secret alone is scored"},
		values: []string{"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"}},
	"kingfisher.codeclimate.1/examples[1]": {ruling: ruling{ruleCounted,
		"Code Climate's test reporter id is the credential its reporter uploads with (kept as a CI secret), counted though its name ends in ID"}},
}

// ruleOf classifies the value v of case c.
func ruleOf(c Case, v string) ruling {
	text := c.Text
	name := nameOf(text, v)
	bare := strings.Trim(v, `=:'"; `)
	switch {
	case reference.MatchString(bare):
		return ruling{ruleNotSecret, "a reference ($VAR, ${…}, #{…}, %VAR%, {{…}})"}
	case publicKey.MatchString(bare):
		return ruling{ruleNotSecret, "a public key by its format (age1…, Mapbox's pk.)"}
	case slices.Contains(nameWords(name), "public"):
		return ruling{ruleNotSecret, "given to a public key's name"}
	case idName(name):
		return ruling{ruleNotSecret, "given to a user's name or an id (" + name + ")"}
	case addressName(name) && hostPath.MatchString(bare):
		return ruling{ruleNotSecret, "an address with no credential in it, given to a URL's name"}
	case strings.Contains(text, `"`+v+`" +`) || strings.Contains(text, `'`+v+`' +`):
		return ruling{ruleNotSecret, "a literal that code joins to variables (the credential is built of references)"}
	case examplesSaid(v):
		return ruling{ruleFake, "an EXAMPLE marker, in the value or in what its base64 decodes to"}
	case mask(bare):
		return ruling{ruleFake, "a mask: one character said over (######, xxxx)"}
	case sentence(v):
		return ruling{ruleFake, "base64 of a sentence"}
	case saidOver(v):
		return ruling{ruleFake, "a group said over three times in a row"}
	case name == "" && len(v) <= 16 && !credentialWords.MatchString(strings.Replace(text, v, "", 1)):
		return ruling{ruleBare, "a word with no credential's name or word around it"}
	case fieldWord(bare) && templateRest(text, v):
		return ruling{ruleTemplate, "a field's own word where the rest of the credential is a template too"}
	}
	return ruling{ruleCounted, ""}
}

var (
	reference = regexp.MustCompile(`^(\$\{[^}]*\}|\$[A-Za-z_]\w*|%[A-Za-z_]\w*%|#\{.*\}|\{\{.*\}\}|\$\(.*\))$`)
	publicKey = regexp.MustCompile(`^(age1[02-9ac-hj-np-z]{58}|pk\.eyJ[A-Za-z0-9_.-]+)$`)
	scheme    = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://$`)
	hostPath  = regexp.MustCompile(`^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+(/[A-Za-z0-9._~-]*)*$`)
	// credentialWords are the words that say a credential is near.
	credentialWords = regexp.MustCompile(`(?i)key|secret|token|pass|pwd|auth|credential|bearer|private|access|login`)
	b64Run          = regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}`)
)

// nameOf is the name a value is given to in text: the identifier
// before it on its line (or on the line before, when the value starts
// its line), past quotes, separators and brackets. A URL's or a bare
// user:password@host's password is named "password".
func nameOf(text, v string) string {
	i := valueAt(text, v)
	if i < 0 {
		return ""
	}
	if rest := text[i+len(v):]; strings.HasPrefix(rest, "@") && strings.HasSuffix(text[:i], ":") {
		return "password"
	}
	const seps = " \t\n'\"=:>(,[{`"
	before := strings.TrimRight(text[:i], strings.TrimPrefix(seps, " \t\n")+" \t")
	if strings.HasSuffix(before, "\n") {
		before = strings.TrimRight(before, seps)
	}
	// A URL given to a name: the name is the URL's.
	before = strings.TrimRight(scheme.ReplaceAllString(before, ""), seps)
	j := strings.LastIndexFunc(before, func(r rune) bool { return !(r == '_' || r == '-' || r == '.' || isAlnum(r)) })
	if j < 0 {
		return before
	}
	_, size := utf8.DecodeRuneInString(before[j:])
	return before[j+size:]
}

// valueAt is where v stands in text as a value: its last occurrence
// that does not go on from a letter or digit before it (the name
// before a value can hold the value's word: password 'password').
func valueAt(text, v string) int {
	at := -1
	for i := 0; ; {
		j := strings.Index(text[i:], v)
		if j < 0 {
			break
		}
		if k := i + j; k == 0 || !isAlnum(rune(text[k-1])) {
			at = k
		}
		i += j + 1
	}
	if at < 0 {
		return strings.Index(text, v)
	}
	return at
}

func isAlnum(r rune) bool { return r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) }

// nameWords splits a name into its lower-case words: at _ - . and
// where a lower-case letter meets a capital.
func nameWords(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for k, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
		case unicode.IsUpper(r) && k > 0 && unicode.IsLower(rs[k-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// idName reports whether a name names a user or an id (REACT_APP_USER,
// TWITTER_ID, bitbucket_id, twilioAccountSid) and no secret.
func idName(name string) bool {
	ws := nameWords(name)
	if len(ws) == 0 {
		return false
	}
	for _, w := range ws {
		if slices.Contains([]string{"secret", "password", "passwd", "pwd", "pass", "token"}, w) {
			return false
		}
	}
	return slices.Contains([]string{"id", "uid", "sid", "user", "username", "usr", "email", "account"}, ws[len(ws)-1])
}

// addressName reports whether a name names an address.
func addressName(name string) bool {
	ws := nameWords(name)
	return len(ws) > 0 && slices.Contains([]string{"url", "uri", "host", "hostname", "endpoint", "domain"}, ws[len(ws)-1])
}

// examplesSaid reports whether v, or what a base64 run of it decodes
// to, says it is an example ("EXAMPLE", "EXAMP12", a JWT whose claims
// are example@example.com).
func examplesSaid(v string) bool {
	if strings.Contains(strings.ToLower(v), "examp") {
		return true
	}
	for _, r := range b64Run.FindAllString(v, -1) {
		if strings.Contains(strings.ToLower(decode64(r)), "example") {
			return true
		}
	}
	return false
}

// decode64 decodes as much of a base64 run (standard or URL alphabet,
// padded or not) as whole groups of four hold; "" when it is no base64.
func decode64(r string) string {
	r = strings.NewReplacer("-", "+", "_", "/").Replace(r)
	b, err := base64.StdEncoding.DecodeString(r[:len(r)/4*4])
	if err != nil {
		return ""
	}
	return string(b)
}

// mask reports whether v is one character said four times or more.
func mask(v string) bool {
	return len(v) >= 4 && strings.Count(v, v[:1]) == len(v)
}

// sentence reports whether the longest base64 run of v decodes to
// words: letters, digits and spaces only, two words of three letters
// or more ("This is an instabot api token example").
func sentence(v string) bool {
	runs := b64Run.FindAllString(v, -1)
	if len(runs) == 0 {
		return false
	}
	s := decode64(slices.MaxFunc(runs, func(a, b string) int { return len(a) - len(b) }))
	if !strings.Contains(s, " ") {
		return false
	}
	words := 0
	for _, w := range strings.Fields(s) {
		for _, r := range w {
			if !(r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
				return false
			}
		}
		if len(w) >= 3 {
			words++
		}
	}
	return words >= 2
}

// saidOver reports whether v holds a group of four characters or more
// three times in a row (XYZabc123XYZabc123XYZabc123, base64 of FRFRFR…);
// groups of two and three are counted's.
func saidOver(v string) bool {
	for g := 4; 3*g <= len(v); g++ {
		for i := 0; i+3*g <= len(v); i++ {
			if v[i:i+g] == v[i+g:i+2*g] && v[i:i+g] == v[i+2*g:i+3*g] {
				return true
			}
		}
	}
	return false
}

// fieldWord reports whether v is a credential field's own word, alone
// or after a word or two (password, secret, myPassword, SOME_PASSWORD,
// smtp_password): letters and _ only.
func fieldWord(v string) bool {
	if v == "" || strings.IndexFunc(v, func(r rune) bool { return !(r == '_' || r < 128 && unicode.IsLetter(r)) }) >= 0 {
		return false
	}
	ws := nameWords(v)
	return len(ws) <= 3 && slices.Contains([]string{"password", "passwd", "pwd", "pass", "secret", "token", "key", "apikey", "credential", "credentials"}, ws[len(ws)-1])
}

var (
	// otherValue finds the credential's other parts: the user's name
	// (a field or a URL's user) and the database's.
	otherValue = regexp.MustCompile(`(?i)(?:\b(?:user ?(?:name|id)?|uid|login|database|dbname|initial catalog)\s*(?:=|:|\s)\s*['"]?([^;'"\s,&@:/]+)|://([^:/@\s]+):[^@\s/]*@)`)
	// instruction says a value is to be filled in.
	instruction = regexp.MustCompile(`(?i)enter your|your \w+ here|replace (this|with)`)
)

// templateRest reports whether the rest of the credential that holds v
// is a template too: each other part (the user's name, the database's)
// is a field's own word (user, username, myUsername, SOME_USERNAME,
// databasename, myDataBase), or, with no other part, the text tells
// the reader to enter theirs.
func templateRest(text, v string) bool {
	others := 0
	for _, m := range otherValue.FindAllStringSubmatch(strings.Replace(text, v, "", 1), -1) {
		others++
		ws := nameWords(m[1] + m[2])
		if len(ws) == 0 || len(ws) > 3 {
			return false
		}
		for _, w := range ws {
			if !slices.Contains([]string{"my", "your", "some", "the", "user", "username", "name", "database", "databasename", "data", "base", "db"}, w) {
				return false
			}
		}
	}
	return others > 0 || instruction.MatchString(text)
}

// ruleScore is the measure under the rule: the counted placements and
// those redacted, and the placements left out by class.
type ruleScore struct {
	counted tally
	out     map[string]int
}

// scoreUnderRule places each case's counted values in every carrier,
// counts what d redacts, and writes the missed counted placements
// (kingfisher-missed-counted.txt) and what was left out, by class and
// criterion (kingfisher-left-out.txt), for a person to review.
func scoreUnderRule(t *testing.T, d *secrets.Detector, cases []Case) ruleScore {
	s := ruleScore{out: map[string]int{}}
	missedRules := map[string]int{}
	var missed, left []string
	byClass := map[string]int{}
	for _, c := range cases {
		if !c.TP || len(c.Secrets) == 0 {
			continue
		}
		key := c.Rule + "/" + c.Name
		var keep []string
		var first ruling
		if h, ok := handRulings[key]; ok {
			first = h.ruling
			if h.class == ruleCounted {
				keep = c.Secrets
				if h.values != nil {
					keep = h.values
				}
			}
		} else {
			for i, v := range c.Secrets {
				r := ruleOf(c, v)
				if i == 0 || r.class == ruleCounted {
					first = r
				}
				if r.class == ruleCounted {
					keep = append(keep, v)
				}
			}
		}
		if len(keep) == 0 {
			s.out[first.class] += len(carriers)
			byClass[first.class+": "+first.why]++
			left = append(left, fmt.Sprintf("%s %s: %s: %.160q", first.class, key, first.why, c.Text))
			continue
		}
		scored := c
		scored.Secrets = keep
		var carMissed []string
		for _, car := range carriers {
			s.counted.n++
			if redacted(d, car.wrap, scored) {
				s.counted.ok++
				continue
			}
			carMissed = append(carMissed, car.name)
		}
		if len(carMissed) > 0 {
			missedRules[c.Source+"/"+c.Rule] += len(carMissed)
			missed = append(missed, fmt.Sprintf("%s %q in %s: %.300q", key, keep, strings.Join(carMissed, ","), c.Text))
		}
	}
	writeReport(t, "kingfisher-missed-counted.txt", missedRules, missed)
	writeReport(t, "kingfisher-left-out.txt", byClass, left)
	t.Logf("under the scoring rule: %d of %d counted placements redacted (%.2f%%)", s.counted.ok, s.counted.n, s.counted.pct())
	for _, k := range slices.Sorted(maps.Keys(s.out)) {
		t.Logf("  left out, %-24s %4d placements", k, s.out[k])
	}
	return s
}

// TestScoringRuleCriteria holds each criterion of the scoring rule to
// what it must decide, and to what it must leave counted.
func TestScoringRuleCriteria(t *testing.T) {
	for _, tc := range []struct{ text, v, class string }{
		{"REACT_APP_AUTH_USERNAME=bowie", "bowie", ruleNotSecret},
		{"GITHUB_CLIENT_ID=ac58d6da7d7a84c039b7", "ac58d6da7d7a84c039b7", ruleNotSecret},
		{"psExec -u User -p $Password -i", "$Password", ruleNotSecret},
		{"pwd=#{datastore['DBPASSWORD']}\"", "#{datastore['DBPASSWORD']}\"", ruleNotSecret},
		{"age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj", "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj", ruleNotSecret},
		{"azure_search_url=https://myservice.search.windows.net/indexes/myindex", "myservice.search.windows.net/indexes/myindex", ruleNotSecret},
		{"mailmodo ACCESS-EXAMP12-EXAMP12", "EXAMP12-EXAMP12", ruleFake},
		{"instabot TOKEN:VGhpcyBpcyBhbiBpbnN0YWJvdCBhcGkgdG9rZW4gZXhhbXBsZQ==", "VGhpcyBpcyBhbiBpbnN0YWJvdCBhcGkgdG9rZW4gZXhh", ruleFake},
		{"ak_live_XYZabc123XYZabc123XYZabc123XYZ", "ak_live_XYZabc123XYZabc123XYZabc123XYZ", ruleFake},
		{"user=apache password=###### dbname=x", "=######", ruleFake},
		{"letmein42", "letmein42", ruleBare},
		{"Server=host;User Id=username;Password=secret;Database=databasename;", "secret", ruleTemplate},
		{"ftp://username:password@ftp.example.com:21", "password", ruleTemplate},
		{"credentials {\n  username 'user'\n  password 'password'\n}", "password", ruleTemplate},
		{"REACT_APP_MAILER_PASSWORD=smtp_password # Enter your SMTP email password", "smtp_password", ruleTemplate},
		// Counted: a password someone chose, a user's own, a key.
		{"ftp://anon:anon123@ftp.trusted.com", "anon123", ruleCounted},
		{"user = Aladdin\npassword = open_sesame", "open_sesame", ruleCounted},
		{"mongodb://mongoadmin:contoso@something.foo.mongodb.net/db", "contoso", ruleCounted},
		{"User ID=specialbill_user; Password =specialbill_user;Initial Catalog=SpecialBill_PROD;", "specialbill_user", ruleCounted},
		{"Server=db;User Id=apache;Password=secret;", "secret", ruleCounted},
		{"REACT_APP_AUTH_PASS=whiteduke", "whiteduke", ruleCounted},
		{"sk_live_HQS0j4H75XpthOW", "sk_live_HQS0j4H75XpthOW", ruleCounted},
		{"square EAAA7h9fL9zQJR8P0eAioAf9239345rDA2349bQ8edUA9FgA5JojdsF3A9f6nKLmn", "EAAA7h9fL9zQJR8P0eAioAf9239345rDA2349bQ8edUA9FgA5JojdsF3A9f6nKLm", ruleCounted},
		{"fullstory_key = \"dXNlcjp7Y29uZmlybWVkOnRydWUsImt1cmEiOiJlbGVuaXZlIERlZlo6ZGJ0OnRydWU9\"", "dXNlcjp7Y29uZmlybWVkOnRydWUsImt1cmEiOiJlbGVuaXZlIERlZlo6ZGJ0OnRydWU9", ruleCounted},
	} {
		if got := ruleOf(Case{Text: tc.text}, tc.v); got.class != tc.class {
			t.Errorf("%q in %q: %s (%s), want %s", tc.v, tc.text, got.class, got.why, tc.class)
		}
	}
}
