package secrets_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
)

// Secrets in the syntaxes agents meet, each with the value that must be
// gone once redacted. Each line is one the detector missed before it
// read context (issue 59's list).
func TestSecretsInContext(t *testing.T) {
	d := secrets.Default()
	for _, c := range []struct{ text, secret string }{
		{"db:\n  password: Vq8mZk2pLx\n", "Vq8mZk2pLx"},
		{"services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: Tr7wq2Lk9x\n", "Tr7wq2Lk9x"},
		{"environment:\n  - POSTGRES_PASSWORD=Tr7wq&2Lk9x\n", "Tr7wq&2Lk9x"},
		{"spring.datasource.password=Zx9!kL2m&q\nspring.datasource.username=app\n", "Zx9!kL2m&q"},
		{"db.internal:5432:orders:app:Nq3vW8mLz2\n", "Nq3vW8mLz2"},
		{"REDIS_URL=redis://:Hk29sLqZ8v@cache:6379/0", "Hk29sLqZ8v"},
		{"DATABASE_URL=mysql://app:pa&ss<9>x2QmL7@db:3306/shop\n", "pa&ss<9>x2QmL7"},
		{`proxy_set_header Authorization "Basic YWRtaW46cDRzc3cwcmQ=";`, "YWRtaW46cDRzc3cwcmQ="},
		{"GET /v1/items?api_key=Zq8mN3kL9xT2vB7wR4yU&limit=5", "Zq8mN3kL9xT2vB7wR4yU"},
		{"https://graph.acme-corp.io/me?fields=id&access_token=EAQk29sLmZ8vXq4rT7yN2pW", "EAQk29sLmZ8vXq4rT7yN2pW"},
		{"//registry.npmjs.org/:_authToken=8c3e1a7f-2b9d-4e6a-b1c5-d2e8f4a6b0c9\n", "8c3e1a7f-2b9d-4e6a-b1c5-d2e8f4a6b0c9"},
		{`{"auths":{"https://index.docker.io/v1/":{"auth":"dXNlcjpzM2NyZXRQdw=="}}}`, "dXNlcjpzM2NyZXRQdw=="},
		{"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ndata:\n  db-pass: UzNjcmV0UGE1NQ==\n", "UzNjcmV0UGE1NQ=="},
		{`{"apiVersion":"v1","kind":"Secret","data":{"token":"dG9rZW4tOXg4ejc="}}`, "dG9rZW4tOXg4ejc="},
		{"machine api.heroku.com\n  login me@example.org\n  password 7c1e9a2f-4b3d-4d5e-8f6a-9b0c1d2e3f4a\n", "7c1e9a2f-4b3d-4d5e-8f6a-9b0c1d2e3f4a"},
		{"< Set-Cookie: session=Qm9vZlE4TGs5c1p2WDJ3; Path=/; HttpOnly", "Qm9vZlE4TGs5c1p2WDJ3"},
		{"DD_API_KEY=3f9a0c7e1b2d4f6a8c0e2b4d6f8a0c2e", "3f9a0c7e1b2d4f6a8c0e2b4d6f8a0c2e"},
		{"mysql -u root -pK9x!mQ2z orders", "K9x!mQ2z"},
		{"bot = Bot(token='MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs')", "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"},
		{"mailgun: 9f8e7d6c5b4a39281706f5e4d3c2b1a0-1a2b3c4d-5e6f7a8b", "9f8e7d6c5b4a39281706f5e4d3c2b1a0-1a2b3c4d-5e6f7a8b"},
		{"TELEGRAM=6047391825:AAHk29sLmZ8vXq4rT7yN2pWbC5dE6fG7hJ8", "6047391825:AAHk29sLmZ8vXq4rT7yN2pWbC5dE6fG7hJ8"},
		{"curl -H 'Authorization: Bearer dop_v1_9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0'", "dop_v1_9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0"},
		{"docker login -u me -p dckr_pat_Zq8mN3kL9xT2vB7wR4yUabcQ", "dckr_pat_Zq8mN3kL9xT2vB7wR4yUabcQ"},
		{"HEROKU_API_KEY=HRKU-AAZq8mN3kL9xT2vB7wR4yU_k29sLmZ8vXq4rT7yN2pW5dE6fG7hJ8k29sLmZ8vX", "HRKU-AAZq8mN3kL9xT2vB7wR4yU_k29sLmZ8vXq4rT7yN2pW5dE6fG7hJ8k29sLmZ8vX"},
		{"shop: 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", "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"},
		{`<add key="ClearTextPassword" value="Nq3vW8mLz2x" />`, ""},
		{"<password>Nq3vW8mLz2x</password>", "Nq3vW8mLz2x"},
		{`- name: DB_PASSWORD
  value: "Nq3vW8mLz2x"`, "Nq3vW8mLz2x"},
		{`{"name": "STRIPE_SECRET", "value": "Zq8mN3kL9xT2vB7wR4yU"}`, "Zq8mN3kL9xT2vB7wR4yU"},
	} {
		if c.secret == "" {
			continue
		}
		red, n := d.Redact(c.text)
		if n == 0 || strings.Contains(red, c.secret) {
			t.Errorf("%q: secret left: %q", c.text, red)
		}
		// The same in a tool's output, as stored: a JSON string, whose
		// & < > are escaped (\u0026 …).
		out, _ := json.Marshal(c.text)
		p := loom.Part{ID: "p", Type: loom.PartTool, Name: "bash", CallID: "c", Status: loom.ToolCompleted, Output: out}
		rp, k := d.RedactPart(p)
		if k == 0 || strings.Contains(loom.JSONText(rp.Output), c.secret) || !json.Valid(rp.Output) {
			t.Errorf("%q as a tool's output: %s", c.text, rp.Output)
		}
	}
}

// What real projects hold and is no secret: hashes written as such,
// ids, placeholders, references and code.
func TestNotSecretsInContext(t *testing.T) {
	d := secrets.Default()
	for _, s := range []string{
		`"integrity": "sha512-Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5dE6fG7hJ8Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pW=="`,
		`"narHash": "sha256-Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5="`,
		`hash = "sha256-Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5="`,
		`"fileId": "1Di6xK9mQ2vT8wN5bJ3hL6yC1dF0gS7pZ"`,
		`"videoId": "dQw4w9WgXcQ"`,
		`API_KEY="REPLACE_ME"`,
		`STRIPE_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx`,
		`api_key: <your-api-key>`,
		`token: ${{ secrets.GITHUB_TOKEN }}`,
		`password: "{{ vault_db_password }}"`,
		`"password": {"type": "string", "minLength": 8}`,
		`password: str`,
		`token = tokens[0]`,
		`secret_key = settings.SECRET_KEY`,
		`const apiKey = process.env.OPENAI_API_KEY;`,
		`api_key = os.environ["API_KEY"]`,
		`"max_tokens": 4096, "input_tokens": 1234`,
		`token_type: "bearer"`,
		`secretName: db-credentials`,
		`key: app.kubernetes.io/name`,
		`"key": "value"`,
		`public_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk29sLmZ8vXq4rT7yN2pWbC5dE6fG7hJ8Zq8mN3kL9x"`,
		`h1:Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5=`,
		`image: nginx@sha256:9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0`,
		"kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  FEATURE_FLAGS: a,b,c\n",
		"Password: must be at least 8 characters long",
		`  + password = (sensitive value)`,
		`Authorization: Bearer $TOKEN`,
		`DATABASE_URL=postgres://app:<password>@localhost:5432/shop`,
		`see http://localhost:8080<br>mail joe@acme.io`,
		`[REDACTED:secret-assignment]`,
		`curl "https://api.example.com/v1/items?api_key=Zq8mN3kL9xT2vB7wR4yU"`,
		`[![Build](https://travis-ci.com/acme/app.svg?token=Zq8mN3kL9xT2vB7wR4yU&branch=main)]`,
		`machine api.acme.io login aladdin password your_password`,
		`db.internal:5432:orders:app:changeme`,
		`b.Run("Key=*int32/Elem=int32", bench)`,
		`password: [REDACTED:secret-assignment]`,
		`postgres://app:[REDACTED:url-credentials]@db/shop`,
	} {
		if f := d.Find(s); len(f) > 0 {
			t.Errorf("found %s in %q: %q", f[0].RuleID, s, s[f[0].Start:f[0].End])
		}
	}
}

// A title or last prompt cut short ("…") that ends in the start of a key
// still has it found: what is left of the key goes.
func TestCutTextIsReadAsCut(t *testing.T) {
	d := secrets.Default()
	title := loom.TitleFrom("deploy with sk-proj-Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5dE6fG7hJ8 now please")
	if !strings.HasSuffix(title, secrets.Cut) {
		t.Fatalf("title %q not cut", title)
	}
	red, n := d.Redact(title)
	if n != 1 || strings.Contains(red, "Zq8mN3") {
		t.Errorf("cut title %q redacted to %q", title, red)
	}
	// Not cut: a word at the end is left alone.
	if red, n := d.Redact("fix the login flow for sk-proj users…"); n != 0 {
		t.Errorf("redacted %q", red)
	}
	prompt := loom.Truncate("here is the key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5dE6fG7hJ8Zq8mN3kL9x\n", 80)
	if red, _ := d.Redact(prompt); strings.Contains(red, "MIIEowIBAAKC") {
		t.Errorf("cut key left: %q", red)
	}
}

// After a redaction nothing is found again: the markers are no secrets
// (a scan after redact reports none, and a JSON export keeps none).
func TestMarkersAreNotSecrets(t *testing.T) {
	d := secrets.Default()
	for _, s := range []string{
		"DB_PASSWORD=Nq3vW8mLz2x\napi_key: \"Zq8mN3kL9xT2vB7wR4yU\"\nhttps://u:Vq8mZk2pLx@h/x?token=Zq8mN3kL9xT2vB7wR4yU",
		"Authorization: Bearer Zq8mN3kL9xT2vB7wR4yUk29sLmZ8v\nCookie: sid=Qm9vZlE4TGs5c1p2WDJ3",
		"kind: Secret\ndata:\n  a: UzNjcmV0UGE1NQ==\n",
	} {
		once, n := d.Redact(s)
		if n == 0 {
			t.Fatalf("nothing in %q", s)
		}
		if f := d.Find(once); len(f) > 0 {
			t.Errorf("%q: found %s again in %q", s, f[0].RuleID, once[f[0].Start:f[0].End])
		}
	}
}

// A value a user allows (loom secrets allow ID) is never found again.
func TestAllowIDs(t *testing.T) {
	v := "Zq8mN3kL9xT2vB7wR4yU"
	d, err := secrets.New(secrets.Config{AllowIDs: []string{secrets.ValueID(v)}})
	if err != nil {
		t.Fatal(err)
	}
	if f := d.Find(`api_key: "` + v + `"`); len(f) != 0 {
		t.Errorf("allowed value found: %+v", f)
	}
	if f := d.Find(`api_key: "Zq8mN3kL9xT2vB7wR4yV"`); len(f) != 1 {
		t.Errorf("another value not found: %+v", f)
	}
	if secrets.Default().Fingerprint() == d.Fingerprint() {
		t.Error("the allow-list does not change the fingerprint")
	}
}
