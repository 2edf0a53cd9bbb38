package secrets

import (
	"slices"
	"strings"
)

// The names that say their value is a secret: their words, how
// strongly they say it, and the words around them that say otherwise.

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
	if words[last] == "pwd" && len(words) == 1 && name == "PWD" {
		// A lone PWD is the working directory; pwd and Pwd, keys of
		// a setting or a connection string, are passwords.
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

func upperSnake(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
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
		if w == "pw" {
			// dbPwd, DbPwd: pwd ends the word (not pwdump).
			return rest[0] == 'd' && (len(rest) == 1 || rest[1] < 'a' || rest[1] > 'z')
		}
		return w == "pass" && (strings.HasPrefix(rest, "word") || strings.HasPrefix(rest, "wd") || strings.HasPrefix(rest, "phrase") || strings.HasPrefix(rest, "code"))
	}
	return true
}
