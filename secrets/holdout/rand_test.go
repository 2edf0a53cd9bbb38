package holdout_test

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

const (
	lower  = "abcdefghijklmnopqrstuvwxyz"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digits = "0123456789"
	hexd   = "0123456789abcdef"
	alnum  = lower + upper + digits
	b64c   = alnum + "+/"
	b64u   = alnum + "-_"
	b32u   = upper + "234567"
)

type rng struct{ *rand.Rand }

func newRng(seed uint64) *rng { return &rng{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

func (r *rng) s(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return string(b)
}

// mixed makes a token of set that holds at least one digit and one
// letter of each case when the set has them: real tokens do.
func (r *rng) mixed(set string, n int) string {
	for {
		t := r.s(set, n)
		if n < 12 || (strings.ContainsAny(t, digits) == strings.ContainsAny(set, digits) &&
			strings.ContainsAny(t, upper) == strings.ContainsAny(set, upper) &&
			strings.ContainsAny(t, lower) == strings.ContainsAny(set, lower)) {
			return t
		}
	}
}

func (r *rng) pick(xs ...string) string { return xs[r.IntN(len(xs))] }
func (r *rng) chance(p float64) bool    { return r.Float64() < p }
func (r *rng) between(a, b int) int     { return a + r.IntN(b-a+1) }
func (r *rng) hex(n int) string         { return r.s(hexd, n) }
func (r *rng) uuid() string {
	return r.hex(8) + "-" + r.hex(4) + "-4" + r.hex(3) + "-" + r.pick("8", "9", "a", "b") + r.hex(3) + "-" + r.hex(12)
}
func (r *rng) digitsN(n int) string {
	return r.pick("1", "2", "3", "4", "5", "6", "7", "8", "9") + r.s(digits, n-1)
}

func b64(s string) string    { return base64.StdEncoding.EncodeToString([]byte(s)) }
func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

var words = strings.Fields(`river falcon copper meadow orbit lantern velvet harbor summit cobalt
maple thunder quartz willow ember glacier pepper saturn violet canyon marble jasper tundra
nickel prairie cedar indigo raven hollow breeze`)

// password returns a password of one of the shapes people and tools use.
func (r *rng) password() string {
	switch r.IntN(9) {
	case 0: // human: Word + year + symbol
		w := words[r.IntN(len(words))]
		return strings.ToUpper(w[:1]) + w[1:] + r.pick("2019", "2023", "2024", "2025", "123", "#1", "99") + r.pick("!", "$", "#", "")
	case 1: // generated with symbols
		return r.mixed(alnum, r.between(10, 14)) + r.pick("!", "#", "%", "^", "*", "@", "$") + r.mixed(alnum, r.between(3, 8))
	case 2: // long random alnum
		return r.mixed(alnum, r.between(16, 32))
	case 3: // hex
		return r.hex(r.pickInt(16, 24, 32, 40))
	case 4: // passphrase
		return words[r.IntN(len(words))] + "-" + words[r.IntN(len(words))] + "-" + words[r.IntN(len(words))] + "-" + r.s(digits, 2)
	case 5: // leetspeak
		w := words[r.IntN(len(words))]
		w = strings.NewReplacer("a", "@", "e", "3", "o", "0", "i", "1", "s", "$").Replace(w)
		return strings.ToUpper(w[:1]) + w[1:] + r.s(digits, 3) + r.pick("!", "?", ".")
	case 6: // base64-ish from openssl rand -base64 24
		return r.s(b64c, 32)
	case 7: // short alnum+digit
		return r.mixed(lower+digits, r.between(9, 12))
	default:
		return r.mixed(alnum+"_-.", r.between(20, 28))
	}
}

// urlSafePassword is a password that needs no escaping in a URL.
func (r *rng) urlSafePassword() string {
	for {
		p := r.password()
		if !strings.ContainsAny(p, "@:/?#%+ &$!^*") {
			return p
		}
	}
}

func (r *rng) user() string {
	return r.pick("admin", "app", "deploy", "postgres", "root", "svc_api", "jenkins", "backend", "etl_user", "grafana", "alice", "bob.smith", "ci-bot", "web")
}

func (r *rng) host() string {
	return r.pick("db.internal", "10.0.3.17", "prod-db-01.cluster-cxq2.us-east-1.rds.amazonaws.com", "localhost", "postgres", "mysql.prod.svc.cluster.local", "redis-master", "rabbitmq", "db.example.net", "172.17.0.2", "pg-main.acme.io")
}

func pctEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte(alnum+"-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(hexd[c>>4:c>>4+1]+hexd[c&15:c&15+1]))
		}
	}
	return b.String()
}

func (r *rng) pickInt(xs ...int) int { return xs[r.IntN(len(xs))] }
