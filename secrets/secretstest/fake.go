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
	mk, ok := makers[kind]
	if !ok {
		panic("secretstest: unknown kind " + kind)
	}
	v, t := mk(g)
	return Secret{Kind: kind, Value: v, Text: t}
}

// makers make a fake secret of each kind: the secret and a line that
// holds it.
var makers = map[string]func(g *Gen) (v, t string){
	"aws-access-key": func(g *Gen) (v, t string) {
		v = "AKIA" + g.S(b32, 16)
		t = "aws configure set aws_access_key_id " + v
		return
	},
	"aws-secret-key": func(g *Gen) (v, t string) {
		v = g.S(b64, 40)
		t = "aws_secret_access_key = " + v
		return
	},
	"github-token": func(g *Gen) (v, t string) {
		v = "ghp_" + g.S(alnum, 36)
		t = "git remote set-url origin https://github.com/acme/api.git # token " + v
		return
	},
	"github-fine-grained-token": func(g *Gen) (v, t string) {
		v = "github_pat_" + g.S(alnum, 22) + "_" + g.S(alnum, 59)
		t = "GH_TOKEN=" + v + " gh pr list"
		return
	},
	"gitlab-token": func(g *Gen) (v, t string) {
		v = "glpat-" + g.S(url64, 20)
		t = "curl --header \"PRIVATE-TOKEN: " + v + "\" https://gitlab.example.org/api/v4/projects"
		return
	},
	"anthropic-api-key": func(g *Gen) (v, t string) {
		v = "sk-ant-api03-" + g.S(url64, 93) + "AA"
		t = "client = anthropic.Anthropic(api_key=\"" + v + "\")"
		return
	},
	"openai-api-key": func(g *Gen) (v, t string) {
		v = "sk-proj-" + g.S(url64, 48) + "T3BlbkFJ" + g.S(url64, 48)
		t = "OpenAI(api_key='" + v + "')"
		return
	},
	"google-api-key": func(g *Gen) (v, t string) {
		v = "AIza" + g.S(url64, 35)
		t = "https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=" + v
		return
	},
	"google-oauth-secret": func(g *Gen) (v, t string) {
		v = "GOCSPX-" + g.S(url64, 28)
		t = `{"installed":{"client_id":"1234.apps.googleusercontent.com","client_secret":"` + v + `"}}`
		return
	},
	"azure-storage-key": func(g *Gen) (v, t string) {
		v = g.S(b64, 86) + "=="
		t = "DefaultEndpointsProtocol=https;AccountName=acmedata;AccountKey=" + v + ";EndpointSuffix=core.windows.net"
		return
	},
	"azure-sas-token": func(g *Gen) (v, t string) {
		v = g.S(alnum, 43) + "%3D"
		t = "https://acmedata.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig=" + v
		return
	},
	"azure-client-secret": func(g *Gen) (v, t string) {
		v = g.S(alnum, 3) + "8Q~" + g.S(alnum+"_~.-", 34)
		t = "az login --service-principal -u 0f8fad5b-d9cb-469f-a165-70867728950e -p " + v + " --tenant acme"
		return
	},
	"slack-token": func(g *Gen) (v, t string) {
		v = "xoxb-" + g.S(digits, 12) + "-" + g.S(digits, 13) + "-" + g.S(alnum, 24)
		t = "SLACK_BOT=" + v
		return
	},
	"slack-webhook": func(g *Gen) (v, t string) {
		v = "hooks.slack.com/services/T" + g.S(upper+digits, 8) + "/B" + g.S(upper+digits, 10) + "/" + g.S(alnum, 24)
		t = "curl -X POST -d '{\"text\":\"deployed\"}' https://" + v
		return
	},
	"stripe-key": func(g *Gen) (v, t string) {
		v = "sk_live_" + g.S(alnum, 24)
		t = "stripe.api_key = \"" + v + "\""
		return
	},
	"stripe-webhook-secret": func(g *Gen) (v, t string) {
		v = "whsec_" + g.S(alnum, 32)
		t = "stripe listen --forward-to localhost:4242/webhook  # Ready! Your webhook signing secret is " + v
		return
	},
	"twilio-api-key": func(g *Gen) (v, t string) {
		v = "SK" + g.S(hex, 32)
		t = "client = Client('" + v + "', api_secret, account_sid)"
		return
	},
	"twilio-auth-token": func(g *Gen) (v, t string) {
		v = g.S(hex, 32)
		t = "TWILIO_AUTH_TOKEN: " + v
		return
	},
	"sendgrid-api-key": func(g *Gen) (v, t string) {
		v = "SG." + g.S(url64, 22) + "." + g.S(url64, 43)
		t = "sg = SendGridAPIClient('" + v + "')"
		return
	},
	"npm-token": func(g *Gen) (v, t string) {
		v = "npm_" + g.S(alnum, 36)
		t = "//registry.npmjs.org/:_authToken=" + v
		return
	},
	"pypi-token": func(g *Gen) (v, t string) {
		v = "pypi-AgEIcHlwaS5vcmc" + g.S(url64, 70)
		t = "[pypi]\nusername = __token__\npassword = " + v
		return
	},
	"huggingface-token": func(g *Gen) (v, t string) {
		v = "hf_" + g.S(upper+lower, 34)
		t = "huggingface-cli login --token " + v
		return
	},
	"jwt": func(g *Gen) (v, t string) {
		head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
		body := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"sub":"%d","name":"Dana","iat":1700000000}`, g.r.IntN(1e9))))
		v = head + "." + body + "." + g.S(url64, 43)
		t = "Cookie: session=" + v
		return
	},
	"private-key": func(g *Gen) (v, t string) {
		var b strings.Builder
		b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
		for range 6 {
			b.WriteString(g.S(b64, 64) + "\n")
		}
		b.WriteString("-----END RSA PRIVATE KEY-----")
		v = b.String()
		t = "$ cat ~/.ssh/deploy_key\n" + v + "\n"
		return
	},
	"url-credentials": func(g *Gen) (v, t string) {
		v = g.S(alnum, 16)
		t = "DATABASE_URL=postgres://app_user:" + v + "@db.internal:5432/orders?sslmode=require"
		return
	},
	"connection-string-password": func(g *Gen) (v, t string) {
		v = g.S(alnum, 14) + "!"
		t = "Server=tcp:acme.database.windows.net,1433;Database=orders;User ID=sa;Password=" + v + ";Encrypt=True;"
		return
	},
	"authorization-header": func(g *Gen) (v, t string) {
		v = g.S(alnum, 40)
		t = "curl -H \"Authorization: Bearer " + v + "\" https://api.acme.dev/v1/orders"
		return
	},
	"api-key-header": func(g *Gen) (v, t string) {
		v = g.S(alnum, 32)
		t = "x-api-key: " + v
		return
	},
	"dotenv-secret": func(g *Gen) (v, t string) {
		v = g.S(alnum, 20)
		t = "NODE_ENV=production\nPORT=8080\nSESSION_SECRET=" + v + "\n"
		return
	},
	"secret-assignment": func(g *Gen) (v, t string) {
		v = g.S(alnum, 24)
		t = "const clientSecret = \"" + v + "\";"
		return
	},
	"high-entropy-assignment": func(g *Gen) (v, t string) {
		v = g.S(b64, 40)
		t = "signing: \"" + v + "\""
		return
	},
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
