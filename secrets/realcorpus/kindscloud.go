package realcorpus

import (
	"encoding/json"
	"fmt"
	"strings"
)

// cloudKinds are the keys of cloud providers.
var cloudKinds = []Kind{
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
}

// hostingKinds are the tokens of source hosting and package registries.
var hostingKinds = []Kind{
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
}
