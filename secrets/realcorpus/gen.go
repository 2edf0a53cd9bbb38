// Package realcorpus builds the corpus that holds loom's secret
// detector to real content: synthetic secrets of many kinds, in the
// documented shapes of their providers, written into messages the way
// agent sessions carry them (pastes, tool output as loom stores it,
// files, diffs, manifests, logs …), and clean messages cut from real
// files found where the tests run (the Go toolchain's tree, the module
// cache, the Debian system, lockfiles written by real package managers,
// real agent sessions).
//
// The secret shapes were learnt from the providers' documentation and
// from public rule sets; none of the generators looks at loom's own
// rules, so that the corpus measures the detector rather than mirrors
// it.
package realcorpus

import (
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
)

const (
	upper   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower   = "abcdefghijklmnopqrstuvwxyz"
	digits  = "0123456789"
	alnum   = upper + lower + digits
	lowNum  = lower + digits
	upNum   = upper + digits
	hexLow  = "0123456789abcdef"
	hexUp   = "0123456789ABCDEF"
	b64     = alnum + "+/"
	url64   = alnum + "-_"
	b32     = upper + "234567"
	bech32  = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
	pwChars = alnum + "!#%^*-_+=.,:@&<>?~"
	urlPw   = alnum + "-_.~"
)

// Gen makes values from a seeded source, so that every run sees the
// same corpus.
type Gen struct{ r *rand.Rand }

// NewGen returns a Gen seeded with seed.
func NewGen(seed uint64) *Gen {
	return &Gen{r: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))}
}

// placeholderish are fragments that make a value read as a placeholder
// or a documentation sample: a generated value never holds one.
var placeholderish = []string{"example", "xxxx", "test", "fake", "dummy", "sample", "changeme",
	"placeholder", "your", "redact", "0000", "1234", "abcd", "aaaa", "secret", "token", "password"}

func plausible(s string) bool {
	l := strings.ToLower(s)
	for _, p := range placeholderish {
		if strings.Contains(l, p) {
			return false
		}
	}
	return true
}

// S returns n characters drawn from set. Long values have at least one
// digit and both cases when the set has them, as real keys do, and no
// value reads as a placeholder.
func (g *Gen) S(set string, n int) string {
	for {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[g.r.IntN(len(set))]
		}
		s := string(b)
		if n >= 16 && (strings.ContainsAny(set, digits) && !strings.ContainsAny(s, digits) ||
			strings.ContainsAny(set, upper) && !strings.ContainsAny(s, upper) ||
			strings.ContainsAny(set, lower) && !strings.ContainsAny(s, lower)) {
			continue
		}
		if plausible(s) {
			return s
		}
	}
}

// N returns a number in [lo, hi].
func (g *Gen) N(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

// Pick returns one of xs.
func (g *Gen) Pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// Chance is true with probability p.
func (g *Gen) Chance(p float64) bool { return g.r.Float64() < p }

// Digits returns n decimal digits, the first not 0.
func (g *Gen) Digits(n int) string { return g.S("123456789", 1) + g.S(digits, n-1) }

// UUID returns a random version 4 UUID.
func (g *Gen) UUID() string {
	h := g.S(hexLow, 32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-" + g.Pick("8", "9", "a", "b") + h[17:20] + "-" + h[20:]
}

// crc62 is the six-character base62 CRC32 checksum that GitHub and npm
// append to the random part of their tokens.
func crc62(s string) string {
	const set = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	n := crc32.ChecksumIEEE([]byte(s))
	b := make([]byte, 6)
	for i := 5; i >= 0; i-- {
		b[i] = set[n%62]
		n /= 62
	}
	return string(b)
}

var words = []string{"maple", "river", "copper", "falcon", "harbor", "lantern", "meadow", "orbit",
	"pepper", "quartz", "saddle", "timber", "velvet", "willow", "amber", "basalt", "cobalt", "ember",
	"fjord", "garnet", "hazel", "indigo", "juniper", "kettle", "lumen", "marble", "nectar", "opal",
	"prairie", "quill", "raven", "sierra", "tundra", "umber", "violet", "walnut", "zephyr", "cedar",
	"thistle", "glacier", "mosaic", "pylon", "sorrel", "tinder", "bramble", "cinder", "drizzle"}

func title(w string) string { return strings.ToUpper(w[:1]) + w[1:] }

// Password returns a password as people and tools choose them: random
// from a generator (with punctuation, & < > among it), a passphrase of
// words, or words with digits and a sign.
func (g *Gen) Password() string {
	switch g.r.IntN(4) {
	case 0:
		return g.S(pwChars, g.N(14, 28))
	case 1:
		return title(g.Pick(words...)) + title(g.Pick(words...)) + g.S(digits, g.N(2, 4)) + g.Pick("!", "#", "&", "$", "%", "*", "?")
	case 2:
		return g.Pick(words...) + "-" + g.Pick(words...) + "-" + g.Pick(words...) + "-" + g.S(digits, 2)
	default:
		return g.S(alnum, g.N(16, 32))
	}
}

// URLPassword returns a password that needs no escaping in a URL.
func (g *Gen) URLPassword() string {
	if g.Chance(0.3) {
		return title(g.Pick(words...)) + g.S(digits, g.N(3, 5)) + title(g.Pick(words...))
	}
	return g.S(urlPw, g.N(16, 32))
}

// User returns a user name.
func (g *Gen) User() string {
	return g.Pick("app", "api", "deploy", "svc_orders", "admin", "postgres", "root", "backend", "ci-bot", "reporting", "etl", "webapp", "billing")
}

// Host returns an internal or cloud host name.
func (g *Gen) Host() string {
	return g.Pick("db.internal", "10.0.3.17", "pg-primary.prod.svc.cluster.local",
		"orders-db.c9akciq32.eu-west-1.rds.amazonaws.com", "mysql.staging.lan", "localhost",
		"192.168.1.40", "shop-db.postgres.database.azure.com", "db", "postgres")
}

func b64s(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func b64raw(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func (g *Gen) email() string {
	return fmt.Sprintf("%s.%s@%s", g.Pick("dana", "li", "omar", "sven", "ines", "kofi", "mara", "yuki"),
		g.Pick("ortiz", "chen", "haddad", "berg", "costa", "mensah", "novak", "sato"),
		g.Pick("acme.io", "northwind.dev", "globex.com", "initech.net"))
}
