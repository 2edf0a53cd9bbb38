// Package secretstest makes fake secrets of every kind the secrets
// package finds, written the ways agent sessions carry them, for tests
// and benchmarks. None is a real credential.
package secretstest

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Secret is one fake secret: the rule expected to find it, the secret
// itself, and a text that carries it.
type Secret struct {
	Kind  string
	Value string
	Text  string
}

const (
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower  = "abcdefghijklmnopqrstuvwxyz"
	digits = "0123456789"
	alnum  = upper + lower + digits
	hex    = "0123456789abcdef"
	b32    = upper + "234567"
	b64    = alnum + "+/"
	url64  = alnum + "-_"
)

// Gen makes fake secrets from a seeded source, so a test sees the same
// ones each run.
type Gen struct{ r *rand.Rand }

// New returns a Gen seeded with seed.
func New(seed uint64) *Gen { return &Gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

// S returns n characters drawn from set, with at least one digit, one
// upper and one lower case letter when set has them (as real keys do).
func (g *Gen) S(set string, n int) string {
	for {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[g.r.IntN(len(set))]
		}
		s := string(b)
		if n < 12 || (!strings.ContainsAny(set, digits) || strings.ContainsAny(s, digits)) &&
			(!strings.ContainsAny(set, upper) || strings.ContainsAny(s, upper)) &&
			(!strings.ContainsAny(set, lower) || strings.ContainsAny(s, lower)) {
			return s
		}
	}
}

// Kinds are the kinds Secret makes, by rule id.
var Kinds = []string{
	"aws-access-key", "aws-secret-key", "github-token", "github-fine-grained-token", "gitlab-token",
	"anthropic-api-key", "openai-api-key", "google-api-key", "google-oauth-secret", "azure-storage-key",
	"azure-sas-token", "azure-client-secret", "slack-token", "slack-webhook", "stripe-key",
	"stripe-webhook-secret", "twilio-api-key", "twilio-auth-token", "sendgrid-api-key", "npm-token",
	"pypi-token", "huggingface-token", "jwt", "private-key", "url-credentials",
	"connection-string-password", "authorization-header", "api-key-header", "dotenv-secret",
	"secret-assignment",
}

// Secret returns a fake secret of kind, in a line as a session would
// hold it.
func (g *Gen) Secret(kind string) Secret {
	v, t, ok := g.providerSecret(kind)
	if !ok {
		v, t, ok = g.contextSecret(kind)
	}
	if !ok {
		panic("secretstest: unknown kind " + kind)
	}
	return Secret{Kind: kind, Value: v, Text: t}
}

// providerSecret returns a fake key of a provider's, of kind, and the
// line that holds it; false for a kind that is no provider's.
func (g *Gen) providerSecret(kind string) (v, t string, ok bool) {
	switch kind {
	case "aws-access-key":
		v = "AKIA" + g.S(b32, 16)
		t = "aws configure set aws_access_key_id " + v
	case "aws-secret-key":
		v = g.S(b64, 40)
		t = "aws_secret_access_key = " + v
	case "github-token":
		v = "ghp_" + g.S(alnum, 36)
		t = "git remote set-url origin https://github.com/acme/api.git # token " + v
	case "github-fine-grained-token":
		v = "github_pat_" + g.S(alnum, 22) + "_" + g.S(alnum, 59)
		t = "GH_TOKEN=" + v + " gh pr list"
	case "gitlab-token":
		v = "glpat-" + g.S(url64, 20)
		t = "curl --header \"PRIVATE-TOKEN: " + v + "\" https://gitlab.example.org/api/v4/projects"
	case "anthropic-api-key":
		v = "sk-ant-api03-" + g.S(url64, 93) + "AA"
		t = "client = anthropic.Anthropic(api_key=\"" + v + "\")"
	case "openai-api-key":
		v = "sk-proj-" + g.S(url64, 48) + "T3BlbkFJ" + g.S(url64, 48)
		t = "OpenAI(api_key='" + v + "')"
	case "google-api-key":
		v = "AIza" + g.S(url64, 35)
		t = "https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=" + v
	case "google-oauth-secret":
		v = "GOCSPX-" + g.S(url64, 28)
		t = `{"installed":{"client_id":"1234.apps.googleusercontent.com","client_secret":"` + v + `"}}`
	case "azure-storage-key":
		v = g.S(b64, 86) + "=="
		t = "DefaultEndpointsProtocol=https;AccountName=acmedata;AccountKey=" + v + ";EndpointSuffix=core.windows.net"
	case "azure-sas-token":
		v = g.S(alnum, 43) + "%3D"
		t = "https://acmedata.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig=" + v
	case "azure-client-secret":
		v = g.S(alnum, 3) + "8Q~" + g.S(alnum+"_~.-", 34)
		t = "az login --service-principal -u 0f8fad5b-d9cb-469f-a165-70867728950e -p " + v + " --tenant acme"
	case "slack-token":
		v = "xoxb-" + g.S(digits, 12) + "-" + g.S(digits, 13) + "-" + g.S(alnum, 24)
		t = "SLACK_BOT=" + v
	case "slack-webhook":
		v = "hooks.slack.com/services/T" + g.S(upper+digits, 8) + "/B" + g.S(upper+digits, 10) + "/" + g.S(alnum, 24)
		t = "curl -X POST -d '{\"text\":\"deployed\"}' https://" + v
	case "stripe-key":
		v = "sk_live_" + g.S(alnum, 24)
		t = "stripe.api_key = \"" + v + "\""
	case "stripe-webhook-secret":
		v = "whsec_" + g.S(alnum, 32)
		t = "stripe listen --forward-to localhost:4242/webhook  # Ready! Your webhook signing secret is " + v
	case "twilio-api-key":
		v = "SK" + g.S(hex, 32)
		t = "client = Client('" + v + "', api_secret, account_sid)"
	case "twilio-auth-token":
		v = g.S(hex, 32)
		t = "TWILIO_AUTH_TOKEN: " + v
	case "sendgrid-api-key":
		v = "SG." + g.S(url64, 22) + "." + g.S(url64, 43)
		t = "sg = SendGridAPIClient('" + v + "')"
	case "npm-token":
		v = "npm_" + g.S(alnum, 36)
		t = "//registry.npmjs.org/:_authToken=" + v
	case "pypi-token":
		v = "pypi-AgEIcHlwaS5vcmc" + g.S(url64, 70)
		t = "[pypi]\nusername = __token__\npassword = " + v
	case "huggingface-token":
		v = "hf_" + g.S(upper+lower, 34)
		t = "huggingface-cli login --token " + v
	default:
		return "", "", false
	}
	return v, t, true
}

// contextSecret returns a fake secret of a kind found by its shape or
// by its context (a JWT, a private key, a password in a URL, a header,
// an assignment), and the line that holds it; false for another kind.
func (g *Gen) contextSecret(kind string) (v, t string, ok bool) {
	switch kind {
	case "jwt":
		head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
		body := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"sub":"%d","name":"Dana","iat":1700000000}`, g.r.IntN(1e9))))
		v = head + "." + body + "." + g.S(url64, 43)
		t = "Cookie: session=" + v
	case "private-key":
		var b strings.Builder
		b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
		for range 6 {
			b.WriteString(g.S(b64, 64) + "\n")
		}
		b.WriteString("-----END RSA PRIVATE KEY-----")
		v = b.String()
		t = "$ cat ~/.ssh/deploy_key\n" + v + "\n"
	case "url-credentials":
		v = g.S(alnum, 16)
		t = "DATABASE_URL=postgres://app_user:" + v + "@db.internal:5432/orders?sslmode=require"
	case "connection-string-password":
		v = g.S(alnum, 14) + "!"
		t = "Server=tcp:acme.database.windows.net,1433;Database=orders;User ID=sa;Password=" + v + ";Encrypt=True;"
	case "authorization-header":
		v = g.S(alnum, 40)
		t = "curl -H \"Authorization: Bearer " + v + "\" https://api.acme.dev/v1/orders"
	case "api-key-header":
		v = g.S(alnum, 32)
		t = "x-api-key: " + v
	case "dotenv-secret":
		v = g.S(alnum, 20)
		t = "NODE_ENV=production\nPORT=8080\nSESSION_SECRET=" + v + "\n"
	case "secret-assignment":
		v = g.S(alnum, 24)
		t = "const clientSecret = \"" + v + "\";"
	case "high-entropy-assignment":
		v = g.S(b64, 40)
		t = "signing: \"" + v + "\""
	default:
		return "", "", false
	}
	return v, t, true
}

// HoldsAny returns the first of values that text holds, "" for none: the
// check that a planted secret stayed out of what a test reads.
func HoldsAny(text string, values []string) string {
	for _, v := range values {
		if strings.Contains(text, v) {
			return v
		}
	}
	return ""
}
