package secrets_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
)

// The misses among Kingfisher's counted examples (the scoring rule of
// docs/security.md), by class of credential: each text holds the
// secret given, which must be gone once redacted; the texts after
// them, of the same shapes, must stay unflagged.
func TestCountedByCause(t *testing.T) {
	d := secrets.Default()
	g := secretstest.New(106)
	longJWT := "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9." + g.S("abcdefghijklmnopqrstuvwxyz0123456789", 800) + "." + g.S("abcdefghijklmnopqrstuvwxyz0123456789", 40)
	for _, c := range []struct{ cause, text, secret string }{
		// A NAME=value line carried in a JSON string: the string's
		// closing quote ends the value.
		{"json-carried line", `{"content":"export CIRCLECI_TOKEN=CCIPAT_lZyPAuThWn2G908ssDT0g33e_t7qh0r5hrvsqzmuraqzduq6qco5onxgrtcn7y2z4"}`, "CCIPAT_lZyPAuThWn2G908ssDT0g33e_t7qh0r5hrvsqzmuraqzduq6qco5onxgrtcn7y2z4"},
		{"json-carried line", `{"content":" - RAILS_ENV=test CODECLIMATE_REPO_TOKEN=d37a8b9e09642cb73cfcf4e1284815fc3d6a55a7714110187ac59856ae4ab5ad","path":"ci.yml"}`, "d37a8b9e09642cb73cfcf4e1284815fc3d6a55a7714110187ac59856ae4ab5ad"},
		{"json-carried line", `["# REACT_APP_GUEST_PASSWORD=mycoin!1"]`, "mycoin!1"},
		{"json-carried line", `{"text":"db:\n  password: letmein"}`, "letmein"},
		// Passwords people choose, in a credential's place: a word of
		// one's own and a count, chosen words joined by a sign, a
		// connection string's words joined by _ (a literal there), a
		// documentation's sample word given to a named host.
		{"chosen password", "ftp://anon:anon123@ftp.trusted.com", "anon123"},
		{"chosen password", "DB_PASSWORD=mike1234", "mike1234"},
		{"chosen password", "user = Aladdin\npassword = open_sesame", "open_sesame"},
		{"chosen password", "password: open-sesame", "open-sesame"},
		{"chosen password", `adoConn.Open("Provider=SQLOLEDB.1;User ID=specialbill_user; " & "Password =specialbill_user;Initial Catalog=SpecialBill_PROD;Data Source=uszdba01;")`, "=specialbill_user;Initial"},
		{"chosen password", "mongodb://mongoadmin:contoso@something.foo.mongodb.net/myFirstDatabase", "contoso"},
		// A command's -u user:password flag on a line continued with
		// a backslash.
		{"continued command", "curl -X POST https://fra1.blynk.cloud/oauth2/token?grant_type=client_credentials \\\n-u oa2-client-id_zmNtW-D0Toqpz4AZnBLCIlklBrz9ynU-:5uC5Y4Mcvdl5rB56rBmxnvB4DZgiIpcyTPbOoEWp", "5uC5Y4Mcvdl5rB56rBmxnvB4DZgiIpcyTPbOoEWp"},
		{"continued command", "curl https://api.acme.io/v1/sync \\\n  -u deploy:Xk29dd1pQ7rT \\\n  -d full=1", "Xk29dd1pQ7rT"},
		// A JSON Web Token under a key's name, longer than 512 bytes
		// (Lemon Squeezy's API keys).
		{"long token under a key's name", "lemonsqueezy_key = " + longJWT, longJWT},
		// The same lines as a diff carries them, a + before each.
		{"lines of a diff", "+machine raw.github.com\n+  login visionmedia\n+  password hq7Zt2pLx9\n", "hq7Zt2pLx9"},
		{"lines of a diff", "+curl -X POST https://fra1.blynk.cloud/oauth2/token \\\n+-u oa2-client-id_zmNtW:5uC5Y4Mcvdl5rB56rBmxnvB4DZgiIpcyTPbOoEWp\n", "5uC5Y4Mcvdl5rB56rBmxnvB4DZgiIpcyTPbOoEWp"},
		// A value where only a literal stands (a flag's, an element's
		// text, a URL query's, a Kubernetes value: to the line's end)
		// is no name of code, whatever its name's class: random tokens
		// that cut into word-like pieces (one in about 1,800 of the
		// carriers property's) were left there as names.
		{"literal place", "./deploy --app-secret=1Gn6AKEXJ8fnImqe1JixJZC1 --host db.prod.internal\n", "1Gn6AKEXJ8fnImqe1JixJZC1"},
		{"literal place", "./deploy --client-secret soqrq0XWIPQufQZhihee --host db\n", "soqrq0XWIPQufQZhihee"},
		{"literal place", "<config>\n  <appSecret>DeDYymCbpsEdhe21Abqh</appSecret>\n</config>\n", "DeDYymCbpsEdhe21Abqh"},
		{"literal place", "curl 'https://api.acme.io/v1/items?limit=10&api_token=TMicDgtivem5FLF04muxYDXOb'\n", "TMicDgtivem5FLF04muxYDXOb"},
		{"literal place", "    env:\n    - name: APP_SECRET\n      value: 1Gn6AKEXJ8fnImqe1JixJZC1\n    image: app:1.4\n", "1Gn6AKEXJ8fnImqe1JixJZC1"},
	} {
		red, n := d.Redact(c.text)
		if n == 0 || strings.Contains(red, c.secret) {
			t.Errorf("%s: %q redacted as %q", c.cause, c.text, red)
		}
	}
	notFound(t, d,
		// A key's name given a long value that is no token: data.
		"public_key = "+strings.Repeat("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", 14),
		`{"content":"export DB_PASSWORD=$DB_PASSWORD"}`,
		`{"content":"REACT_APP_MAILER_PASSWORD=changeme"}`,
		`{"text":"db:\n  password: ${DB_PASSWORD}"}`,
		// Stand-ins stay: a key's name and a count, the alphabet
		// counted, a field's name as its value, samples on the
		// documentation's or this machine's hosts.
		"DB_PASSWORD=key_123",
		"password: abcd1234",
		"password: test1234",
		"Server=db;User Id=app;Password=smtp_password;",
		"redis://:foobared@localhost:6379/0",
		"postgres://scott:tiger@db.example.com/app",
		"curl https://api.acme.io \\\n  -u \"$API_USER:$API_PASSWORD\"",
		"+machine api.acme.io\n+  login app\n+  password changeme\n",
	)
}
