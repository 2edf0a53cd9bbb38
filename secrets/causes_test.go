package secrets_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
)

// Issue 84's misses, by cause: each text holds the secret given, which
// must be gone once redacted (and with it, where one is named, under
// that rule).
func TestMissesByCause(t *testing.T) {
	d := secrets.Default()
	for _, c := range []struct{ cause, text, secret, rule string }{
		// Password hashes that crack: a session that holds one holds a
		// password.
		{"hash", `admin:$2a$12$Kq8vN3mL9xT2wB7rR4yUe.Hd5fG7jK9lP1oI3uY5tR7eW9qA2sD4f:0:0`, "$2a$12$Kq8vN3mL9xT2wB7rR4yUe.Hd5fG7jK9lP1oI3uY5tR7eW9qA2sD4f", "password-hash"},
		{"hash", `password_hash = "$2b$12$Zq8mN3kL9xT2vB7wR4yUk.29sLmZ8vXq4rT7yN2pWbC5dE6fG7hJ8"`, "$2b$12$Zq8mN3kL9xT2vB7wR4yUk.29sLmZ8vXq4rT7yN2pWbC5dE6fG7hJ8", "password-hash"},
		{"hash", `root:$1$saltsalt$qjXMvbEw8oaL.CzflDugX/:18000:0:99999:7:::`, "$1$saltsalt$qjXMvbEw8oaL.CzflDugX/", "password-hash"},
		{"hash", `deploy:$5$rounds=5000$usesomesillystri$KqJWpanXZHKq2BOB43TSaYhEWsQ1Lr5QNyPCDH/Tp.6:19000::`, "$5$rounds=5000$usesomesillystri$KqJWpanXZHKq2BOB43TSaYhEWsQ1Lr5QNyPCDH/Tp.6", "password-hash"},
		{"hash", `ubuntu:$6$Vb3kTq9Z$8QeFcT0kqZ3Lh7vR1x2YwN4mJp6sA9dG5uE0iO3rK7tB1nC8yX2zV4lH6jW9qM5fD3gS0aP7eR2uT1oI8kL6ab:19500:0:99999:7:::`, "$6$Vb3kTq9Z$8QeFcT0kqZ3Lh7vR1x2YwN4mJp6sA9dG5uE0iO3rK7tB1nC8yX2zV4lH6jW9qM5fD3gS0aP7eR2uT1oI8kL6ab", "password-hash"},
		{"hash", `[+] $krb5asrep$23$svc_backup@CORP.LOCAL:3f5a1c7e9b2d4f6a8c0e2b4d6f8a0c2e$9b8a7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b`, "3f5a1c7e9b2d4f6a8c0e2b4d6f8a0c2e$9b8a7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f", "password-hash"},
		// A password's name with any value that is not a reference, a
		// placeholder or a label.
		{"password name", `password = "correct horse battery staple"`, "correct horse battery staple", ""},
		{"password name", "REACT_APP_AUTH_PASSWORD=whiteduke\n", "whiteduke", ""},
		// Arguments of well-known commands and constructors.
		{"argument", `psexec \\fileserver01 -u Administrator -p dev_admin cmd.exe`, "dev_admin", ""},
		{"argument", `PsExec.exe \\10.0.0.5 -u CORP\svc -p Xk29sLqZ8vTn ipconfig`, "Xk29sLqZ8vTn", ""},
		{"argument", `var cred = new NetworkCredential("user@example.com", "vzihlaquknriqlht");`, "vzihlaquknriqlht", ""},
		// Real values that contain "secret" are no placeholders.
		{"secret inside", "MONGO_URL=mongodb://realuser:s3cr3tP4ss@db1.prod.net:27017/production", "s3cr3tP4ss", ""},
		{"secret inside", "curl https://deploy:S3cretDeploy@api.acme.io/v2/orders", "S3cretDeploy", ""},
		{"secret inside", `{"username": "admin", "password": "super$ecret"}`, "super$ecret", ""},
		{"secret inside", "The password is 'Secret123'", "Secret123", ""},
		{"secret inside", "curl -s https://user:secret123@api.acme.io/v1/orders", "secret123", "url-credentials"},
		// A secret checked against a literal holds it.
		{"comparison", "\tif creds.Secret != \"open-sesame\" {\n\t\thttp.Error(rw, \"unauthorized\", http.StatusUnauthorized)\n\t}", "open-sesame", ""},
		// An @ inside a URL's password.
		{"url @", "MONGODB_URI=mongodb+srv://appuser:myR3alP@ssw0rd@cluster0.x1y2z.mongodb.net/app", "myR3alP@ssw0rd", "url-credentials"},
		// Symbols under a secret's name.
		{"symbols", "SECRET_KEY = 'django-insecure-_du9e^cmago!%(^+=gr@cu@v9-4m7k$4c@e0l&2x!f8%3z#q'", "django-insecure-_du9e^cmago!%(^+=gr@cu@v9-4m7k$4c@e0l&2x!f8%3z#q", ""},
		// Symbols under a key's name, braces that are no template's.
		{"symbols", "apikey = m{{h}o)p${e]nob(ody[finds>-_$#thisone}}", "m{{h}o)p${e]nob(ody[finds>-_$#thisone}}", ""},
		{"symbols", `apikey := "m{{h}o)p${e]nob(ody[finds>-_$#thisone}}"`, "m{{h}o)p${e]nob(ody[finds>-_$#thisone}}", ""},
		// A service's key under the name its scanner gives it.
		{"service", "$sonarLogin = \"4924be8f51f3e738c97db2c4f1531db7e938f28b\"\n$sonarURL = \"http://192.168.36.52:9999\"", "4924be8f51f3e738c97db2c4f1531db7e938f28b", ""},
		// Formats with no name around them.
		{"format", "live_126031192_Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4", "live_126031192_Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4", "live-account-key"},
		{"format", "SHOPIFY_TOKEN=shppa_Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4", "shppa_Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4", "shopify-token"},
		{"format", "shpss_Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4 was rotated", "shpss_Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4", "shopify-token"},
		{"format", "SHOPIFY=shpat_9f8e7d6c5b4a39281706f5e4d3c2b1aZ", "shpat_9f8e7d6c5b4a39281706f5e4d3c2b1aZ", "shopify-token"},
		{"format", "curl -H 'X-Query-Key: NRIQ-Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4'", "NRIQ-Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4", "new-relic-key"},
		{"format", "posting to https://outlook.office.com/webhook/8c3e1a7f-2b9d-4e6a-b1c5-d2e8f4a6b0c9@72f988bf-86f1-41af-91ab-2d7cd011db47/IncomingWebhook/9f8e7d6c5b4a39281706f5e4d3c2b1a0/0d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f6a", "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "teams-webhook"},
		{"format", "$ vault operator unseal Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5dE6fG7h\nUnseal Progress 1/3", "Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5dE6fG7h", "password-argument"},
		// Base64-wrapped keys.
		{"base64 key", "PRIVATE_KEY_B64=" + pemB64, pemB64[:64], ""},
		{"base64 key", "diff --git a/.env b/.env\n+++ b/.env\n@@ -1 +1,2 @@\n PORT=8080\n+PRIVATE_KEY_B64=" + pemB64 + "\n", pemB64[:64], ""},
		{"base64 key", "$ cat .env\nSIGNING_KEY=" + pemB64 + "\nPORT=8080\n", pemB64[:64], ""},
	} {
		red, n := d.Redact(c.text)
		if n == 0 || strings.Contains(red, c.secret) {
			t.Errorf("%s: %q: secret left: %q", c.cause, c.text, red)
			continue
		}
		if c.rule != "" && !strings.Contains(red, secrets.Marker(c.rule)) {
			t.Errorf("%s: %q: redacted as %q, want %s", c.cause, c.text, red, secrets.Marker(c.rule))
		}
	}
}

// pemB64 is a whole PEM private key given as base64 (what `base64 -w0
// key.pem` prints): too long for a setting's value, it is found as
// base64 of a key.
var pemB64 = base64.StdEncoding.EncodeToString([]byte("-----BEGIN RSA PRIVATE KEY-----\n" +
	strings.Repeat("MIIEowIBAAKCAQEAt8qZ2k9LmN3vR7pQ1xY5wT8sA2bC4dE6fG9gH1jK3lM5nO7pQ9rS\n", 12) +
	"-----END RSA PRIVATE KEY-----\n"))

// Issue 84's noise, by cause: none is a secret.
func TestNoiseByCause(t *testing.T) {
	notFound(t, secrets.Default(),
		"Password=yourWeak(!)Password",
		"api-key: dGVzdC1hcGkta2V5Cg== # test-api-key",
		"{{- range $name, $v := .Values.secrets }}\napiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ $name }}\ndata:\n  value: {{ $v | b64enc }}\n{{- end }}\n",
		`this.addPassword = "#add-password";`,
		`{passwordLabel:"Password:",usernameLabel:"Username:"}`,
		`export DATABASE_PASSWORD="'$PRECOMPILE_PASSWORD'"`,
		`password: "!@#$%^&*()"`,
		"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7SECRETS",
		"GITLAB_TOKEN=glptt-hellOworld380_testin",
		// A tutorial's password under a name, or sent to a host kept
		// for documentation.
		"username=test\npassword=secret123\nhost=example.com",
		"curl https://user:secret123@api.example.com/v1/orders",
	)
}

// The anchors' negative cases that loom flagged (issue 84), by cause:
// none is a secret.
func TestAnchorsNoiseByCause(t *testing.T) {
	d := secrets.Default()
	for _, c := range []struct{ cause, text string }{
		// Documented samples.
		{"sample", `<add key="ClearTextPassword" value="33f!!lloppa" />`},
		{"sample", `<add key="ClearTextPassword" value="hal+9ooo_da!sY" />`},
		{"sample", `,apiKey:"6fe4476ee5a1832882e326b506d14126",`},
		{"sample", "AIzayDNSXIbFmlXbIE6mCzDLQAqITYefhixbX4A"},
		// A placeholder's shape: the alphabet and a count.
		{"placeholder", "SUMO_ACCESS_KEY: AbCeFG123"},
		// A label: a name in a namespace.
		{"label", `telegram_api_token = "token:"clm17486:AgencyIdentificationCodeContentType""`},
		// A Sentry token whose secret is not of Sentry's length.
		{"invalid payload", "sntrys_eyJpYXQiOjkuLiwidXJsIjoiaHR0cHM6Ly9Da1NkNU94S1c3IiwicmVnaW9uX3VybCI6Imh0dHBzOi8vOGNwV1ZkeDBjWWdUWk05YzRNY1AiLCJvcmciOiJnNUdpaSJ9_95dwQurfCUBvpXyGEcTTKdqOodXfvEZVtMF8UPrXJo"},
		// Placeholder words, the value ending where its element does.
		{"placeholder", "<command>curl -u username:token</command>"},
	} {
		if f := d.Find(c.text); len(f) > 0 {
			t.Errorf("%s: found %s in %q: %q", c.cause, f[0].RuleID, c.text, c.text[f[0].Start:f[0].End])
		}
	}
}

// Kingfisher's examples that loom missed, and its negative examples
// that loom flagged, by cause (docs/security.md, "A third corpus").
func TestKingfisherByCause(t *testing.T) {
	d := secrets.Default()
	g := secretstest.New(84)
	alnum := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	longToken := g.S(alnum, 40) + "." + g.S(alnum, 700)
	longLower := g.S("abcdefghijklmnopqrstuvwxyz0123456789", 900)
	truenas := "12-" + g.S(alnum, 64)
	adafruit := "aio_" + g.S(alnum, 28)
	defined := g.S(alnum, 24)
	tfDefault := "00" + g.S(alnum+"_-", 40)
	salesforce := "00D" + g.S(alnum, 12) + "!" + g.S(alnum+".", 96)
	// Formats with no name around them: services' prefixes.
	for _, c := range []struct{ text, secret, rule string }{
		{"ION_TOKEN=ion_VNR17uGgdxr9P2aOrCulvSLTFDqijIV2ImQsOUhDEI", "ion_VNR17uGgdxr9P2aOrCulvSLTFDqijIV2ImQsOUhDEI", "ionic-token"},
		{"sgp_pOqmnKCOAdIxlEbeRLlJKUOE4ravQJ3ZEijxzK4bpPrWaMNPP35kz4OU7ZVsDtgU", "sgp_pOqmnKCOAdIxlEbeRLlJKUOE4ravQJ3ZEijxzK4bpPrWaMNPP35kz4OU7ZVsDtgU", "segment-token"},
		{"X-Api-Key: odt_KTJlDq2AGGGlqG4riKdT7p980AW8RlU5", "odt_KTJlDq2AGGGlqG4riKdT7p980AW8RlU5", "dependency-track-key"},
		{"license: slk_27b0a1f1926e7376dd8bdfcb0ade3c397c462b6e68c854a5521a17dd2b704ce6", "slk_27b0a1f1926e7376dd8bdfcb0ade3c397c462b6e68c854a5521a17dd2b704ce6", "sourcegraph-token"},
		{`"clientSecret": "mdb_sa_sk_BdIX_jLzut2WTgglKzKvSgWMDDj5hEoTqdwOyLOL"`, "mdb_sa_sk_BdIX_jLzut2WTgglKzKvSgWMDDj5hEoTqdwOyLOL", "mongodb-atlas-secret"},
		{"teamwork tkn.v1_LOO5pFaDcBZuFgBzOMKO6qNq98gdbMsoCBHSLZk9ap6aVwgAebNZ8esaIhmdLxi1lQDXg14=", "tkn.v1_LOO5pFaDcBZuFgBzOMKO6qNq98gdbMsoCBHSLZk9ap6aVwgAebNZ8esaIhmdLxi1lQDXg14=", "teamwork-token"},
		{"curl -v -X POST http://thingsboard.cloud/api/v1/354u1g321kcqc1oad3w7/telemetry --header Content-Type:application/json --data '{\"temperature\":25}'", "354u1g321kcqc1oad3w7", "thingsboard-token"},
		{"coap://iot.acme.io/api/v1/Zq8mN3kL9xT2vB7wR4yU/rpc", "Zq8mN3kL9xT2vB7wR4yU", "thingsboard-token"},
		// An environment line commented out still sets a password
		// where it is uncommented.
		{"# REACT_APP_PASS=whiteduke\nREACT_APP_API=https://api.acme.io", "whiteduke", "dotenv-secret"},
		{"#export DB_PASSWORD=lemontree", "lemontree", "dotenv-secret"},
		// The same line as a diff or a read tool carries it.
		{"+REACT_APP_AUTH_PASS=whiteduke\n", "whiteduke", "dotenv-secret"},
		{"     3\u2192REACT_APP_AUTH_PASS=whiteduke\n", "whiteduke", "dotenv-secret"},
		// Password hashes: Kerberos AS-REP without its principal,
		// Cisco's type 8 (PBKDF2) and type 9 (scrypt).
		{"$krb5asrep$23$8cf8eb5287e28a4006c064892150c4fb$3e05ecc13548bec8e1eeb900dea5429cc6931bae9b8524490eb3a8801560871fe44355ed556202afbb39872e1bbb5c3c4f1b37dcd68fda89a", "8cf8eb5287e28a4006c064892150c4fb", "password-hash"},
		{"username admin privilege 15 secret 8 $8$TnGX/fE4KGHOVU$pEhnEvxrvaynpi8j4f.EMHr6M.FzU8xnZnBr/tJdFWk", "$8$TnGX/fE4KGHOVU$pEhnEvxrvaynpi8j4f.EMHr6M.FzU8xnZnBr/tJdFWk", "password-hash"},
		{"enable secret 9 $9$nhEmQVczB7dqsO$X.HsgL6x1il0RxkOSSvyQYwucySCt7qFm4v7pqCxkKM", "$9$nhEmQVczB7dqsO$X.HsgL6x1il0RxkOSSvyQYwucySCt7qFm4v7pqCxkKM", "password-hash"},
		// A service's key under a name written as one run of token
		// characters with it: SonarQube's login property, in a
		// properties file and as a Java system property.
		{"sonar.login=5524bf449ca45fcace54698371466398321f3a82\n", "5524bf449ca45fcace54698371466398321f3a82", "service-key"},
		{"sonar-scanner -Dsonar.host.url=https://sonarcloud.io -Dsonar.login=5524bf449ca45fcace54698371466398321f3a82", "5524bf449ca45fcace54698371466398321f3a82", "service-key"},
		// A value glued to its name by a dash.
		{"prospect-token-ba98cfe3ed3fc70d2a08b467a43d513b", "ba98cfe3ed3fc70d2a08b467a43d513b", "secret-assignment"},
		{"export DD=dd-apikey-dd52c29224affe29d163c6bf99e5c34f", "dd52c29224affe29d163c6bf99e5c34f", "secret-assignment"},
		{"      <command>prospect-secret-5f4dcc3b5aa765d61d8327deb882cf99</command>", "5f4dcc3b5aa765d61d8327deb882cf99", "secret-assignment"},
		{"hellosign-PRIVATE-key-LaKSDJF98ALSkfj9823JDfj3JKd8JhfaEv5s9JAdlfk92JHFAs8KLJfl8KJDFH3J== in the log", "LaKSDJF98ALSkfj9823JDfj3JKd8JhfaEv5s9JAdlfk92JHFAs8KLJfl8KJDFH3J", "secret-assignment"},
		// A service's name and its key with more than one credential's
		// word between them, or a word the matcher did not take for
		// one: private, secretkey, SECRET_ACCESS_KEY.
		{"clarifai access key Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4", "Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4", "service-key"},
		{"nimble PRIVATE Xk29sLqZ8vTnW4rB7yU2mP5cD8fG3h", "Xk29sLqZ8vTnW4rB7yU2mP5cD8fG3h", "service-key"},
		{"paydirtapp SECRET key 8c3e1a7f2b9d4e6ab1c5d2e8f4a6b0c9", "8c3e1a7f2b9d4e6ab1c5d2e8f4a6b0c9", "service-key"},
		{"eventbrite secretkey Q7W2HZTRLVYXNPVKZJ4S", "Q7W2HZTRLVYXNPVKZJ4S", "service-key"},
		{"scrapfly SECRET_ACCESS_KEY scp-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0", "scp-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0", "service-key"},
		// A token longer than 512 bytes under a token's name.
		{"tallyfy_token = " + longToken + "\n", longToken, "secret-assignment"},
		{`"accessToken": "` + longLower + `"`, longLower, "secret-assignment"},
		// Formats with no name around them: a TrueNAS API key (its id,
		// a dash, 64 letters and digits) given to its login method,
		// and a Salesforce access token (an org's id, !, a session).
		{`{"id": "6f1c", "msg": "method", "method": "auth.login_with_api_key", "params": ["` + truenas + `"]}`, truenas, "truenas-api-key"},
		{"feeds: io.adafruit.com " + adafruit + " (the key shown under My Key)", adafruit, "adafruit-io-key"},
		// A C preprocessor's definition of a secret's name, as
		// Arduino sketches hold their Wi-Fi password and API key.
		{"#define WIFI_SSID     \"home\"\n#define WIFI_PASSWORD \"Tr0ub4dor&3x\"\n", "Tr0ub4dor&3x", "secret-assignment"},
		{"   12\u2192#define API_SECRET    \"" + defined + "\"", defined, "secret-assignment"},
		// A Terraform variable's default under a secret's name.
		{"variable \"corp_okta_api_token\" {\n  type      = string\n  sensitive = true\n  default   = \"" + tfDefault + "\"\n}", tfDefault, "secret-assignment"},
		{"variable \"db_password\" { default = \"Tr0ub4dor&3x\" }", "Tr0ub4dor&3x", "secret-assignment"},
		{"sf org display\nAccess Token     " + salesforce + "\nInstance Url     https://acme.my.salesforce.com", salesforce, "salesforce-token"},
		// A service's key that an element's end tag ends, as a
		// Jenkins job keeps its shell steps.
		{"      <command>nimble SECRET N2kxq5vKN6S7M9Jp0vHK8z2Qwy6V8d</command>", "N2kxq5vKN6S7M9Jp0vHK8z2Qwy6V8d", "service-key"},
		{"<command>posthog = phx_WQV1jrBNdIiYiH_XoWIb5KqZv18v_4JQbNBVuGihaYw</command>", "phx_WQV1jrBNdIiYiH_XoWIb5KqZv18v_4JQbNBVuGihaYw", "service-key"},
		// Passwords people choose under a password's name: a word
		// of their own, quoted in code, in a setting, in a URL, in a
		// .pgpass line, or in a JSON string that holds a .env line.
		{"$user = \"mg1021\"; $password = \"goodspec\";", "goodspec", "secret-assignment"},
		{"\"AdminPassword\" : \"thisismypassword\"", "thisismypassword", "secret-assignment"},
		{"client = mongoc_client_new (\"mongodb+srv://someuser:hunter2@my-atlas-rd941.mongodb.net/test\");", "hunter2", "url-credentials"},
		{"db.internal:5432:orders:app:heymoe", "heymoe", "pgpass"},
		{`{"content":"REACT_APP_AUTH_PASS=whiteduke","file_path":"/app/.env"}`, "whiteduke", "secret-assignment"},
		// A name and its value given as two quoted arguments.
		{"sonarqube {\n  properties {\n    property 'sonar.login', '826de5590c75919a8317fdface58206eebe7ebbc'\n  }\n}", "826de5590c75919a8317fdface58206eebe7ebbc", "service-key"},
		{"buildConfigField 'String', 'API_KEY', '\"951bc382db9cfee29c68634761dd6e19\"'", "951bc382db9cfee29c68634761dd6e19", "secret-assignment"},
		// A service named by its client library's or its short name.
		{"pyowm = '3k144a5af729351d0fc58bdrj9a21mkr'", "3k144a5af729351d0fc58bdrj9a21mkr", "service-key"},
		{"owm = '3k144a5af729351d0fc58bdrj9a21mkr'", "3k144a5af729351d0fc58bdrj9a21mkr", "service-key"},
		// A key in its format's groups with letters off its format's
		// (CoinAPI's are upper-case hex), a credential's word before it.
		{"coinapi SECRET fa327aA1-23ZC-eA32-aZ32-2A67fb34EACD", "fa327aA1-23ZC-eA32-aZ32-2A67fb34EACD", "service-key"},
	} {
		red, n := d.Redact(c.text)
		if n == 0 || strings.Contains(red, c.secret) || !strings.Contains(red, secrets.Marker(c.rule)) {
			t.Errorf("%q: redacted as %q, want %s", c.text, red, secrets.Marker(c.rule))
		}
	}
	notFound(t, d,
		// Anonymous FTP's password is by convention an address of the
		// user's, or a word ending in @: no secret.
		"server->user = \"anonymous\";\nserver->password = \"busybox@\";",
		"ftp_user = 'anonymous'\nftp_password = 'guest@example.org'",
		// Semgrep's negative cases, by cause: the AWS documentation's
		// secret key with other letters at its end, a token's shape
		// filled with a pair said over, a password masked with bullets.
		"aws_secret_access_key:wJalrXUtnFEMI/K7MDENG/bPxRfiCYESAMPLEKEY",
		"aws_secret_access_key:wJalrXUtnFEMI/K7MDENG/bPxRfiCYESAFAKEKEY",
		"gitfake_token:ghp_abababababababababababababababababab",
		"https://username:••••••••@example.com",
		"git clone https://deploy:●●●●●●●●●●@git.acme.io/app.git",
		// Names with dashes that end in a word, a version, a path or
		// a host, and a token's own prefix before base64 of text
		// (gitleaks' negative case), are no value glued to a name.
		"secret-key-generator-v2",
		"kubectl get secret app-token-7f8d9c6b5a",
		"release-token-2024-01-15",
		"api-key-rotation-20241127abcdef/handler.go",
		"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29x",
		// An id, a dash and a hash where nothing logs in with an API
		// key or names TrueNAS; an org's id alone.
		"go: downloading example.com/mod v0.0.0-20241127-9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0",
		"sf org list: 00D5g000004XyZaEAK (acme-prod)",
		// A definition whose value is a prompt, a length or a name.
		// A Terraform variable with no default, an empty one, or a
		// reference; a default under a name that says no secret.
		"variable \"db_password\" {\n  type      = string\n  sensitive = true\n}\nvariable \"region\" {\n  default = \"eu-west-1\"\n}",
		"variable \"api_token\" {\n  default = \"\"\n}",
		"variable \"api_token\" { default = var.token }",
		"#define PASSWORD_PROMPT \"Enter password: \"",
		"#define SECRET_KEY_LEN 32",
		"#define API_KEY_HEADER \"X-Api-Key\"",
		// Credential's words between a service's name and a word, a
		// placeholder or a value of no format of the service's.
		"clarifai access key documentation",
		"nimble private key YOUR_NIMBLE_PRIVATE_KEY_HERE",
		"eventbrite private token abcdefghijklmnopqrst",
		"salesblink = 'key-8DbqWq7r9XKxhUqp3THfA1VMxggreC?zfejJsT3UFGISAcEGrrhiA6Ju453dMUXB'",
		// A credential's word alone before = in a run is read as a
		// name with a space before it is: an app's id is no secret.
		"Using adobe ID=qCRbiIy1NJaW",
		// What stays a placeholder, a reference or a label under a
		// password's name: a word that names the field, a run of one
		// character, a reference, a name in angle brackets, your_…,
		// and documented samples (Microsoft's contoso, scott/tiger,
		// Redis's foobared) on this machine's or the documentation's
		// hosts (given to a named host, one is the password someone
		// set: counted_test.go).
		"Server=host;Port=5432;User Id=username;Password=secret;Database=databasename;",
		"Data Source=190.190.200.100,1433;User ID=myUsername;Password=myPassword;",
		"credentials {\n    username 'user'\n    password 'password'\n}",
		"'host=db_host port=3306 user=apache password=###### dbname=apache_auth'",
		"psExec \\\\host -u User -p $Password -i -d calc.exe",
		`"driver={SQL Server};server=(#{datastore['DBHOST']});uid=#{datastore['DBUID']};pwd=#{datastore['DBPASSWORD']}"`,
		`password = "<password>"`,
		`password = "your_password"`,
		`password = "${DB_PASSWORD}"`,
		"mongodb://mongoadmin:contoso@cluster0.example.com/myFirstDatabase",
		"engine = create_engine('postgresql://scott:tiger@localhost/test')",
		"redis://:foobared@127.0.0.1:6379/0",
		`input.type = "password"; label = "Password"`,
		`password_encryption = 'md5'`,
		// Arguments after a name that are a default, a placeholder,
		// or no name's value.
		"os.getenv('API_KEY', 'default')",
		"config.get('api_key', 'my-dev-key')",
		"buildConfigField 'String', 'API_KEY', 'BuildConfig.KEY'",
		"owm = 'weather'",
		// Letters off a format without groups, or without a
		// credential's word, stay unread.
		"plaid client id - 'ic1Ah5b49ycvmz2vgvlgxtb0'",
		"coinapi fa327aA1-23ZC-eA32-aZ32-2A67fb34EACD",
	)
	// A password beside another user stays one.
	if red, _ := d.Redact("server->user = \"deploy\";\nserver->password = \"busybox@\";"); strings.Contains(red, "busybox@") {
		t.Errorf("a password beside a named user left: %q", red)
	}
}

// notFound fails t for each text in which d finds anything.
func notFound(t *testing.T, d *secrets.Detector, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if f := d.Find(s); len(f) > 0 {
			t.Errorf("found %s in %q: %q", f[0].RuleID, s, s[f[0].Start:f[0].End])
		}
	}
}
