package secrets_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/secrets"
)

// Values given a name in every language's shape, and the formats of
// kinds loom claims, that the detector missed: each must be gone once
// redacted.
func TestNamedValuesInEveryShape(t *testing.T) {
	d := secrets.Default()
	for _, c := range []struct{ text, secret string }{
		// A password holding <…> is no placeholder.
		{"DB_PASSWORD=Xq7<a>Lm2Rz9Tk4\n", "Xq7<a>Lm2Rz9Tk4"},
		{`password: "Xq7<a>Lm2Rz9Tk4"`, "Xq7<a>Lm2Rz9Tk4"},
		// curl's user:password.
		{"curl -u developer:yqDVtkqPECriaLRi https://api.internal.acme.io/v2/builds", "yqDVtkqPECriaLRi"},
		{"curl --user 'deploy:Tk9vQ2mLx8Zr' -X POST https://ci.acme.io/job/build", "Tk9vQ2mLx8Zr"},
		{"curl -s -u admin:hT6qLz2Vw9Rk https://grafana.acme.io/api/dashboards", "hT6qLz2Vw9Rk"},
		// Typed declarations.
		{`var apiKey string = "qH7vL2mZ9xR4tK8wN3pB"`, "qH7vL2mZ9xR4tK8wN3pB"},
		{`const token: string = "Zq8mN3kL9xT2vB7wR4yU";`, "Zq8mN3kL9xT2vB7wR4yU"},
		{`String ageToken = "AGE-SECRET-KEY-1QZ8M3KL9XT2VB7WR4YUQZ8M3KL9XT2VB7WR4YUQZ8M3KL9XT2";`, "AGE-SECRET-KEY-1QZ8M3KL9XT2VB7WR4YUQZ8M3KL9XT2VB7WR4YUQZ8M3KL9XT2"},
		{`adobeClient := "p8e-Zq8mN3kL9xT2vB7wR4yUqH7vL2mZ9xR4"`, "p8e-Zq8mN3kL9xT2vB7wR4yUqH7vL2mZ9xR4"},
		{`private static final String API_SECRET = "Nq3vW8mLz2xTk9vQ2mLx";`, "Nq3vW8mLz2xTk9vQ2mLx"},
		{`let client_secret: &str = "Nq3vW8mLz2xTk9vQ2mLx";`, "Nq3vW8mLz2xTk9vQ2mLx"},
		{`val authToken: String = "Nq3vW8mLz2xTk9vQ2mLx"`, "Nq3vW8mLz2xTk9vQ2mLx"},
		{`let apiKey: String = "Nq3vW8mLz2xTk9vQ2mLx"`, "Nq3vW8mLz2xTk9vQ2mLx"},
		{`public const string ClientSecret = "Nq3vW8mLz2xTk9vQ2mLx";`, "Nq3vW8mLz2xTk9vQ2mLx"},
		{`API_TOKEN: str = "Nq3vW8mLz2xTk9vQ2mLx"`, "Nq3vW8mLz2xTk9vQ2mLx"},
		{`$apiToken .= "Nq3vW8mLz2xTk9vQ2mLx";`, "Nq3vW8mLz2xTk9vQ2mLx"},
		{"<apiToken>\n    Nq3vW8mLz2xTk9vQ2mLx\n</apiToken>", "Nq3vW8mLz2xTk9vQ2mLx"},
		// Unquoted values with shell metacharacters.
		{"JWT_SECRET=IzrT6M!JBu4yP&QebW\n", "IzrT6M!JBu4yP&QebW"},
		{"SESSION_TOKEN=aX9#kL2(mQ)7<z>Rw\n", "aX9#kL2(mQ)7<z>Rw"},
		// A bearer value under any name.
		{`"upstream_auth": "Bearer Zq8mN3kL9xT2vB7wR4yUqH7vL2mZ9xR4"`, "Zq8mN3kL9xT2vB7wR4yUqH7vL2mZ9xR4"},
		{`headers = {"X-Upstream": "Bearer Zq8mN3kL9xT2vB7wR4yUqH7vL2mZ9xR4"}`, "Zq8mN3kL9xT2vB7wR4yUqH7vL2mZ9xR4"},
		// A random token without a digit under a secret name.
		{"CLIENT_SECRET=PSIYbVgfkbRtQmWzXaLcNeHd\n", "PSIYbVgfkbRtQmWzXaLcNeHd"},
		// Passphrases under password names.
		{"DB_PASSWORD=staple-horse-velvet-battery\n", "staple-horse-velvet-battery"},
		// Formats of kinds loom claims.
		{"AAAAAAAAAAAAAAAAAAAAAMLheAAAAAAA0%2BuSeid%2BULvsea4JtiGRiSDSJSI%3DEUifiRBkKG5E2XzMDjRfl76ZC9Ub0wnz4XsNiRVBChTYbJcE3F", "AAAAAAAAAAAAAAAAAAAAAMLheAAAAAAA0%2BuSeid%2BULvsea4JtiGRiSDSJSI%3DEUifiRBkKG5E2XzMDjRfl76ZC9Ub0wnz4XsNiRVBChTYbJcE3F"},
		{"refresh: xoxe-1-My0xLTEyMzQ1Njc4OTAxMi0xMjM0NTY3ODkwMTIzLTVhMmI4YzdkM2YxZTllNGI2YTBjOGQyZjRlNmIxYTNj", "xoxe-1-My0xLTEyMzQ1Njc4OTAxMi0xMjM0NTY3ODkwMTIzLTVhMmI4YzdkM2YxZTllNGI2YTBjOGQyZjRlNmIxYTNj"},
		{"the app used xoxa-2-5112345678-3112345678901-3112345678901-e039d02840a0b9379c for it", "xoxa-2-5112345678-3112345678901-3112345678901-e039d02840a0b9379c"},
		{"old token xoxr-5112345678-3112345678901-3112345678901-e039d02840a0b9379cdeadbeef", "xoxr-5112345678-3112345678901-3112345678901-e039d02840a0b9379cdeadbeef"},
		{"src login with sgp_local_8c3e1a7f2b9d4e6ab1c5d2e8f4a6b0c9e1f2a3b4", "sgp_local_8c3e1a7f2b9d4e6ab1c5d2e8f4a6b0c9e1f2a3b4"},
		// An Azure storage key beside its name, in any syntax; a
		// Tableau token's secret; a C# initialiser's pair.
		{"AzureStorageCleanup.exe -storagename acme -storagekey hGeB3WqDyx0mGsQMsQDl+gmnXa51ZODiBtcXJpMoRhPjkDm79f9ErNfaYizXm7nkElix8n2uBwNk6KY8Rc866w== -container backup", "hGeB3WqDyx0mGsQMsQDl+gmnXa51ZODiBtcXJpMoRhPjkDm79f9ErNfaYizXm7nkElix8n2uBwNk6KY8Rc866w=="},
		{"pat ci-token\nYMqNfVWiTSa0QgpoJ9GpCw==:KTamjuKrXF5gVETjIJafBBvP8Ctj5aJ3\n", "YMqNfVWiTSa0QgpoJ9GpCw==:KTamjuKrXF5gVETjIJafBBvP8Ctj5aJ3"},
		{`{ "ClientSecret", "Nq3vW8mLz2xTk9vQ2mLx" },`, "Nq3vW8mLz2xTk9vQ2mLx"},
		// A JSON pair that is the whole text (a prompt pasting one
		// line of a file) starts and ends with a quote but is no
		// JSON string.
		{`"client_secret": "Kq8vN2xR7mLp4TzW9bYc3HdJ"`, "Kq8vN2xR7mLp4TzW9bYc3HdJ"},
		{`"api_key": "Kq8vN2xR7mLp4TzW9bYc3HdJ"`, "Kq8vN2xR7mLp4TzW9bYc3HdJ"},
	} {
		red, n := d.Redact(c.text)
		if n == 0 || strings.Contains(red, c.secret) {
			t.Errorf("%q: secret left: %q", c.text, red)
		}
	}
}

// Clean code and prose that read like an assignment of a secret but
// hold none: none may be flagged.
func TestCleanTextNotFlagged(t *testing.T) {
	d := secrets.Default()
	notFlagged(t, d, []string{
		"ec2_ssh_key = remote_access.value.ec2_ssh_key",
		`  key_name      = aws_key_pair.deployer.key_name`,
		`"auth": "\#(auth)"`,
		`password: "\(db.password)"`,
		"token: ${{ secrets.GITHUB_TOKEN }}",
		"password = #{db_password}",
		"api_key: {{ vault_api_key }}",
		"secret_key = {% raw %}{{ secret_key }}{% endraw %}",
		"decodingStrategy: None",
		"tokenType: Bearer",
		`authToken = "YourAccessTokenHere"`,
		`apiKey = "InsertYourApiKeyHere"`,
		"The secret is stored at arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf in Secrets Manager.",
		"-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
		"-----BEGIN PRIVATE KEY-----\n<your private key here>\n-----END PRIVATE KEY-----",
		"DB_PASSWORD=<your-password>",
		"API_KEY=sk-<your-key>",
		"postgres://<user>:<password>@localhost:5432/app",
	})
}

// A gate redacts the lines of a file as the text they make: a private
// key's body lines are found as the key they are, and each line keeps
// its number.
func TestGateLines(t *testing.T) {
	key := "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBq2f8Xd4mN7vLz2kQ9wR3tY6uP1sA5dF8gH0jK2lZ4xoAoGCCqGSM49\nAwEHoUQDQgAE3xYz7Wq9Lm2Rz9Tk4vB8nC1dF6gH2jK5lP0sA3dF7gH9jK1lZ3x\nQm8Vn2Bc4Xz6Lk9Jh7Gf5Dd3Ss1Aa0Pp9Oo8Ii7Uu6Yy5Tt4Rr3Ee2Ww1Qq==\n-----END EC PRIVATE KEY-----"
	lines := append([]string{"APP_ENV=staging", "# the deploy key"}, strings.Split(key, "\n")...)
	lines = append(lines, "LOG_LEVEL=debug")
	g := secrets.Default().Gate(nil)
	out := g.Lines(lines)
	if len(out) != len(lines) {
		t.Fatalf("%d lines in, %d out: %q", len(lines), len(out), out)
	}
	for i, l := range strings.Split(key, "\n")[1:4] {
		if strings.Contains(strings.Join(out, "\n"), l) {
			t.Errorf("body line %d of the key left: %q", i+1, out)
		}
	}
	if out[0] != "APP_ENV=staging" || out[len(out)-1] != "LOG_LEVEL=debug" || !strings.Contains(out[2], secrets.MarkerPrefix) {
		t.Errorf("lines around the key changed, or no marker where it starts: %q", out)
	}
	if g.Redacted() != 1 {
		t.Errorf("the gate counts %d secrets, want 1", g.Redacted())
	}
}
