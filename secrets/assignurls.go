package secrets

import (
	"regexp"
	"strings"
	"sync"
)

// URLs whose credentials are none: hosts kept for documentation, the
// queries of badges and forms.

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

// formNext finds where a form's next field starts: &name=.
var formNext = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`&[A-Za-z_][A-Za-z0-9_]*=`) })

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

// bareUserinfo reports whether text[s:e], found as the password of
// user:password@host with no scheme before it, is one: its user is no
// header's or scheme's name (mailto:joe@acme.io, From:…), nor the same
// as the password, and the host is no documentation's.
func bareUserinfo(text string, s, e int) bool {
	u := s - 1
	for u > 0 && text[u-1] != ' ' && text[u-1] != '\t' && text[u-1] != '\n' && strings.IndexByte("\"'=(,;`", text[u-1]) < 0 {
		u--
	}
	user := strings.ToLower(text[u : s-1])
	switch user {
	case "mailto", "from", "to", "cc", "bcc", "reply-to", "sender", "email", "e-mail", "mail", "sip", "sips", "xmpp", "tel",
		"contact", "author", "maintainer", "committer", "by", "at", "via", "cc'd", "re", "fwd":
		return false
	}
	if strings.EqualFold(user, text[s:e]) {
		return false
	}
	return !exampleHost("://"+text[s:min(len(text), e+300)], 3)
}

// sampleAtNamedHost reports whether text[s:e], a URL's password, is a
// documentation's sample word (contoso, tiger, foobared) given to a
// named host that is no documentation's nor this machine's
// (mongodb://mongoadmin:contoso@cluster0.foo.mongodb.net): there it is
// the password someone set, as a chosen password is. A placeholder
// (password, secret, changeme) stays one wherever it points.
func sampleAtNamedHost(text string, s, e int) bool {
	v := text[s:e]
	l := strings.ToLower(v)
	if !sampleWords[l] || placeholder(v) || placeholderWord(v) || wordValues[l] || e >= len(text) || text[e] != '@' {
		return false
	}
	host := strings.ToLower(text[e+1:])
	if k := strings.IndexAny(host, "/?#: \t\n\"'`),;<"); k >= 0 {
		host = host[:k]
	}
	local := host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") || strings.HasPrefix(host, "127.")
	return strings.Contains(host, ".") && !local && !exampleHost(text, s)
}
