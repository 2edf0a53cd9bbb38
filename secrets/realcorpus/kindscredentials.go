package realcorpus

import (
	"encoding/json"
	"strings"
)

// genericKinds are the generic credentials: JWTs and private keys.
var genericKinds = []Kind{
	{"jwt", "generic", func(g *Gen) Secret {
		v := g.jwt(map[string]any{"iss": g.Pick("https://auth.acme.io/", "https://login.northwind.dev", "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_"+g.S(alnum, 9)),
			"sub": g.UUID(), "aud": g.Pick("api", "orders", "https://api.acme.io"), "scope": g.Pick("read:orders write:orders", "openid profile email", "admin"),
			"iat": 1760000000 + g.N(0, 9e6), "exp": 1760003600 + g.N(0, 9e6)}, g.Pick("HS256", "RS256", "ES256"))
		return token("jwt", g.Pick("ACCESS_TOKEN", "API_JWT", "AUTH_TOKEN"), v).with(func(s *Secret) {
			s.Header = g.Pick("Authorization: Bearer ", "Cookie: access_token=", "Authorization: Bearer ") + v
		})
	}},
	{"rsa-private-key", "key", func(g *Gen) Secret {
		v := g.RSAKey()
		return Secret{Kind: "rsa-private-key", Value: v, Name: "JWT_PRIVATE_KEY", Assign: v, Block: v, File: g.Pick("deploy.pem", "jwt-signing.key", "server.key"), Command: ""}
	}},
	{"ec-private-key", "key", func(g *Gen) Secret {
		v := g.ECKey()
		return Secret{Kind: "ec-private-key", Value: v, Name: "APPLE_PRIVATE_KEY", Assign: v, Block: v, File: g.Pick("ec256.pem", "tls.key", "signing-key.pem")}
	}},
	{"openssh-private-key", "key", func(g *Gen) Secret {
		v := g.OpenSSHKey()
		return Secret{Kind: "openssh-private-key", Value: v, Name: "SSH_PRIVATE_KEY", Assign: v, Block: v, File: g.Pick(".ssh/id_ed25519", ".ssh/deploy_key", ".ssh/id_rsa")}
	}},
	{"pgp-private-key", "key", func(g *Gen) Secret {
		v := g.PGPKey()
		return Secret{Kind: "pgp-private-key", Value: v, Name: "GPG_PRIVATE_KEY", Assign: v, Block: v, File: g.Pick("release-signing.asc", "private.asc")}
	}},
	{"pkcs8-private-key", "key", func(g *Gen) Secret {
		v := g.PKCS8Key()
		return Secret{Kind: "pkcs8-private-key", Value: v, Name: "PRIVATE_KEY", Assign: v, Block: v, File: g.Pick("key.pem", "privkey.pem", "tls.key")}
	}},
	{"encrypted-private-key", "key", func(g *Gen) Secret {
		v := g.EncryptedKey()
		return Secret{Kind: "encrypted-private-key", Value: v, Name: "SIGNING_KEY", Assign: v, Block: v, File: g.Pick("signing.key", "client-key.pem")}
	}},
	{"cut-private-key", "key", func(g *Gen) Secret {
		v := g.CutKey()
		if g.Chance(0.5) {
			// cut inside a line, as a byte limit cuts output
			v = v[:len(v)-g.N(1, 20)]
		}
		return Secret{Kind: "cut-private-key", Value: v, Block: v, File: g.Pick("id_rsa", "server.key", "private.asc")}
	}},
}

// contextKinds are passwords and tokens named by their context.
var contextKinds = []Kind{
	{"postgres-url-password", "context", func(g *Gen) Secret {
		pw := g.URLPassword()
		u := g.Pick("postgres", "postgresql", "postgresql+asyncpg") + "://" + g.User() + ":" + pw + "@" + g.Host() + ":5432/" + g.Pick("orders", "app", "shop_prod", "analytics") + g.Pick("", "?sslmode=require", "?schema=public")
		return Secret{Kind: "postgres-url-password", Value: pw, Name: g.Pick("DATABASE_URL", "POSTGRES_URL", "SQLALCHEMY_DATABASE_URI"), Assign: u,
			Command: "psql '" + u + "' -c 'select count(*) from orders'"}
	}},
	{"mysql-url-password", "context", func(g *Gen) Secret {
		pw := g.URLPassword()
		u := g.Pick("mysql", "mysql+pymysql", "mariadb") + "://" + g.User() + ":" + pw + "@" + g.Host() + ":3306/" + g.Pick("wordpress", "shop", "app")
		return Secret{Kind: "mysql-url-password", Value: pw, Name: g.Pick("DATABASE_URL", "MYSQL_URL"), Assign: u}
	}},
	{"mongodb-srv-password", "context", func(g *Gen) Secret {
		pw := g.URLPassword()
		u := "mongodb+srv://" + g.User() + ":" + pw + "@" + g.Pick("cluster0", "prod-shard", "analytics") + "." + g.S(lowNum, 5) + ".mongodb.net/" + g.Pick("shop", "app", "") + "?retryWrites=true&w=majority&appName=" + g.Pick("Cluster0", "api")
		return Secret{Kind: "mongodb-srv-password", Value: pw, Name: g.Pick("MONGODB_URI", "MONGO_URL"), Assign: u}
	}},
	{"amqp-url-password", "context", func(g *Gen) Secret {
		pw := g.URLPassword()
		u := g.Pick("amqp", "amqps") + "://" + g.User() + ":" + pw + "@" + g.Pick("rabbitmq", "mq.internal", "kangaroo.rmq.cloudamqp.com") + ":5672/" + g.Pick("", "%2F", "orders")
		return Secret{Kind: "amqp-url-password", Value: pw, Name: g.Pick("AMQP_URL", "CELERY_BROKER_URL", "RABBITMQ_URL"), Assign: u}
	}},
	{"redis-url-password", "context", func(g *Gen) Secret {
		pw := g.URLPassword()
		u := g.Pick("redis://:", "rediss://:", "redis://default:", "rediss://default:") + pw + "@" + g.Pick("redis", "cache.internal", "redis-12345.c1.eu-west-1-2.ec2.cloud.redislabs.com") + ":6379/" + g.Pick("0", "1")
		return Secret{Kind: "redis-url-password", Value: pw, Name: g.Pick("REDIS_URL", "CACHE_URL", "CELERY_RESULT_BACKEND"), Assign: u,
			Command: "redis-cli -u " + u + " ping"}
	}},
	{"url-embedded-credentials", "context", func(g *Gen) Secret {
		pw := g.URLPassword()
		u := g.Pick("https://", "http://", "ftp://", "smtp://") + g.Pick("deploy", "backup", "jenkins", "proxyuser") + ":" + pw + "@" + g.Pick("nexus.acme.io/repository/npm-private/", "proxy.corp.local:3128", "ftp.northwind.dev/uploads", "smtp.mailgun.org:587")
		return Secret{Kind: "url-embedded-credentials", Value: pw, Name: g.Pick("HTTPS_PROXY", "NEXUS_URL", "BACKUP_URL", "SMTP_URL"), Assign: u, URL: u}
	}},
	{"dotenv-password", "context", func(g *Gen) Secret {
		return named("dotenv-password", g.Pick("DB_PASSWORD", "POSTGRES_PASSWORD", "MYSQL_ROOT_PASSWORD", "SMTP_PASSWORD", "ADMIN_PASSWORD", "REDIS_PASSWORD", "LDAP_BIND_PASSWORD"), g.Password())
	}},
	{"app-secret-key", "context", func(g *Gen) Secret {
		switch g.r.IntN(3) {
		case 0:
			return named("app-secret-key", "DJANGO_SECRET_KEY", "django-insecure-"+g.S(lowNum+"!@#$%^&*(-_=+)", 50))
		case 1:
			return named("app-secret-key", "SECRET_KEY_BASE", g.S(hexLow, 128))
		default:
			return named("app-secret-key", g.Pick("SESSION_SECRET", "NEXTAUTH_SECRET", "JWT_SECRET", "APP_KEY"), g.Pick("", "base64:")+g.S(b64, 43)+"=")
		}
	}},
	{"generic-api-key", "context", func(g *Gen) Secret {
		v := g.S(g.Pick(alnum, hexLow, lowNum), g.N(24, 40))
		return named("generic-api-key", g.Pick("WEATHER_API_KEY", "GEOCODER_KEY", "ALGOLIA_ADMIN_KEY", "ALGOLIA_API_KEY", "MAPBOX_SECRET", "PAYMENTS_API_KEY", "SEARCH_ADMIN_KEY"), v).with(func(s *Secret) {
			s.Header = g.Pick("X-API-Key: ", "X-Api-Key: ", "apikey: ") + v
		})
	}},
	{"yaml-password", "context", func(g *Gen) Secret {
		pw := g.Password()
		q := pw
		if strings.ContainsAny(pw, ":#&*!%@?<>,") {
			q = "'" + pw + "'"
		}
		block := g.Pick("database", "db", "datasource") + ":\n  host: " + g.Host() + "\n  port: 5432\n  name: " + g.Pick("orders", "app") + "\n  user: " + g.User() + "\n  password: " + q + "\n  pool: 10\nlogging:\n  level: info\n"
		return Secret{Kind: "yaml-password", Value: pw, Block: block, File: g.Pick("config/settings.yml", "config.yaml", "config/database.yml"), Lang: "yaml", Name: "DB_PASSWORD", Assign: pw}
	}},
	{"compose-password", "context", func(g *Gen) Secret {
		pw := g.URLPassword()
		block := "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_USER: " + g.User() + "\n      POSTGRES_PASSWORD: " + pw + "\n      POSTGRES_DB: " + g.Pick("app", "shop") + "\n    ports:\n      - \"5432:5432\"\n    volumes:\n      - pgdata:/var/lib/postgresql/data\n  api:\n    build: .\n    depends_on: [db]\nvolumes:\n  pgdata:\n"
		return Secret{Kind: "compose-password", Value: pw, Block: block, File: "docker-compose.yml", Lang: "yaml", Name: "POSTGRES_PASSWORD", Assign: pw}
	}},
	{"spring-datasource-password", "context", func(g *Gen) Secret {
		pw := g.Password()
		block := "server.port=8080\nspring.datasource.url=jdbc:postgresql://" + g.Host() + ":5432/" + g.Pick("orders", "app") + "\nspring.datasource.username=" + g.User() + "\nspring.datasource.password=" + pw + "\nspring.jpa.hibernate.ddl-auto=validate\nspring.jpa.open-in-view=false\n"
		return Secret{Kind: "spring-datasource-password", Value: pw, Block: block, File: "src/main/resources/application.properties", Lang: "properties", Name: "SPRING_DATASOURCE_PASSWORD", Assign: pw}
	}},
	{"pgpass-line", "context", func(g *Gen) Secret {
		pw := strings.NewReplacer(":", "", "\\", "").Replace(g.Password())
		block := g.Host() + ":5432:" + g.Pick("orders", "*") + ":" + g.User() + ":" + pw + "\n" + g.Pick("localhost", "replica.internal") + ":5432:*:replicator:" + g.URLPassword() + "\n"
		return Secret{Kind: "pgpass-line", Value: pw, Block: block, File: ".pgpass"}
	}},
	{"npmrc-auth", "context", func(g *Gen) Secret {
		if g.Chance(0.5) {
			v := g.UUID()
			return Secret{Kind: "npmrc-auth", Value: v, File: ".npmrc", Lang: "ini",
				Block: "@acme:registry=https://npm.pkg." + g.Pick("acme.io", "github.com") + "/\n//npm.pkg." + g.Pick("acme.io", "github.com") + "/:_authToken=" + v + "\nalways-auth=true\n"}
		}
		pw := g.URLPassword()
		auth := b64s(g.User() + ":" + pw)
		return Secret{Kind: "npmrc-auth", Value: pw, File: ".npmrc", Lang: "ini", Extra: []string{auth}, B64: []string{pw},
			Block: "registry=https://nexus.acme.io/repository/npm-group/\n_auth=" + auth + "\nemail=ci@acme.io\nalways-auth=true\n"}
	}},
	{"docker-config-auth", "context", func(g *Gen) Secret {
		pw := g.Password()
		auth := b64s(g.User() + ":" + pw)
		reg := g.Pick("https://index.docker.io/v1/", "ghcr.io", "registry.gitlab.com", g.S(digits, 12)+".dkr.ecr.eu-west-1.amazonaws.com")
		block := jsonIndent(map[string]any{"auths": map[string]any{reg: map[string]string{"auth": auth}}, "credsStore": ""})
		return Secret{Kind: "docker-config-auth", Value: pw, Block: block, File: ".docker/config.json", Lang: "json", Extra: []string{auth}, B64: []string{pw}}
	}},
	{"k8s-secret-manifest", "context", func(g *Gen) Secret {
		pw := g.Password()
		var block string
		if g.Chance(0.5) {
			block = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + g.Pick("db-credentials", "app-secrets") + "\n  namespace: " + g.Pick("prod", "default") + "\ntype: Opaque\ndata:\n  username: " + b64s(g.User()) + "\n  password: " + b64s(pw) + "\n"
			return Secret{Kind: "k8s-secret-manifest", Value: pw, Block: block, File: "k8s/secret.yaml", Lang: "yaml", Extra: []string{b64s(pw)}, B64: []string{pw}}
		}
		block = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + g.Pick("db-credentials", "app-secrets") + "\ntype: Opaque\nstringData:\n  DB_USER: " + g.User() + "\n  DB_PASSWORD: \"" + strings.ReplaceAll(pw, `"`, ``) + "\"\n"
		return Secret{Kind: "k8s-secret-manifest", Value: strings.ReplaceAll(pw, `"`, ``), Block: block, File: "k8s/secret.yaml", Lang: "yaml"}
	}},
	{"kubeconfig-token", "context", func(g *Gen) Secret {
		v := g.S(lowNum, 6) + "." + g.S(lowNum, 16)
		if g.Chance(0.6) {
			v = g.jwt(map[string]any{"iss": "kubernetes/serviceaccount", "kubernetes.io/serviceaccount/namespace": "ci", "kubernetes.io/serviceaccount/service-account.name": "deployer", "sub": "system:serviceaccount:ci:deployer"}, "RS256")
		}
		return Secret{Kind: "kubeconfig-token", Value: v, File: ".kube/config", Lang: "yaml", Bearer: true, Name: "K8S_TOKEN", Assign: v, Block: kubeconfig(g, "    token: "+v+"\n")}
	}},
	{"kubeconfig-client-key", "context", func(g *Gen) Secret {
		key := g.ECKey()
		if g.Chance(0.5) {
			key = g.RSAKey()
		}
		data := b64s(key + "\n")
		return Secret{Kind: "kubeconfig-client-key", Value: key, File: ".kube/config", Lang: "yaml", Extra: []string{data}, B64: []string{key},
			Block: kubeconfig(g, "    client-certificate-data: "+b64s("-----BEGIN CERTIFICATE-----\n"+strings.Join(g.pemBody("MIIDITCCAgmgAwIBAgIIS", 805), "\n")+"\n-----END CERTIFICATE-----\n")+"\n    client-key-data: "+data+"\n")}
	}},
	{"nginx-basic-auth", "context", func(g *Gen) Secret {
		pw := g.URLPassword()
		auth := b64s(g.User() + ":" + pw)
		block := "location /api/ {\n    proxy_pass http://backend:8080/;\n    proxy_set_header Host $host;\n    proxy_set_header Authorization \"Basic " + auth + "\";\n    proxy_set_header X-Real-IP $remote_addr;\n}\n"
		return Secret{Kind: "nginx-basic-auth", Value: pw, Block: block, File: "/etc/nginx/conf.d/api.conf", Lang: "nginx", Extra: []string{auth}, B64: []string{pw}}
	}},
	{"url-api-key-param", "context", func(g *Gen) Secret {
		v := g.S(g.Pick(hexLow, alnum), 32)
		u := "https://api." + g.Pick("openweathermap.org/data/2.5/weather?q=Lyon", "nasa.gov/planetary/apod?hd=true", "acme-geo.io/v2/geocode?q=Main+St") + "&" + g.Pick("api_key", "apikey", "appid", "api-key") + "=" + v
		return Secret{Kind: "url-api-key-param", Value: v, URL: u, Name: "WEATHER_URL", Assign: u}
	}},
	{"url-access-token-param", "context", func(g *Gen) Secret {
		v := g.Pick("EAAG", "EAAB", "") + g.S(alnum, g.N(120, 180))
		u := "https://graph." + g.Pick("facebook.com/v19.0/me/accounts", "acme.io/v1/me") + "?fields=id,name&access_token=" + v
		return Secret{Kind: "url-access-token-param", Value: v, URL: u}
	}},
	{"url-token-param", "context", func(g *Gen) Secret {
		v := g.S(url64, g.N(28, 48))
		u := "https://" + g.Pick("grafana.acme.io/d/api-latency?orgId=1&auth_token=", "files.northwind.dev/download/report.pdf?token=", "app.acme.io/reset-password?token=", "hooks.acme.io/ingest?token=") + v
		return Secret{Kind: "url-token-param", Value: v, URL: u}
	}},
	{"bearer-token-header", "context", func(g *Gen) Secret {
		v := g.S(url64+".", g.N(32, 64))
		return Secret{Kind: "bearer-token-header", Value: v, Header: "Authorization: Bearer " + v, Bearer: true, Name: "API_TOKEN", Assign: v}
	}},
	{"basic-auth-header", "context", func(g *Gen) Secret {
		pw := g.Password()
		auth := b64s(g.User() + ":" + pw)
		return Secret{Kind: "basic-auth-header", Value: pw, Header: "Authorization: Basic " + auth, Extra: []string{auth}, B64: []string{pw}}
	}},
	{"session-cookie", "context", func(g *Gen) Secret {
		v := g.Pick("s%3A"+g.S(url64, 32)+"."+g.S(b64, 43), g.S(hexLow, 64), g.S(url64, 40)+"--"+g.S(hexLow, 40))
		n := g.Pick("connect.sid", "sessionid", "_session_id", "laravel_session")
		return Secret{Kind: "session-cookie", Value: v, Header: "Cookie: " + n + "=" + v + "; _ga=GA1.1." + g.Digits(9) + "." + g.Digits(10)}
	}},
	{"mysql-cli-password", "context", func(g *Gen) Secret {
		pw := strings.NewReplacer("'", "", " ", "").Replace(g.Password())
		return Secret{Kind: "mysql-cli-password", Value: pw, Command: g.Pick("mysql -h ", "mysqldump -h ") + g.Host() + " -u " + g.User() + " -p'" + pw + "' " + g.Pick("shop", "wordpress") + g.Pick("", " > backup.sql", " -e 'show tables'")}
	}},
	{"cli-password-flag", "context", func(g *Gen) Secret {
		pw := g.URLPassword()
		c := g.Pick("docker login registry.acme.io -u ci --password "+pw,
			"mongosh \"mongodb://db.internal:27017\" --username admin --password "+pw,
			"keytool -importkeystore -srckeystore app.p12 -srcstoretype PKCS12 -srcstorepass "+pw+" -destkeystore app.jks -deststorepass "+pw,
			"redis-cli -h cache.internal -a "+pw+" --no-auth-warning info",
			"helm repo add internal https://charts.acme.io --username ci --password "+pw,
			"openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:"+pw)
		return Secret{Kind: "cli-password-flag", Value: pw, Command: c}
	}},
	{"sshpass-password", "context", func(g *Gen) Secret {
		pw := strings.NewReplacer("'", "", " ", "").Replace(g.Password())
		return Secret{Kind: "sshpass-password", Value: pw, Command: "sshpass -p '" + pw + "' " + g.Pick("ssh -o StrictHostKeyChecking=no deploy@10.0.4.12 'sudo systemctl restart api'", "scp dist.tar.gz pi@192.168.1.50:/opt/app/", "rsync -avz ./build/ www@web-02:/var/www/")}
	}},
	{"terraform-sensitive-value", "context", func(g *Gen) Secret {
		pw := g.S(alnum+"!#$%&*()-_=+[]{}<>:?", 24)
		return Secret{Kind: "terraform-sensitive-value", Value: pw, Block: tfstateRandomPassword(g, pw), File: "terraform.tfstate", Lang: "json"}
	}},
	{"connection-string-password", "context", func(g *Gen) Secret {
		pw := strings.NewReplacer(";", "", "'", "", "\"", "").Replace(g.Password())
		cs := g.Pick("Server=tcp:"+g.Pick("acme-sql", "shopdb")+".database.windows.net,1433;Initial Catalog=orders;Persist Security Info=False;User ID="+g.User()+";Password="+pw+";MultipleActiveResultSets=False;Encrypt=True;",
			"Host="+g.Host()+";Port=5432;Database=app;Username="+g.User()+";Password="+pw+";SSL Mode=Require",
			"Driver={ODBC Driver 18 for SQL Server};Server=sql01;Database=erp;Uid="+g.User()+";Pwd="+pw+";")
		return Secret{Kind: "connection-string-password", Value: pw, Name: g.Pick("ConnectionStrings__Default", "DB_CONNECTION", "SQL_CONN"), Assign: cs}
	}},
}

func (g *Gen) jwt(claims map[string]any, alg string) string {
	h := map[string]string{"alg": alg, "typ": "JWT"}
	if alg != "HS256" {
		h["kid"] = g.S(url64, 22)
	}
	hb, _ := json.Marshal(h)
	cb, _ := json.Marshal(claims)
	sig := 43
	switch alg {
	case "RS256":
		sig = 342
	case "ES256":
		sig = 86
	}
	return b64raw(string(hb)) + "." + b64raw(string(cb)) + "." + g.S(url64, sig)
}

func kubeconfig(g *Gen, user string) string {
	cl := g.Pick("prod", "staging", "gke_acme-prod_europe-west1_main")
	return "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: " + b64s("-----BEGIN CERTIFICATE-----\n"+strings.Join(g.pemBody("MIIC/jCCAeagAwIBAgIBADANBgkqhkiG9w0BAQsFADAVMRMwEQYDVQQDEwprdWJlcm5ldGVz", 770), "\n")+"\n-----END CERTIFICATE-----\n") +
		"\n    server: https://" + g.Pick("10.0.0.1:6443", "api.k8s.acme.io:6443", "34.76.12.9") + "\n  name: " + cl +
		"\ncontexts:\n- context:\n    cluster: " + cl + "\n    user: " + cl + "-admin\n  name: " + cl + "\ncurrent-context: " + cl +
		"\nkind: Config\npreferences: {}\nusers:\n- name: " + cl + "-admin\n  user:\n" + user
}

func tfstateRandomPassword(g *Gen, pw string) string {
	return jsonIndent(map[string]any{
		"version": 4, "terraform_version": "1.9.8", "serial": g.N(3, 90), "lineage": g.UUID(), "outputs": map[string]any{},
		"resources": []any{map[string]any{"mode": "managed", "type": "random_password", "name": "db", "provider": `provider["registry.terraform.io/hashicorp/random"]`,
			"instances": []any{map[string]any{"schema_version": 3, "attributes": map[string]any{
				"bcrypt_hash": "$2a$10$" + g.S(alnum+"./", 53), "id": "none", "keepers": nil, "length": 24, "lower": true, "min_lower": 0,
				"min_numeric": 0, "min_special": 0, "min_upper": 0, "number": true, "numeric": true, "override_special": nil,
				"result": pw, "special": true, "upper": true},
				"sensitive_attributes": []any{[]any{map[string]string{"type": "get_attr", "value": "bcrypt_hash"}}, []any{map[string]string{"type": "get_attr", "value": "result"}}}}}}}})
}
