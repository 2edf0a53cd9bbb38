package secrets_test

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/loomhq/loom/secrets"
)

// One credential is decided once, whatever carries it: the same value
// under the same field is redacted in an .env line, an export, YAML,
// JSON (docker inspect's and kubectl's too), XML, TOML, INI, a
// connection string, a URL of any scheme, a command's flag, a .netrc,
// a heredoc and code of several languages, or it is left in all of
// them; and every spelling of a credential's field decides alike.
//
// The generator is seeded: the seed is printed, and LOOM_CARRIER_SEED
// replays a run. The first 40 split decisions are listed;
// LOOM_CARRIER_ALL=1 lists every one.

// carrier writes a field given a value as one syntax writes it. field
// is lower snake case (db_password).
type carrier struct {
	name string
	// group limits the carrier to fields of one group ("" for all):
	// URLs, .netrc and connection strings carry passwords.
	group string
	write func(field, v string) string
}

func upper(field string) string { return strings.ToUpper(field) }

func camel(field string) string {
	parts := strings.Split(field, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

func dashed(field string) string { return strings.ReplaceAll(field, "_", "-") }

var carriers = []carrier{
	{"env", "", func(f, v string) string { return upper(f) + "=" + v + "\n" }},
	{"env-quoted", "", func(f, v string) string { return upper(f) + `="` + v + "\"\n" }},
	{"export", "", func(f, v string) string { return "export " + upper(f) + "=" + v + "\n" }},
	{"env-output", "", func(f, v string) string {
		return "HOME=/root\nHOSTNAME=web-1\n" + upper(f) + "=" + v + "\nPATH=/usr/local/bin:/usr/bin\n"
	}},
	{"heredoc", "", func(f, v string) string {
		return "cat > .env <<'EOF'\nAPP_ENV=production\n" + upper(f) + "=" + v + "\nEOF\n"
	}},
	{"command-prefix", "", func(f, v string) string { return upper(f) + "=" + v + " ./bin/migrate up\n" }},
	{"yaml", "", func(f, v string) string { return "database:\n  host: db.prod.internal\n  " + f + ": " + v + "\n" }},
	{"yaml-quoted", "", func(f, v string) string { return "database:\n  " + f + ": \"" + v + "\"\n" }},
	{"compose", "", func(f, v string) string {
		return "services:\n  app:\n    environment:\n      " + upper(f) + ": " + v + "\n"
	}},
	{"json", "", func(f, v string) string { return `{"host": "db.prod.internal", "` + f + `": "` + v + `"}` }},
	{"json-nested", "", func(f, v string) string {
		return "{\n  \"database\": {\n    \"host\": \"db.prod.internal\",\n    \"" + camel(f) + "\": \"" + v + "\"\n  }\n}\n"
	}},
	{"docker-inspect", "", func(f, v string) string {
		return "[\n    {\n        \"Id\": \"4f2a9c0e1b3d\",\n        \"Config\": {\n            \"Env\": [\n                \"PATH=/usr/local/sbin:/usr/local/bin\",\n                \"" +
			upper(f) + "=" + v + "\",\n                \"LANG=C.UTF-8\"\n            ]\n        }\n    }\n]\n"
	}},
	{"kubectl-json", "", func(f, v string) string {
		return "\"containers\": [\n  {\n    \"env\": [\n      {\n        \"name\": \"" + upper(f) + "\",\n        \"value\": \"" + v + "\"\n      }\n    ],\n    \"image\": \"app:1.4\"\n  }\n]\n"
	}},
	{"kubectl-yaml", "", func(f, v string) string {
		return "    env:\n    - name: " + upper(f) + "\n      value: " + v + "\n    image: app:1.4\n"
	}},
	{"xml", "", func(f, v string) string {
		return "<config>\n  <" + camel(f) + ">" + v + "</" + camel(f) + ">\n</config>\n"
	}},
	{"toml", "", func(f, v string) string {
		return "[database]\nhost = \"db.prod.internal\"\n" + f + " = \"" + v + "\"\n"
	}},
	{"ini", "", func(f, v string) string { return "[database]\nhost = db.prod.internal\n" + f + " = " + v + "\n" }},
	{"properties", "", func(f, v string) string { return "app.datasource." + camel(f) + "=" + v + "\n" }},
	{"flag-equals", "", func(f, v string) string { return "./deploy --host db.prod.internal --" + dashed(f) + "=" + v + "\n" }},
	{"flag-space", "", func(f, v string) string { return "./deploy --" + dashed(f) + " " + v + " --host db.prod.internal\n" }},
	{"python", "", func(f, v string) string {
		return "def connect():\n    " + f + " = \"" + v + "\"\n    return " + f + "\n"
	}},
	{"javascript", "", func(f, v string) string { return "const " + camel(f) + " = '" + v + "';\n" }},
	{"go", "", func(f, v string) string { return "\t" + camel(f) + " := \"" + v + "\"\n" }},
	{"java", "", func(f, v string) string { return "    private static final String " + camel(f) + " = \"" + v + "\";\n" }},
	{"ruby", "", func(f, v string) string { return "  config." + f + " = '" + v + "'\n" }},
	{"php", "", func(f, v string) string { return "$" + f + " = '" + v + "';\n" }},
	{"csharp", "", func(f, v string) string { return "        var " + camel(f) + " = \"" + v + "\";\n" }},
	{"query", "", func(f, v string) string { return "curl 'https://api.acme.io/v1/items?limit=10&" + f + "=" + v + "'\n" }},
	// Passwords by where they stand, whatever the field's spelling.
	{"connection-string", "password", func(_, v string) string {
		return "Server=db.prod.internal;Database=orders;User Id=app;Password=" + v + ";\n"
	}},
	{"connection-string-pwd", "password", func(_, v string) string {
		return "Driver={ODBC Driver 18};Server=db.prod.internal;Uid=app;Pwd=" + v + ";\n"
	}},
	{"netrc", "password", func(_, v string) string { return "machine api.acme.io\n  login app\n  password " + v + "\n" }},
	{"mysql-p", "password", func(_, v string) string { return "mysql -h db.prod.internal -u app -p" + v + " orders\n" }},
	{"sshpass", "password", func(_, v string) string { return "sshpass -p '" + v + "' ssh deploy@web-1\n" }},
	{"bare-userinfo", "password", func(_, v string) string { return "connect as admin:" + v + "@db1.prod.net then run the migration\n" }},
}

// urlSchemes are the schemes a URL gives a password in.
var urlSchemes = []string{"postgres", "postgresql", "mysql", "mariadb", "mongodb", "mongodb+srv", "redis", "rediss", "amqp", "amqps",
	"https", "http", "ftp", "sftp", "smtp", "ldap", "sqlserver", "clickhouse", "nats", "kafka"}

// fieldGroups are the spellings of credential fields, by the decision
// they share.
var fieldGroups = map[string][]string{
	"password": {"password", "passwd", "pwd", "passphrase", "db_password", "db_passwd", "db_pwd", "db_pass", "smtp_pass", "root_password", "admin_password", "mysql_password", "postgres_password", "redis_password", "user_password"},
	"secret":   {"secret", "token", "api_key", "apikey", "access_token", "auth_token", "client_secret", "secret_key", "private_token", "app_secret", "api_token", "session_secret", "jwt_secret", "refresh_token", "service_token"},
}

// chosenPasswords are passwords people choose, which a credential's
// place gives away as it gives away any other: redacted under every
// password field and in every carrier.
var chosenPasswords = []string{"letmein", "iloveyou", "dragon", "monkey", "trustno1", "admin123", "pass123", "opensesame", "sunshine",
	"princess", "football", "welcome1", "qwerty123", "abc123", "hunter2", "P@ssw0rd123", "Summer2024!", "whiteduke", "baseball", "shadow", "master"}

// placeholderValues stand for a credential in docs and templates: left
// in every carrier under every field.
var placeholderValues = []string{"changeme", "changethis", "your_password", "your-api-key", "<password>", "<your-token>", "xxxxxxxx",
	"REPLACE_ME", "example", "${DB_PASSWORD}", "{{ .Values.password }}", "password", "secret", "placeholder"}

// decided reports whether d redacts v where text carries it.
func decided(d *secrets.Detector, text, v string) bool {
	red, _ := d.Redact(text)
	return !strings.Contains(red, v)
}

func TestOneDecisionPerCredential(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LOOM_CARRIER_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("LOOM_CARRIER_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Logf("seed %d (LOOM_CARRIER_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	d := secrets.Default()
	type value struct {
		v, kind string // kind: token, chosen, placeholder
	}
	fails := 0
	check := func(group, field string, val value) {
		want := val.kind != "placeholder"
		var got, missed []string
		for _, c := range carriers {
			if c.group != "" && c.group != group || val.kind == "chosen" && group != "password" {
				continue
			}
			text := c.write(field, val.v)
			if strings.Contains(text, "PWD=") || strings.Contains(text, "PWD:") || strings.Contains(text, `PWD"`) || strings.Contains(text, "PWD\n") {
				// The variable PWD is the shell's working
				// directory, not a password's name.
				continue
			}
			if decided(d, text, val.v) == want {
				got = append(got, c.name)
			} else {
				missed = append(missed, c.name)
			}
		}
		if group == "password" && val.kind != "chosen" || group == "password" {
			for _, s := range urlSchemes {
				text := s + "://app:" + val.v + "@db.prod.internal:5432/orders?sslmode=require\n"
				if strings.ContainsAny(val.v, "/{}<>$ ") && val.kind == "placeholder" {
					continue
				}
				if decided(d, text, val.v) == want {
					got = append(got, s+"-url")
				} else {
					missed = append(missed, s+"-url")
				}
			}
		}
		if len(missed) > 0 {
			fails++
			if fails <= 40 || os.Getenv("LOOM_CARRIER_ALL") != "" {
				verb := "redacted"
				if !want {
					verb = "left"
				}
				t.Errorf("seed %d: %s %q under %s: %s in %d carriers, not in %v", seed, val.kind, val.v, field, verb, len(got), missed)
			}
		}
	}
	for range 60 {
		group := []string{"password", "secret"}[rng.IntN(2)]
		fields := fieldGroups[group]
		field := fields[rng.IntN(len(fields))]
		var val value
		switch k := rng.IntN(3); {
		case k == 0:
			val = value{randomToken(rng), "token"}
		case k == 1 && group == "password":
			val = value{chosenPasswords[rng.IntN(len(chosenPasswords))], "chosen"}
		default:
			val = value{placeholderValues[rng.IntN(len(placeholderValues))], "placeholder"}
		}
		check(group, field, val)
	}
	// Every chosen password and every placeholder under every
	// spelling once: the lists are short.
	for group, fields := range fieldGroups {
		for _, field := range fields {
			for _, v := range placeholderValues {
				check(group, field, value{v, "placeholder"})
			}
			if group == "password" {
				for _, v := range chosenPasswords {
					check(group, field, value{v, "chosen"})
				}
			}
		}
	}
	if fails > 40 {
		t.Errorf("seed %d: %d decisions split in all", seed, fails)
	}
}

// randomToken is a key as services issue them: 20 to 48 letters and
// digits of both cases, a digit among them.
func randomToken(rng *rand.Rand) string {
	const alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for {
		b := make([]byte, 20+rng.IntN(29))
		for i := range b {
			b[i] = alpha[rng.IntN(len(alpha))]
		}
		v := string(b)
		if strings.IndexFunc(v, unicode.IsDigit) >= 0 && strings.IndexFunc(v, unicode.IsUpper) >= 0 && strings.IndexFunc(v, unicode.IsLower) >= 0 {
			return v
		}
	}
}
