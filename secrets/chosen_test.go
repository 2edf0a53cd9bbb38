package secrets_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/secrets"
)

// The passwords people choose are redacted in a credential's place;
// the words docs and templates put there are not (docs/security.md,
// "Passwords people choose").
func TestChosenPasswordsInACredentialsPlace(t *testing.T) {
	d := secrets.Default()
	for _, c := range []struct{ text, secret string }{
		{"DATABASE_URL=postgres://app:iloveyou@db.prod.internal/orders", "iloveyou"},
		{"export DB_PASSWORD=letmein\n", "letmein"},
		{"machine api.acme.io login aladdin password opensesame\n", "opensesame"},
		{"passwd: hardcoded2\n", "hardcoded2"},
		{"pwd: hardcoded1\n", "hardcoded1"},
		{`{"username": "admin", "password": "dragon"}`, "dragon"},
		{"mysql -h db.prod.internal -u app -pmonkey orders\n", "monkey"},
		{"ADMIN_PASSWORD=admin123\n", "admin123"},
		{"redis://:trustno1@cache.prod.internal:6379/0", "trustno1"},
		{"spring.datasource.password=pass123\n", "pass123"},
		{`password = "P@ssw0rd123"`, "P@ssw0rd123"},
		{"<password>qwerty123</password>", "qwerty123"},
		{"./deploy --db-password sunshine --host db.prod.internal\n", "sunshine"},
		// Two Env lines of docker inspect's JSON, as the .env line
		// decides.
		{"\"Env\": [\n  \"PATH=/usr/bin\",\n  \"DB_PASSWORD=whiteduke\"\n]", "whiteduke"},
		// Issue 84's quoted examples, as a class: any user:password@host.
		{"ssh tunnel then admin:secretKey456@db1.prod.net, port 5432", "secretKey456"},
		{"mongo admin:Zq8mN3kL9xT2@mongo-0.shop.internal:27017/app", "Zq8mN3kL9xT2"},
		{"amqp://svc:s3cr3tP4ss@mq.acme.io:5672/", "s3cr3tP4ss"},
		{"clickhouse://reader:Kx81bMq2zL@ch.analytics.io:9000/events", "Kx81bMq2zL"},
	} {
		red, _ := d.Redact(c.text)
		if strings.Contains(red, c.secret) {
			t.Errorf("%q kept in %q", c.secret, red)
		}
	}
	notFound(t, d,
		"SECRET_KEY=changethis\n",
		"DB_PASSWORD=changeme\n",
		"password: your_password\n",
		"postgres://user:password@localhost:5432/app",
		"DATABASE_URL=postgres://app:<password>@db.prod.internal/orders",
		`"password": "xxxxxxxx"`,
		"password: example\n",
		"mailto:joe@acme.io",
		"From:jane.doe@acme.io",
		"connect as app:app@db1.prod.net",
		"image: nginx:1.25@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31",
		"admin:hunter2@db.example.com",
	)
}

// Issue 106's noise, by cause.
func TestNoiseOfFieldListsAndSelectors(t *testing.T) {
	notFound(t, secrets.Default(),
		// socket.io's minified list of a URL's fields: names, not a
		// password and its host.
		`var re=/^(?:(?![^:@]+:[^:@\/]*@)(http|https|ws|wss):\/\/)?/,parts=["source","protocol","authority","userInfo","user","password","host","port","relative","path","directory","file","query","anchor"];`,
		// A sed expression of a CI file.
		`      - run: sed -i "s/password: .*/password: ${{ secrets.DB_PASSWORD }}/" config.yml`,
		`sed -i 's/^DB_PASSWORD=.*/DB_PASSWORD=$NEW/' .env`,
		// A CUE label selector's key.
		"selector: matchLabels: \"app.kubernetes.io/name\": \"secret-store\"\n#Secret: [Name=_]: {token: string, password?: string}\n",
		"SECRET_KEY=changethis\n",
	)
}
