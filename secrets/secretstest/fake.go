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
	v := mk.value(g)
	return Secret{Kind: kind, Value: v, Text: mk.before + v + mk.after}
}

// maker makes a fake secret of one kind (value) and the line that holds
// it: the secret between before and after.
type maker struct {
	value         func(g *Gen) string
	before, after string
}

// makers make a fake secret of each kind.
var makers = map[string]maker{
	"aws-access-key":            {func(g *Gen) string { return "AKIA" + g.S(b32, 16) }, "aws configure set aws_access_key_id ", ""},
	"aws-secret-key":            {func(g *Gen) string { return g.S(b64, 40) }, "aws_secret_access_key = ", ""},
	"github-token":              {func(g *Gen) string { return "ghp_" + g.S(alnum, 36) }, "git remote set-url origin https://github.com/acme/api.git # token ", ""},
	"github-fine-grained-token": {func(g *Gen) string { return "github_pat_" + g.S(alnum, 22) + "_" + g.S(alnum, 59) }, "GH_TOKEN=", " gh pr list"},
	"gitlab-token":              {func(g *Gen) string { return "glpat-" + g.S(url64, 20) }, "curl --header \"PRIVATE-TOKEN: ", "\" https://gitlab.example.org/api/v4/projects"},
	"anthropic-api-key":         {func(g *Gen) string { return "sk-ant-api03-" + g.S(url64, 93) + "AA" }, "client = anthropic.Anthropic(api_key=\"", "\")"},
	"openai-api-key":            {func(g *Gen) string { return "sk-proj-" + g.S(url64, 48) + "T3BlbkFJ" + g.S(url64, 48) }, "OpenAI(api_key='", "')"},
	"google-api-key":            {func(g *Gen) string { return "AIza" + g.S(url64, 35) }, "https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=", ""},
	"google-oauth-secret":       {func(g *Gen) string { return "GOCSPX-" + g.S(url64, 28) }, `{"installed":{"client_id":"1234.apps.googleusercontent.com","client_secret":"`, `"}}`},
	"azure-storage-key":         {func(g *Gen) string { return g.S(b64, 86) + "==" }, "DefaultEndpointsProtocol=https;AccountName=acmedata;AccountKey=", ";EndpointSuffix=core.windows.net"},
	"azure-sas-token":           {func(g *Gen) string { return g.S(alnum, 43) + "%3D" }, "https://acmedata.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig=", ""},
	"azure-client-secret":       {func(g *Gen) string { return g.S(alnum, 3) + "8Q~" + g.S(alnum+"_~.-", 34) }, "az login --service-principal -u 0f8fad5b-d9cb-469f-a165-70867728950e -p ", " --tenant acme"},
	"slack-token":               {func(g *Gen) string { return "xoxb-" + g.S(digits, 12) + "-" + g.S(digits, 13) + "-" + g.S(alnum, 24) }, "SLACK_BOT=", ""},
	"slack-webhook": {func(g *Gen) string {
		return "hooks.slack.com/services/T" + g.S(upper+digits, 8) + "/B" + g.S(upper+digits, 10) + "/" + g.S(alnum, 24)
	}, "curl -X POST -d '{\"text\":\"deployed\"}' https://", ""},
	"stripe-key":            {func(g *Gen) string { return "sk_live_" + g.S(alnum, 24) }, "stripe.api_key = \"", "\""},
	"stripe-webhook-secret": {func(g *Gen) string { return "whsec_" + g.S(alnum, 32) }, "stripe listen --forward-to localhost:4242/webhook  # Ready! Your webhook signing secret is ", ""},
	"twilio-api-key":        {func(g *Gen) string { return "SK" + g.S(hex, 32) }, "client = Client('", "', api_secret, account_sid)"},
	"twilio-auth-token":     {func(g *Gen) string { return g.S(hex, 32) }, "TWILIO_AUTH_TOKEN: ", ""},
	"sendgrid-api-key":      {func(g *Gen) string { return "SG." + g.S(url64, 22) + "." + g.S(url64, 43) }, "sg = SendGridAPIClient('", "')"},
	"npm-token":             {func(g *Gen) string { return "npm_" + g.S(alnum, 36) }, "//registry.npmjs.org/:_authToken=", ""},
	"pypi-token":            {func(g *Gen) string { return "pypi-AgEIcHlwaS5vcmc" + g.S(url64, 70) }, "[pypi]\nusername = __token__\npassword = ", ""},
	"huggingface-token":     {func(g *Gen) string { return "hf_" + g.S(upper+lower, 34) }, "huggingface-cli login --token ", ""},
	"jwt": {func(g *Gen) string {
		head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
		body := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"sub":"%d","name":"Dana","iat":1700000000}`, g.r.IntN(1e9))))
		return head + "." + body + "." + g.S(url64, 43)
	}, "Cookie: session=", ""},
	"private-key": {func(g *Gen) string {
		var b strings.Builder
		b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
		for range 6 {
			b.WriteString(g.S(b64, 64) + "\n")
		}
		b.WriteString("-----END RSA PRIVATE KEY-----")
		return b.String()
	}, "$ cat ~/.ssh/deploy_key\n", "\n"},
	"url-credentials":            {func(g *Gen) string { return g.S(alnum, 16) }, "DATABASE_URL=postgres://app_user:", "@db.internal:5432/orders?sslmode=require"},
	"connection-string-password": {func(g *Gen) string { return g.S(alnum, 14) + "!" }, "Server=tcp:acme.database.windows.net,1433;Database=orders;User ID=sa;Password=", ";Encrypt=True;"},
	"authorization-header":       {func(g *Gen) string { return g.S(alnum, 40) }, "curl -H \"Authorization: Bearer ", "\" https://api.acme.dev/v1/orders"},
	"api-key-header":             {func(g *Gen) string { return g.S(alnum, 32) }, "x-api-key: ", ""},
	"dotenv-secret":              {func(g *Gen) string { return g.S(alnum, 20) }, "NODE_ENV=production\nPORT=8080\nSESSION_SECRET=", "\n"},
	"secret-assignment":          {func(g *Gen) string { return g.S(alnum, 24) }, "const clientSecret = \"", "\";"},
	"high-entropy-assignment":    {func(g *Gen) string { return g.S(b64, 40) }, "signing: \"", "\""},
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
