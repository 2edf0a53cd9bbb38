package realcorpus

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Secret is one synthetic secret and the ways it can be written down.
// Carriers choose among the ways: a carrier that writes NAME=value
// needs Name, one that sends a header needs Header, and so on.
type Secret struct {
	Kind string
	// Value is the secret itself; every line of it of 8 characters or
	// more must be gone once the message is redacted.
	Value string
	// Name is what a project calls it in its environment
	// (OPENAI_API_KEY), Assign what is assigned to that name: the value,
	// or a URL or connection string holding it.
	Name, Assign string
	// Header is an HTTP header line carrying it; Bearer marks a token
	// that can be sent as "Authorization: Bearer …".
	Header string
	Bearer bool
	// Command is a shell command carrying it.
	Command string
	// URL is a URL carrying it.
	URL string
	// Block is text in its own file's format, File that file's name and
	// Lang the fence language to show it with.
	Block, File, Lang string
	// Extra are more strings that must be gone: the base64 forms of the
	// value that its own format holds.
	Extra []string
	// B64 are the decoded values whose base64 must not survive
	// anywhere: a reader decodes what is left.
	B64 []string
}

// Kind is one kind of secret and how to make one.
type Kind struct {
	ID    string
	Group string
	Make  func(g *Gen) Secret
}

func named(kind, name, v string) Secret {
	return Secret{Kind: kind, Value: v, Name: name, Assign: v}
}

func token(kind, name, v string) Secret {
	s := named(kind, name, v)
	s.Bearer = true
	return s
}

func (s Secret) with(f func(*Secret)) Secret { f(&s); return s }

func jsonIndent(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// Kinds are every kind of secret the corpus holds.
var Kinds = []Kind{
	// Cloud providers.
	{"aws-access-key-id", "cloud", func(g *Gen) Secret {
		v := g.Pick("AKIA", "AKIA", "ASIA") + g.S(b32, 16)
		return named("aws-access-key-id", "AWS_ACCESS_KEY_ID", v)
	}},
	{"aws-secret-access-key", "cloud", func(g *Gen) Secret {
		v := g.S(b64, 40)
		id := "AKIA" + g.S(b32, 16)
		return named("aws-secret-access-key", "AWS_SECRET_ACCESS_KEY", v).with(func(s *Secret) {
			s.Block = "[default]\naws_access_key_id = " + id + "\naws_secret_access_key = " + v + "\nregion = " + g.Pick("eu-west-1", "us-east-1", "ap-southeast-2") + "\n"
			s.File, s.Lang = ".aws/credentials", "ini"
			s.Extra = []string{id}
		})
	}},
	{"aws-session-token", "cloud", func(g *Gen) Secret {
		v := g.Pick("IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdzE") + g.S(b64, g.N(600, 900))
		id, sk := "ASIA"+g.S(b32, 16), g.S(b64, 40)
		return named("aws-session-token", "AWS_SESSION_TOKEN", v).with(func(s *Secret) {
			s.Block = jsonIndent(map[string]any{"Credentials": map[string]string{"AccessKeyId": id, "SecretAccessKey": sk, "SessionToken": v, "Expiration": "2026-03-14T18:22:51+00:00"},
				"AssumedRoleUser": map[string]string{"AssumedRoleId": "AROA" + g.S(b32, 17) + ":ci", "Arn": "arn:aws:sts::" + g.S(digits, 12) + ":assumed-role/deploy/ci"}})
			s.File, s.Lang = "sts-assume-role.json", "json"
			s.Extra = []string{sk}
		})
	}},
	{"gcp-service-account-key", "cloud", func(g *Gen) Secret {
		key := g.PKCS8Key()
		proj := g.Pick("acme-prod", "northwind-data", "globex-ml", "shop-analytics") + "-" + g.S(digits, 6)
		sa := map[string]string{"type": "service_account", "project_id": proj, "private_key_id": g.S(hexLow, 40),
			"private_key": key + "\n", "client_email": g.Pick("deployer", "bq-reader", "ci") + "@" + proj + ".iam.gserviceaccount.com",
			"client_id": g.Digits(21), "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token",
			"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs", "universe_domain": "googleapis.com"}
		b, _ := json.Marshal(sa)
		return Secret{Kind: "gcp-service-account-key", Value: key, Name: "GOOGLE_CREDENTIALS", Assign: string(b),
			Block: jsonIndent(sa), File: proj + "-" + g.S(hexLow, 12) + ".json", Lang: "json"}
	}},
	{"google-api-key", "cloud", func(g *Gen) Secret {
		v := "AIza" + g.S(url64, 35)
		return named("google-api-key", g.Pick("GOOGLE_API_KEY", "GEMINI_API_KEY", "MAPS_API_KEY", "FIREBASE_API_KEY"), v).with(func(s *Secret) {
			s.URL = "https://maps.googleapis.com/maps/api/geocode/json?address=" + g.Pick("Rue+de+Rivoli", "Main+St", "Alexanderplatz") + "&key=" + v
			s.Header = "x-goog-api-key: " + v
		})
	}},
	{"google-oauth-client-secret", "cloud", func(g *Gen) Secret {
		v := "GOCSPX-" + g.S(url64, 28)
		id := g.Digits(12) + "-" + g.S(lowNum, 32) + ".apps.googleusercontent.com"
		return named("google-oauth-client-secret", "GOOGLE_CLIENT_SECRET", v).with(func(s *Secret) {
			s.Block = `{"web":{"client_id":"` + id + `","project_id":"` + g.Pick("acme-web", "shop-login") + `","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token","client_secret":"` + v + `","redirect_uris":["http://localhost:3000/api/auth/callback/google"]}}`
			s.File, s.Lang = "client_secret_"+id+".json", "json"
		})
	}},
	{"google-oauth-refresh-token", "cloud", func(g *Gen) Secret {
		v := "1//0" + g.S(url64, 99)
		return token("google-oauth-refresh-token", "GOOGLE_REFRESH_TOKEN", v).with(func(s *Secret) {
			s.Block = jsonIndent(map[string]any{"access_token": "ya29." + g.S(url64, 160), "expires_in": 3599, "refresh_token": v,
				"scope": "https://www.googleapis.com/auth/drive.readonly", "token_type": "Bearer"})
			s.File, s.Lang = "token.json", "json"
		})
	}},
	{"azure-storage-account-key", "cloud", func(g *Gen) Secret {
		v := g.S(b64, 86) + "=="
		acct := g.Pick("acmedata", "shopassets", "northwindlogs") + g.S(lowNum, 4)
		cs := "DefaultEndpointsProtocol=https;AccountName=" + acct + ";AccountKey=" + v + ";EndpointSuffix=core.windows.net"
		return Secret{Kind: "azure-storage-account-key", Value: v, Name: "AZURE_STORAGE_CONNECTION_STRING", Assign: cs,
			Command: "az storage blob list --account-name " + acct + " --account-key " + v + " -c backups -o table"}
	}},
	{"azure-sas-token", "cloud", func(g *Gen) Secret {
		v := g.S(alnum, g.N(40, 44)) + g.Pick("%3D", "%2B"+g.S(alnum, 3)+"%3D")
		acct := g.Pick("acmedata", "shopassets") + g.S(lowNum, 4)
		u := "https://" + acct + ".blob.core.windows.net/" + g.Pick("backups", "exports", "media") + "/" + g.Pick("db-2025-11-02.bak", "report.csv", "video.mp4") +
			"?sp=r&st=2025-11-02T08:00:00Z&se=2026-11-02T16:00:00Z&spr=https&sv=2022-11-02&sr=b&sig=" + v
		return Secret{Kind: "azure-sas-token", Value: v, Name: "BACKUP_SAS_URL", Assign: u, URL: u}
	}},
	{"azure-client-secret", "cloud", func(g *Gen) Secret {
		v := g.S(alnum, 3) + g.Pick("8Q~", "7Q~", "8Q~") + g.S(alnum+"_~.-", 34)
		return named("azure-client-secret", "AZURE_CLIENT_SECRET", v).with(func(s *Secret) {
			s.Command = "az login --service-principal -u " + g.UUID() + " -p " + v + " --tenant " + g.UUID()
		})
	}},
	{"digitalocean-token", "cloud", func(g *Gen) Secret {
		return token("digitalocean-token", "DIGITALOCEAN_TOKEN", g.Pick("dop_v1_", "dop_v1_", "doo_v1_")+g.S(hexLow, 64))
	}},
	{"cloudflare-api-token", "cloud", func(g *Gen) Secret {
		return token("cloudflare-api-token", "CLOUDFLARE_API_TOKEN", g.S(url64, 40))
	}},
	{"cloudflare-global-api-key", "cloud", func(g *Gen) Secret {
		v := g.S(hexLow, 37)
		return named("cloudflare-global-api-key", "CLOUDFLARE_API_KEY", v).with(func(s *Secret) { s.Header = "X-Auth-Key: " + v })
	}},
	{"heroku-api-key", "cloud", func(g *Gen) Secret {
		return token("heroku-api-key", "HEROKU_API_KEY", "HRKU-AA"+g.S(url64, 58))
	}},
	{"flyio-token", "cloud", func(g *Gen) Secret {
		v := "fm2_lJPE" + g.S(b64, g.N(280, 360)) + "==,fm2_lJPE" + g.S(b64, g.N(150, 200)) + "="
		return Secret{Kind: "flyio-token", Value: v, Name: "FLY_API_TOKEN", Assign: "FlyV1 " + v, Header: "Authorization: FlyV1 " + v}
	}},
	{"vercel-token", "cloud", func(g *Gen) Secret {
		return token("vercel-token", "VERCEL_TOKEN", g.S(alnum, 24)).with(func(s *Secret) {
			s.Command = "vercel deploy --prod --token " + s.Value
		})
	}},
	{"netlify-token", "cloud", func(g *Gen) Secret {
		r := g.S(alnum, 30)
		return token("netlify-token", "NETLIFY_AUTH_TOKEN", "nfp_"+r+crc62(r))
	}},
	{"supabase-access-token", "cloud", func(g *Gen) Secret {
		return token("supabase-access-token", "SUPABASE_ACCESS_TOKEN", "sbp_"+g.S(hexLow, 40))
	}},
	{"supabase-service-role-key", "cloud", func(g *Gen) Secret {
		ref := g.S(lower, 20)
		v := g.jwt(map[string]any{"iss": "supabase", "ref": ref, "role": "service_role", "iat": 1700000000 + g.N(0, 9e7), "exp": 2000000000 + g.N(0, 9e7)}, "HS256")
		return token("supabase-service-role-key", "SUPABASE_SERVICE_ROLE_KEY", v)
	}},
	{"databricks-token", "cloud", func(g *Gen) Secret {
		v := "dapi" + g.S(hexLow, 32)
		if g.Chance(0.3) {
			v += "-" + g.S("123", 1)
		}
		return token("databricks-token", "DATABRICKS_TOKEN", v)
	}},
	{"planetscale-password", "cloud", func(g *Gen) Secret {
		v := "pscale_pw_" + g.S(url64, 43)
		u := "mysql://" + g.S(lowNum, 12) + ":" + v + "@aws.connect.psdb.cloud/" + g.Pick("shop", "app") + "?sslaccept=strict"
		return Secret{Kind: "planetscale-password", Value: v, Name: "DATABASE_URL", Assign: u}
	}},
	{"planetscale-token", "cloud", func(g *Gen) Secret {
		return named("planetscale-token", "PLANETSCALE_SERVICE_TOKEN", "pscale_tkn_"+g.S(url64, 43))
	}},
	{"terraform-cloud-token", "cloud", func(g *Gen) Secret {
		v := g.S(alnum, 14) + ".atlasv1." + g.S(url64, 67)
		return token("terraform-cloud-token", "TF_TOKEN_app_terraform_io", v).with(func(s *Secret) {
			s.Block = jsonIndent(map[string]any{"credentials": map[string]any{"app.terraform.io": map[string]string{"token": v}}})
			s.File, s.Lang = ".terraform.d/credentials.tfrc.json", "json"
		})
	}},
	{"vault-token", "cloud", func(g *Gen) Secret {
		v := "hvs.CAESI" + g.S(url64, g.N(86, 100))
		if g.Chance(0.25) {
			v = "hvs." + g.S(alnum, 24)
		}
		return named("vault-token", "VAULT_TOKEN", v).with(func(s *Secret) { s.Header = "X-Vault-Token: " + v })
	}},
	{"doppler-token", "cloud", func(g *Gen) Secret {
		return token("doppler-token", "DOPPLER_TOKEN", g.Pick("dp.st.prd.", "dp.st.dev.", "dp.pt.", "dp.sa.")+g.S(alnum, 43))
	}},
	{"onepassword-service-account-token", "cloud", func(g *Gen) Secret {
		doc := map[string]any{"signInAddress": "my.1password.com", "userAuth": map[string]any{"method": "SRPg-4096", "alg": "PBES2g-HS256", "iterations": 650000, "salt": g.S(url64, 22)},
			"email": g.S(lowNum, 13) + "@1passwordserviceaccounts.com", "srpX": g.S(hexLow, 64),
			"muk":            map[string]string{"alg": "A256GCM", "ext": "true", "k": g.S(url64, 43), "key_ops": "decrypt", "kty": "oct", "kid": "mp"},
			"secretKey":      "A3-" + g.S(upNum, 6) + "-" + g.S(upNum, 6) + "-" + g.S(upNum, 5) + "-" + g.S(upNum, 5) + "-" + g.S(upNum, 5) + "-" + g.S(upNum, 5),
			"throttleSecret": map[string]string{"seed": g.S(hexLow, 64), "uuid": g.UUID()}, "deviceUuid": g.S(lowNum, 26)}
		b, _ := json.Marshal(doc)
		return named("onepassword-service-account-token", "OP_SERVICE_ACCOUNT_TOKEN", "ops_"+b64raw(string(b)))
	}},
	{"age-secret-key", "cloud", func(g *Gen) Secret {
		v := "AGE-SECRET-KEY-1" + g.S(bech32, 58)
		return named("age-secret-key", "SOPS_AGE_KEY", v).with(func(s *Secret) {
			s.Block = "# created: 2025-" + fmt.Sprintf("%02d-%02dT%02d:%02d:11Z", g.N(1, 12), g.N(1, 28), g.N(0, 23), g.N(0, 59)) + "\n# public key: age1" + strings.ToLower(g.S(bech32, 58)) + "\n" + v + "\n"
			s.File, s.Lang = "keys.txt", ""
		})
	}},
	{"wireguard-private-key", "cloud", func(g *Gen) Secret {
		v := g.S(b64, 43) + "="
		return Secret{Kind: "wireguard-private-key", Value: v, Name: "WG_PRIVATE_KEY", Assign: v, File: "/etc/wireguard/wg0.conf", Lang: "ini",
			Block: "[Interface]\nAddress = 10.8.0." + fmt.Sprint(g.N(2, 200)) + "/24\nListenPort = 51820\nPrivateKey = " + v + "\n\n[Peer]\nPublicKey = " + g.S(b64, 43) + "=\nAllowedIPs = 10.8.0.0/24\nEndpoint = vpn." + g.Pick("acme.io", "globex.com") + ":51820\nPersistentKeepalive = 25\n"}
	}},

	// Source hosting and package registries.
	{"github-pat", "code", func(g *Gen) Secret {
		r := g.S(alnum, 30)
		v := "ghp_" + r + crc62(r)
		return token("github-pat", g.Pick("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT"), v).with(func(s *Secret) {
			s.Header = "Authorization: token " + v
			s.URL = "https://" + g.Pick("x-access-token", "oauth2", "dana-ortiz") + ":" + v + "@github.com/" + g.Pick("acme", "northwind") + "/" + g.Pick("api", "infra", "web") + ".git"
		})
	}},
	{"github-fine-grained-pat", "code", func(g *Gen) Secret {
		return token("github-fine-grained-pat", "GH_TOKEN", "github_pat_11"+g.S(upNum, 20)+"_"+g.S(alnum, 59))
	}},
	{"github-oauth-token", "code", func(g *Gen) Secret {
		r := g.S(alnum, 30)
		v := "gho_" + r + crc62(r)
		return token("github-oauth-token", "GH_TOKEN", v).with(func(s *Secret) {
			s.Block = "github.com:\n    users:\n        " + g.Pick("dortiz", "lchen") + ":\n            oauth_token: " + v + "\n    git_protocol: https\n    oauth_token: " + v + "\n    user: " + g.Pick("dortiz", "lchen") + "\n"
			s.File, s.Lang = ".config/gh/hosts.yml", "yaml"
		})
	}},
	{"github-app-token", "code", func(g *Gen) Secret {
		r := g.S(alnum, 30)
		return token("github-app-token", "GITHUB_TOKEN", g.Pick("ghs_", "ghu_")+r+crc62(r))
	}},
	{"github-refresh-token", "code", func(g *Gen) Secret {
		return token("github-refresh-token", "GITHUB_REFRESH_TOKEN", "ghr_"+g.S(alnum, 76))
	}},
	{"gitlab-pat", "code", func(g *Gen) Secret {
		v := "glpat-" + g.S(url64, 20)
		if g.Chance(0.5) {
			v = "glpat-" + g.S(url64, g.N(27, 40)) + ".01." + g.S(lowNum, 7)
		}
		return named("gitlab-pat", "GITLAB_TOKEN", v).with(func(s *Secret) {
			s.Header = "PRIVATE-TOKEN: " + v
			s.URL = "https://oauth2:" + v + "@gitlab.com/" + g.Pick("acme", "northwind") + "/platform/" + g.Pick("deploy", "charts") + ".git"
		})
	}},
	{"gitlab-runner-token", "code", func(g *Gen) Secret {
		v := "glrt-" + g.S(url64, 20)
		if g.Chance(0.5) {
			v = "glrt-t" + g.S("123", 1) + "_" + g.S(url64, 27) + ".0w1" + g.S(lowNum, 6)
		}
		return named("gitlab-runner-token", "CI_RUNNER_TOKEN", v).with(func(s *Secret) {
			s.Block = "concurrent = 4\ncheck_interval = 0\n\n[[runners]]\n  name = \"" + g.Pick("build-01", "docker-runner") + "\"\n  url = \"https://gitlab.com\"\n  id = " + g.Digits(8) + "\n  token = \"" + v + "\"\n  executor = \"docker\"\n  [runners.docker]\n    image = \"alpine:3.20\"\n    privileged = false\n"
			s.File, s.Lang = "/etc/gitlab-runner/config.toml", "toml"
		})
	}},
	{"npm-token", "code", func(g *Gen) Secret {
		r := g.S(alnum, 30)
		v := "npm_" + r + crc62(r)
		return named("npm-token", "NPM_TOKEN", v).with(func(s *Secret) {
			s.Block = "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=" + v + "\nsave-exact=true\n"
			s.File, s.Lang = ".npmrc", "ini"
		})
	}},
	{"pypi-token", "code", func(g *Gen) Secret {
		v := "pypi-AgEIcHlwaS5vcmc" + g.S(url64, g.N(130, 190))
		return named("pypi-token", "TWINE_PASSWORD", v).with(func(s *Secret) {
			s.Block = "[distutils]\nindex-servers =\n    pypi\n\n[pypi]\nusername = __token__\npassword = " + v + "\n"
			s.File, s.Lang = ".pypirc", "ini"
			s.Command = "twine upload -u __token__ -p " + v + " dist/*"
		})
	}},
	{"rubygems-api-key", "code", func(g *Gen) Secret {
		v := "rubygems_" + g.S(hexLow, 48)
		return named("rubygems-api-key", "GEM_HOST_API_KEY", v).with(func(s *Secret) {
			s.Block = "---\n:rubygems_api_key: " + v + "\n"
			s.File, s.Lang = ".gem/credentials", "yaml"
		})
	}},
	{"dockerhub-pat", "code", func(g *Gen) Secret {
		v := "dckr_pat_" + g.S(url64, 27)
		return named("dockerhub-pat", "DOCKERHUB_TOKEN", v).with(func(s *Secret) {
			s.Command = "echo " + v + " | docker login -u " + g.Pick("acmeci", "dortiz") + " --password-stdin"
		})
	}},
	{"huggingface-token", "ai", func(g *Gen) Secret {
		v := "hf_" + g.S(upper+lower, 34)
		return token("huggingface-token", g.Pick("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"), v).with(func(s *Secret) {
			s.Command = "huggingface-cli login --token " + v + " --add-to-git-credential"
		})
	}},
	{"postman-api-key", "code", func(g *Gen) Secret {
		v := "PMAK-" + g.S(hexLow, 24) + "-" + g.S(hexLow, 34)
		return named("postman-api-key", "POSTMAN_API_KEY", v).with(func(s *Secret) { s.Header = "X-API-Key: " + v })
	}},

	// AI providers.
	{"openai-project-key", "ai", func(g *Gen) Secret {
		return token("openai-project-key", "OPENAI_API_KEY", "sk-proj-"+g.S(url64, 74)+"T3BlbkFJ"+g.S(url64, 74))
	}},
	{"openai-service-account-key", "ai", func(g *Gen) Secret {
		return token("openai-service-account-key", "OPENAI_API_KEY", "sk-svcacct-"+g.S(url64, 74)+"T3BlbkFJ"+g.S(url64, 74))
	}},
	{"openai-admin-key", "ai", func(g *Gen) Secret {
		return token("openai-admin-key", "OPENAI_ADMIN_KEY", "sk-admin-"+g.S(url64, 58)+"T3BlbkFJ"+g.S(url64, 58))
	}},
	{"anthropic-api-key", "ai", func(g *Gen) Secret {
		v := "sk-ant-api03-" + g.S(url64, 93) + "AA"
		return named("anthropic-api-key", "ANTHROPIC_API_KEY", v).with(func(s *Secret) { s.Header = "x-api-key: " + v })
	}},
	{"anthropic-admin-key", "ai", func(g *Gen) Secret {
		v := "sk-ant-admin01-" + g.S(url64, 93) + "AA"
		return named("anthropic-admin-key", "ANTHROPIC_ADMIN_KEY", v).with(func(s *Secret) { s.Header = "x-api-key: " + v })
	}},
	{"groq-api-key", "ai", func(g *Gen) Secret {
		return token("groq-api-key", "GROQ_API_KEY", "gsk_"+g.S(alnum, 20)+"WGdyb3FY"+g.S(alnum, 24))
	}},
	{"replicate-token", "ai", func(g *Gen) Secret {
		return token("replicate-token", "REPLICATE_API_TOKEN", "r8_"+g.S(alnum, 37))
	}},
	{"openrouter-key", "ai", func(g *Gen) Secret {
		return token("openrouter-key", "OPENROUTER_API_KEY", "sk-or-v1-"+g.S(hexLow, 64))
	}},
	{"perplexity-key", "ai", func(g *Gen) Secret {
		return token("perplexity-key", "PERPLEXITY_API_KEY", "pplx-"+g.S(alnum, 48))
	}},
	{"xai-key", "ai", func(g *Gen) Secret {
		return token("xai-key", "XAI_API_KEY", "xai-"+g.S(alnum, 80))
	}},
	{"langsmith-key", "ai", func(g *Gen) Secret {
		return named("langsmith-key", g.Pick("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"), g.Pick("lsv2_pt_", "lsv2_sk_")+g.S(hexLow, 32)+"_"+g.S(hexLow, 10))
	}},
	{"pinecone-key", "ai", func(g *Gen) Secret {
		v := "pcsk_" + g.S(alnum, g.N(5, 6)) + "_" + g.S(alnum, 63)
		return named("pinecone-key", "PINECONE_API_KEY", v).with(func(s *Secret) { s.Header = "Api-Key: " + v })
	}},
	{"tavily-key", "ai", func(g *Gen) Secret {
		return token("tavily-key", "TAVILY_API_KEY", g.Pick("tvly-", "tvly-dev-", "tvly-prod-")+g.S(alnum, 32))
	}},

	// Messaging, payments and SaaS.
	{"slack-bot-token", "saas", func(g *Gen) Secret {
		return token("slack-bot-token", "SLACK_BOT_TOKEN", "xoxb-"+g.Digits(g.N(11, 13))+"-"+g.Digits(13)+"-"+g.S(alnum, 24))
	}},
	{"slack-user-token", "saas", func(g *Gen) Secret {
		return token("slack-user-token", "SLACK_USER_TOKEN", "xoxp-"+g.Digits(g.N(11, 12))+"-"+g.Digits(g.N(11, 13))+"-"+g.Digits(13)+"-"+g.S(hexLow, 32))
	}},
	{"slack-app-token", "saas", func(g *Gen) Secret {
		return token("slack-app-token", "SLACK_APP_TOKEN", "xapp-1-A"+g.S(upNum, 10)+"-"+g.Digits(13)+"-"+g.S(hexLow, 64))
	}},
	{"slack-webhook", "saas", func(g *Gen) Secret {
		u := "https://hooks.slack.com/services/T" + g.S(upNum, g.N(8, 10)) + "/B" + g.S(upNum, g.N(8, 10)) + "/" + g.S(alnum, 24)
		return Secret{Kind: "slack-webhook", Value: u[len("https://"):], Name: "SLACK_WEBHOOK_URL", Assign: u, URL: u}
	}},
	{"discord-bot-token", "saas", func(g *Gen) Secret {
		v := b64raw(g.Digits(18)) + "." + g.S(url64, 6) + "." + g.S(url64, 38)
		return named("discord-bot-token", "DISCORD_TOKEN", v).with(func(s *Secret) { s.Header = "Authorization: Bot " + v })
	}},
	{"discord-webhook", "saas", func(g *Gen) Secret {
		u := "https://" + g.Pick("discord.com", "discordapp.com") + "/api/webhooks/" + g.Digits(19) + "/" + g.S(url64, 68)
		return Secret{Kind: "discord-webhook", Value: u[strings.Index(u, "/api/"):], Name: "DISCORD_WEBHOOK_URL", Assign: u, URL: u}
	}},
	{"teams-webhook", "saas", func(g *Gen) Secret {
		u := "https://" + g.Pick("acme", "northwind") + ".webhook.office.com/webhookb2/" + g.UUID() + "@" + g.UUID() + "/IncomingWebhook/" + g.S(hexLow, 32) + "/" + g.UUID() + "/V2" + g.S(url64, 40)
		return Secret{Kind: "teams-webhook", Value: u[strings.Index(u, "/webhookb2/"):], Name: "TEAMS_WEBHOOK_URL", Assign: u, URL: u}
	}},
	{"telegram-bot-token", "saas", func(g *Gen) Secret {
		v := g.Digits(g.N(9, 10)) + ":AA" + g.S(url64, 33)
		return named("telegram-bot-token", "TELEGRAM_BOT_TOKEN", v).with(func(s *Secret) {
			s.URL = "https://api.telegram.org/bot" + v + "/sendMessage?chat_id=-100" + g.Digits(10) + "&text=deploy+done"
		})
	}},
	{"stripe-secret-key", "saas", func(g *Gen) Secret {
		v := "sk_live_" + g.S(alnum, 24)
		if g.Chance(0.6) {
			v = "sk_live_51" + g.S(alnum, 97)
		}
		return token("stripe-secret-key", "STRIPE_SECRET_KEY", v).with(func(s *Secret) {
			s.Command = "curl https://api.stripe.com/v1/charges -u " + v + ": -d amount=2000 -d currency=eur"
		})
	}},
	{"stripe-restricted-key", "saas", func(g *Gen) Secret {
		return token("stripe-restricted-key", "STRIPE_API_KEY", "rk_live_51"+g.S(alnum, 97))
	}},
	{"stripe-webhook-secret", "saas", func(g *Gen) Secret {
		return named("stripe-webhook-secret", "STRIPE_WEBHOOK_SECRET", "whsec_"+g.S(alnum, 32))
	}},
	{"square-access-token", "saas", func(g *Gen) Secret {
		return token("square-access-token", "SQUARE_ACCESS_TOKEN", "EAAA"+g.S(url64, 60))
	}},
	{"shopify-access-token", "saas", func(g *Gen) Secret {
		v := g.Pick("shpat_", "shpca_", "shppa_") + g.S(hexLow, 32)
		return named("shopify-access-token", "SHOPIFY_ACCESS_TOKEN", v).with(func(s *Secret) { s.Header = "X-Shopify-Access-Token: " + v })
	}},
	{"twilio-api-key", "saas", func(g *Gen) Secret {
		return named("twilio-api-key", "TWILIO_API_KEY", "SK"+g.S(hexLow, 32))
	}},
	{"twilio-auth-token", "saas", func(g *Gen) Secret {
		v := g.S(hexLow, 32)
		sid := "AC" + g.S(hexLow, 32)
		return named("twilio-auth-token", "TWILIO_AUTH_TOKEN", v).with(func(s *Secret) {
			s.Command = "curl -X POST https://api.twilio.com/2010-04-01/Accounts/" + sid + "/Messages.json -u " + sid + ":" + v + " --data-urlencode 'Body=Your code is 4417'"
		})
	}},
	{"sendgrid-api-key", "saas", func(g *Gen) Secret {
		return token("sendgrid-api-key", "SENDGRID_API_KEY", "SG."+g.S(url64, 22)+"."+g.S(url64, 43))
	}},
	{"mailgun-api-key", "saas", func(g *Gen) Secret {
		v := "key-" + g.S(hexLow, 32)
		if g.Chance(0.4) {
			v = g.S(hexLow, 32) + "-" + g.S(hexLow, 8) + "-" + g.S(hexLow, 8)
		}
		return named("mailgun-api-key", "MAILGUN_API_KEY", v).with(func(s *Secret) {
			s.Command = "curl -s --user 'api:" + v + "' https://api.mailgun.net/v3/mg.acme.io/messages -F from=noreply@acme.io -F to=ops@acme.io -F subject=hi -F text=ok"
		})
	}},
	{"mailchimp-api-key", "saas", func(g *Gen) Secret {
		return named("mailchimp-api-key", "MAILCHIMP_API_KEY", g.S(hexLow, 32)+"-us"+fmt.Sprint(g.N(1, 21)))
	}},
	{"datadog-api-key", "saas", func(g *Gen) Secret {
		v := g.S(hexLow, 32)
		return named("datadog-api-key", "DD_API_KEY", v).with(func(s *Secret) { s.Header = "DD-API-KEY: " + v })
	}},
	{"datadog-app-key", "saas", func(g *Gen) Secret {
		v := g.S(hexLow, 40)
		return named("datadog-app-key", "DD_APP_KEY", v).with(func(s *Secret) { s.Header = "DD-APPLICATION-KEY: " + v })
	}},
	{"newrelic-user-key", "saas", func(g *Gen) Secret {
		v := "NRAK-" + g.S(upNum, 27)
		return named("newrelic-user-key", "NEW_RELIC_API_KEY", v).with(func(s *Secret) { s.Header = "API-Key: " + v })
	}},
	{"newrelic-license-key", "saas", func(g *Gen) Secret {
		return named("newrelic-license-key", "NEW_RELIC_LICENSE_KEY", g.S(hexLow, 36)+"NRAL")
	}},
	{"sentry-auth-token", "saas", func(g *Gen) Secret {
		v := "sntryu_" + g.S(hexLow, 64)
		if g.Chance(0.5) {
			p := fmt.Sprintf(`{"iat":%d.%06d,"url":"https://sentry.io","region_url":"https://%s.sentry.io","org":"%s"}`, 1700000000+g.N(0, 9e7), g.N(0, 999999), g.Pick("us", "de"), g.Pick("acme", "northwind", "globex"))
			v = "sntrys_" + strings.TrimRight(b64s(p), "=") + "_" + g.S(b64, 43)
		}
		return token("sentry-auth-token", "SENTRY_AUTH_TOKEN", v)
	}},
	{"linear-api-key", "saas", func(g *Gen) Secret {
		v := "lin_api_" + g.S(alnum, 40)
		return named("linear-api-key", "LINEAR_API_KEY", v).with(func(s *Secret) { s.Header = "Authorization: " + v })
	}},
	{"notion-token", "saas", func(g *Gen) Secret {
		v := "ntn_" + g.Digits(11) + g.S(alnum, 35)
		if g.Chance(0.3) {
			v = "secret_" + g.S(alnum, 43)
		}
		return token("notion-token", "NOTION_TOKEN", v)
	}},
	{"atlassian-api-token", "saas", func(g *Gen) Secret {
		v := "ATATT3xFfGF0" + g.S(url64, 170) + "=" + g.S(hexUp, 8)
		user := g.email()
		return named("atlassian-api-token", "JIRA_API_TOKEN", v).with(func(s *Secret) {
			s.Header = "Authorization: Basic " + b64s(user+":"+v)
			s.Extra = []string{b64s(user + ":" + v)}
			s.B64 = []string{v}
		})
	}},
	{"grafana-token", "saas", func(g *Gen) Secret {
		v := "glsa_" + g.S(alnum, 32) + "_" + g.S(hexLow, 8)
		if g.Chance(0.4) {
			v = "glc_" + strings.TrimRight(b64s(fmt.Sprintf(`{"o":"%d","n":"stack-%d-hm-read-%s","k":"%s","m":{"r":"prod-%s"}}`, g.N(100000, 999999), g.N(100000, 999999), g.Pick("ci", "agent"), g.S(alnum, 24), g.Pick("eu-west-0", "us-central-0"))), "=")
		}
		return token("grafana-token", "GRAFANA_TOKEN", v)
	}},

	// Generic credentials: JWTs and private keys.
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

	// Passwords and tokens named by their context.
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
