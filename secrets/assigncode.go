package secrets

import (
	"strings"
	"unicode"
)

// What reads as code rather than a value: identifiers, expressions,
// paths, types and selectors, which a name that says secret may be
// given without holding one.

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

// indexExpr reports whether v reads as an expression of code: a name
// indexed or called (tokens[0], get_token(), cfg["key"]).
func indexExpr(v string) bool {
	i := 0
	for i < len(v) && (v[i] == '_' || v[i] == '.' || v[i] >= 'a' && v[i] <= 'z' || v[i] >= 'A' && v[i] <= 'Z' || i > 0 && v[i] >= '0' && v[i] <= '9') {
		i++
	}
	return i > 0 && i < len(v) && (v[i] == '[' || v[i] == '(')
}

// identifierLike reports whether v reads as a name in code or a path
// of names (testP256PrivateKey, smallType/int32, jsFetchCredentials,
// urn:ietf:params:oauth:grant-type:jwt-bearer) rather than a random
// token: cut into words at its separators and case changes, its words
// are words (long enough, with vowels), and its runs of digits short.
// A random string of mixed case falls into many one-letter pieces.
func identifierLike(v string) bool {
	segs, ok := namePieces(v)
	if !ok || len(segs) == 0 {
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

// namePieces cuts v into the words of a name of code: at case changes
// (a word's capital, an acronym's end), at runs of digits and at
// separators. ok is false when v holds a run of more than four digits
// or a character no name holds.
func namePieces(v string) (segs []string, ok bool) {
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
				return nil, false
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
			return nil, false
		}
	}
	flush(len(v))
	return segs, true
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
