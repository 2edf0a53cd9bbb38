package holdout_test

import (
	"strconv"
	"strings"
)

// sec is one secret a case holds: its kind, its value, and other forms
// of it that must not stay readable either (a base64 of user:pass …).
type sec struct {
	kind  string
	value string
	forms []string
	lines bool // value is a key block: every body line counts
}

// tokKind is a secret with a value and the names it goes by.
type tokKind struct {
	id    string
	gen   func(r *rng) string
	names []string
}

func t(id string, gen func(r *rng) string, names ...string) tokKind {
	return tokKind{id, gen, names}
}

func jwtOf(r *rng, payload string) string {
	h := b64url(`{"alg":"HS256","typ":"JWT"}`)
	if r.chance(0.5) {
		h = b64url(`{"alg":"RS256","kid":"` + r.hex(16) + `","typ":"JWT"}`)
	}
	return h + "." + b64url(payload) + "." + r.s(b64u, 43)
}

var tokKinds = []tokKind{
	t("aws-access-key-id", func(r *rng) string { return r.pick("AKIA", "ASIA") + r.s(b32u, 16) }, "AWS_ACCESS_KEY_ID", "aws_access_key_id", "accessKeyId"),
	t("aws-secret-access-key", func(r *rng) string { return r.mixed(alnum+"+/", 40) }, "AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "secretAccessKey", "AWS_SECRET_KEY"),
	t("aws-session-token", func(r *rng) string { return "IQoJb3JpZ2luX2Vj" + r.s(b64c, r.between(300, 420)) + "==" }, "AWS_SESSION_TOKEN", "aws_session_token"),
	t("github-pat", func(r *rng) string { return "ghp_" + r.mixed(alnum, 36) }, "GITHUB_TOKEN", "GH_TOKEN", "github_token", "GITHUB_PAT"),
	t("github-fine-grained-pat", func(r *rng) string { return "github_pat_11" + r.mixed(upper+digits, 20) + "_" + r.mixed(alnum, 59) }, "GITHUB_TOKEN", "GH_PAT", "token"),
	t("github-app-token", func(r *rng) string { return r.pick("ghs_", "gho_", "ghu_", "ghr_") + r.mixed(alnum, 36) }, "GITHUB_TOKEN", "GH_OAUTH_TOKEN", "installation_token"),
	t("gitlab-pat", func(r *rng) string { return "glpat-" + r.mixed(alnum+"-_", 20) }, "GITLAB_TOKEN", "GL_TOKEN", "CI_PUSH_TOKEN", "private_token"),
	t("gitlab-runner-token", func(r *rng) string { return "glrt-" + r.mixed(alnum+"-_", 20) }, "RUNNER_TOKEN", "token"),
	t("slack-bot-token", func(r *rng) string {
		return "xoxb-" + r.digitsN(r.between(10, 13)) + "-" + r.digitsN(r.between(10, 13)) + "-" + r.mixed(alnum, 24)
	}, "SLACK_BOT_TOKEN", "SLACK_TOKEN", "slack_token"),
	t("slack-user-token", func(r *rng) string {
		return "xoxp-" + r.digitsN(11) + "-" + r.digitsN(11) + "-" + r.digitsN(13) + "-" + r.hex(32)
	}, "SLACK_USER_TOKEN", "SLACK_TOKEN"),
	t("slack-app-token", func(r *rng) string { return "xapp-1-A" + r.s(upper+digits, 10) + "-" + r.digitsN(13) + "-" + r.hex(64) }, "SLACK_APP_TOKEN"),
	t("slack-webhook", func(r *rng) string {
		return "https://hooks.slack.com/services/T" + r.s(upper+digits, 8) + "/B" + r.s(upper+digits, r.between(8, 10)) + "/" + r.mixed(alnum, 24)
	}, "SLACK_WEBHOOK_URL", "webhook_url", "SLACK_WEBHOOK"),
	t("discord-webhook", func(r *rng) string {
		return "https://discord.com/api/webhooks/" + r.digitsN(19) + "/" + r.mixed(b64u, 68)
	}, "DISCORD_WEBHOOK_URL", "discord_webhook"),
	t("discord-bot-token", func(r *rng) string {
		return strings.TrimRight(b64(r.digitsN(19)), "=") + "." + r.s(b64u, 6) + "." + r.mixed(b64u, 38)
	}, "DISCORD_TOKEN", "DISCORD_BOT_TOKEN", "BOT_TOKEN"),
	t("telegram-bot-token", func(r *rng) string { return r.digitsN(10) + ":AA" + r.mixed(b64u, 33) }, "TELEGRAM_BOT_TOKEN", "TG_TOKEN", "BOT_TOKEN"),
	t("stripe-secret-key", func(r *rng) string {
		if r.chance(0.6) {
			return r.pick("sk_live_", "rk_live_") + "51" + r.mixed(alnum, 97)
		}
		return r.pick("sk_live_", "rk_live_") + r.mixed(alnum, 24)
	}, "STRIPE_SECRET_KEY", "STRIPE_API_KEY", "stripe_key", "STRIPE_KEY"),
	t("stripe-webhook-secret", func(r *rng) string { return "whsec_" + r.mixed(alnum, 32) }, "STRIPE_WEBHOOK_SECRET", "webhook_secret", "endpointSecret"),
	t("twilio-api-key", func(r *rng) string { return "SK" + r.hex(32) }, "TWILIO_API_KEY", "TWILIO_API_KEY_SID"),
	t("twilio-auth-token", func(r *rng) string { return r.hex(32) }, "TWILIO_AUTH_TOKEN", "twilio_auth_token", "TWILIO_TOKEN"),
	t("sendgrid-api-key", func(r *rng) string { return "SG." + r.mixed(b64u, 22) + "." + r.mixed(b64u, 43) }, "SENDGRID_API_KEY", "SMTP_PASSWORD", "EMAIL_HOST_PASSWORD"),
	t("mailgun-api-key", func(r *rng) string {
		if r.chance(0.5) {
			return "key-" + r.hex(32)
		}
		return r.hex(32) + "-" + r.hex(8) + "-" + r.hex(8)
	}, "MAILGUN_API_KEY", "MAILGUN_KEY"),
	t("mailchimp-api-key", func(r *rng) string { return r.hex(32) + "-us" + strconv.Itoa(r.between(1, 21)) }, "MAILCHIMP_API_KEY", "MAILCHIMP_KEY"),
	t("brevo-api-key", func(r *rng) string { return "xkeysib-" + r.hex(64) + "-" + r.mixed(alnum, 16) }, "BREVO_API_KEY", "SENDINBLUE_API_KEY"),
	t("openai-api-key", func(r *rng) string {
		switch r.IntN(3) {
		case 0:
			return "sk-proj-" + r.mixed(b64u, 74) + "T3BlbkFJ" + r.mixed(b64u, 74)
		case 1:
			return "sk-svcacct-" + r.mixed(b64u, 74) + "T3BlbkFJ" + r.mixed(b64u, 74)
		}
		return "sk-" + r.mixed(alnum, 20) + "T3BlbkFJ" + r.mixed(alnum, 20)
	}, "OPENAI_API_KEY", "openai_api_key", "OPENAI_KEY", "api_key"),
	t("anthropic-api-key", func(r *rng) string {
		return "sk-ant-" + r.pick("api03-", "api03-", "admin01-") + r.mixed(b64u, 93) + "AA"
	}, "ANTHROPIC_API_KEY", "CLAUDE_API_KEY", "api_key"),
	t("huggingface-token", func(r *rng) string { return "hf_" + r.mixed(lower+upper, 34) }, "HF_TOKEN", "HUGGINGFACE_HUB_TOKEN", "HUGGING_FACE_HUB_TOKEN"),
	t("groq-api-key", func(r *rng) string { return "gsk_" + r.mixed(alnum, 52) }, "GROQ_API_KEY"),
	t("replicate-token", func(r *rng) string { return "r8_" + r.mixed(alnum, 37) }, "REPLICATE_API_TOKEN"),
	t("perplexity-api-key", func(r *rng) string { return "pplx-" + r.mixed(alnum, 48) }, "PERPLEXITY_API_KEY", "PPLX_API_KEY"),
	t("xai-api-key", func(r *rng) string { return "xai-" + r.mixed(alnum, 80) }, "XAI_API_KEY", "GROK_API_KEY"),
	t("langsmith-api-key", func(r *rng) string { return r.pick("lsv2_pt_", "lsv2_sk_") + r.hex(32) + "_" + r.hex(10) }, "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"),
	t("pinecone-api-key", func(r *rng) string { return "pcsk_" + r.mixed(alnum, 5) + "_" + r.mixed(alnum, 63) }, "PINECONE_API_KEY"),
	t("tavily-api-key", func(r *rng) string { return "tvly-" + r.pick("", "dev-", "prod-") + r.mixed(alnum, 32) }, "TAVILY_API_KEY"),
	t("cohere-api-key", func(r *rng) string { return r.mixed(alnum, 40) }, "COHERE_API_KEY", "CO_API_KEY"),
	t("mistral-api-key", func(r *rng) string { return r.mixed(alnum, 32) }, "MISTRAL_API_KEY"),
	t("google-api-key", func(r *rng) string { return "AIza" + r.mixed(b64u, 35) }, "GOOGLE_API_KEY", "GEMINI_API_KEY", "MAPS_API_KEY", "YOUTUBE_API_KEY"),
	t("google-oauth-client-secret", func(r *rng) string { return "GOCSPX-" + r.mixed(b64u, 28) }, "GOOGLE_CLIENT_SECRET", "client_secret"),
	t("google-oauth-token", func(r *rng) string {
		if r.chance(0.5) {
			return "ya29.a0" + r.mixed(b64u, 160)
		}
		return "1//0" + r.mixed(b64u, 99)
	}, "GOOGLE_ACCESS_TOKEN", "refresh_token", "access_token"),
	t("firebase-fcm-server-key", func(r *rng) string { return "AAAA" + r.mixed(b64u, 7) + ":APA91b" + r.mixed(b64u, 134) }, "FCM_SERVER_KEY", "FIREBASE_SERVER_KEY"),
	t("azure-ad-client-secret", func(r *rng) string { return r.s(alnum, 3) + r.s(digits, 1) + "Q~" + r.mixed(alnum+"_~.-", 34) }, "AZURE_CLIENT_SECRET", "ClientSecret", "client_secret"),
	t("azure-devops-pat", func(r *rng) string { return r.s(lower+"234567", 52) }, "AZURE_DEVOPS_PAT", "AZURE_DEVOPS_EXT_PAT", "ADO_PAT"),
	t("npm-token", func(r *rng) string { return "npm_" + r.mixed(alnum, 36) }, "NPM_TOKEN", "NODE_AUTH_TOKEN"),
	t("pypi-token", func(r *rng) string { return "pypi-AgEIcHlwaS5vcmc" + r.mixed(b64u, r.between(140, 180)) }, "PYPI_TOKEN", "TWINE_PASSWORD", "PYPI_API_TOKEN"),
	t("rubygems-api-key", func(r *rng) string { return "rubygems_" + r.hex(48) }, "GEM_HOST_API_KEY", "RUBYGEMS_API_KEY"),
	t("nuget-api-key", func(r *rng) string { return "oy2" + r.mixed(lower+digits, 43) }, "NUGET_API_KEY"),
	t("dockerhub-pat", func(r *rng) string { return "dckr_pat_" + r.mixed(b64u, 27) }, "DOCKERHUB_TOKEN", "DOCKER_PASSWORD", "REGISTRY_PASSWORD"),
	t("jfrog-token", func(r *rng) string {
		if r.chance(0.5) {
			return "AKCp8" + r.mixed(alnum, 68)
		}
		return "cmVmdGtuOjAxOj" + r.mixed(alnum, 50)
	}, "ARTIFACTORY_API_KEY", "JFROG_ACCESS_TOKEN", "ARTIFACTORY_PASSWORD"),
	t("terraform-cloud-token", func(r *rng) string { return r.mixed(alnum, 14) + ".atlasv1." + r.mixed(alnum, 67) }, "TFE_TOKEN", "TF_TOKEN_app_terraform_io", "token"),
	t("vault-token", func(r *rng) string {
		if r.chance(0.3) {
			return "hvs." + r.mixed(alnum, 24)
		}
		return "hvs.CAESI" + r.mixed(b64u, 86)
	}, "VAULT_TOKEN", "vault_token"),
	t("postman-api-key", func(r *rng) string { return "PMAK-" + r.hex(24) + "-" + r.hex(34) }, "POSTMAN_API_KEY"),
	t("shopify-token", func(r *rng) string { return r.pick("shpat_", "shpss_", "shpca_", "shppa_") + r.hex(32) }, "SHOPIFY_ACCESS_TOKEN", "SHOPIFY_API_SECRET"),
	t("square-token", func(r *rng) string {
		if r.chance(0.5) {
			return "EAAA" + r.mixed(b64u, 60)
		}
		return "sq0csp-" + r.mixed(b64u, 43)
	}, "SQUARE_ACCESS_TOKEN", "SQUARE_APPLICATION_SECRET"),
	t("braintree-token", func(r *rng) string { return "access_token$production$" + r.s(lower+digits, 16) + "$" + r.hex(32) }, "BRAINTREE_ACCESS_TOKEN"),
	t("paypal-client-secret", func(r *rng) string { return "E" + r.mixed(b64u, 79) }, "PAYPAL_CLIENT_SECRET", "PAYPAL_SECRET"),
	t("sentry-token", func(r *rng) string {
		if r.chance(0.5) {
			return "sntryu_" + r.hex(64)
		}
		js := `{"iat":` + r.digitsN(10) + `.` + r.s(digits, 6) + `,"url":"https://sentry.io","region_url":"https://us.sentry.io","org":"` + r.pick("acme", "widgets-inc", "foo") + `"}`
		return "sntrys_" + strings.TrimRight(b64(js), "=") + "_" + r.mixed(alnum+"+/", 43)
	}, "SENTRY_AUTH_TOKEN"),
	t("newrelic-key", func(r *rng) string { return r.pick("NRAK-", "NRII-") + r.mixed(upper+digits, 27) }, "NEW_RELIC_API_KEY", "NEW_RELIC_LICENSE_KEY"),
	t("grafana-token", func(r *rng) string {
		if r.chance(0.5) {
			return "glsa_" + r.mixed(alnum, 32) + "_" + r.hex(8)
		}
		return "glc_" + strings.TrimRight(b64(`{"o":"`+r.digitsN(6)+`","n":"stack-`+r.digitsN(6)+`-hm-read","k":"`+r.mixed(alnum, 24)+`","m":{"r":"prod-us-east-0"}}`), "=")
	}, "GRAFANA_API_KEY", "GRAFANA_SERVICE_ACCOUNT_TOKEN", "GRAFANA_CLOUD_TOKEN"),
	t("datadog-api-key", func(r *rng) string { return r.hex(32) }, "DD_API_KEY", "DATADOG_API_KEY"),
	t("datadog-app-key", func(r *rng) string { return r.hex(40) }, "DD_APP_KEY", "DATADOG_APP_KEY"),
	t("atlassian-api-token", func(r *rng) string { return "ATATT3xFfGF0" + r.mixed(b64u, 170) + "=" + strings.ToUpper(r.hex(8)) }, "JIRA_API_TOKEN", "ATLASSIAN_API_TOKEN", "CONFLUENCE_TOKEN"),
	t("linear-api-key", func(r *rng) string { return "lin_api_" + r.mixed(alnum, 40) }, "LINEAR_API_KEY"),
	t("notion-token", func(r *rng) string {
		if r.chance(0.5) {
			return "ntn_" + r.digitsN(11) + r.mixed(alnum, 35)
		}
		return "secret_" + r.mixed(alnum, 43)
	}, "NOTION_TOKEN", "NOTION_API_KEY"),
	t("airtable-pat", func(r *rng) string { return "pat" + r.mixed(alnum, 14) + "." + r.hex(64) }, "AIRTABLE_API_KEY", "AIRTABLE_TOKEN"),
	t("figma-token", func(r *rng) string { return "figd_" + r.mixed(b64u, 40) }, "FIGMA_TOKEN", "FIGMA_ACCESS_TOKEN"),
	t("dropbox-token", func(r *rng) string { return "sl.u." + r.mixed(b64u, 140) }, "DROPBOX_ACCESS_TOKEN"),
	t("supabase-token", func(r *rng) string {
		if r.chance(0.5) {
			return "sbp_" + r.hex(40)
		}
		return jwtOf(r, `{"iss":"supabase","ref":"`+r.s(lower, 20)+`","role":"service_role","iat":1710000000,"exp":2025000000}`)
	}, "SUPABASE_ACCESS_TOKEN", "SUPABASE_SERVICE_ROLE_KEY"),
	t("planetscale-token", func(r *rng) string { return r.pick("pscale_pw_", "pscale_tkn_") + r.mixed(b64u, 43) }, "PLANETSCALE_PASSWORD", "DATABASE_PASSWORD"),
	t("databricks-token", func(r *rng) string { return "dapi" + r.hex(32) + r.pick("", "-2", "-3") }, "DATABRICKS_TOKEN"),
	t("digitalocean-token", func(r *rng) string { return r.pick("dop_v1_", "doo_v1_") + r.hex(64) }, "DIGITALOCEAN_TOKEN", "DO_TOKEN"),
	t("cloudflare-api-token", func(r *rng) string { return r.mixed(b64u, 40) }, "CLOUDFLARE_API_TOKEN", "CF_API_TOKEN"),
	t("cloudflare-global-key", func(r *rng) string { return r.hex(37) }, "CLOUDFLARE_API_KEY", "CF_API_KEY"),
	t("heroku-api-key", func(r *rng) string {
		if r.chance(0.5) {
			return "HRKU-AA" + r.mixed(b64u, 58)
		}
		return r.uuid()
	}, "HEROKU_API_KEY"),
	t("alibaba-access-key", func(r *rng) string { return "LTAI" + r.mixed(alnum, 20) }, "ALIBABA_CLOUD_ACCESS_KEY_ID", "ALICLOUD_ACCESS_KEY"),
	t("alibaba-secret", func(r *rng) string { return r.mixed(alnum, 30) }, "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALICLOUD_SECRET_KEY"),
	t("age-secret-key", func(r *rng) string { return "AGE-SECRET-KEY-1" + r.s("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58) }, "SOPS_AGE_KEY", "AGE_KEY"),
	t("pulumi-token", func(r *rng) string { return "pul-" + r.hex(40) }, "PULUMI_ACCESS_TOKEN"),
	t("doppler-token", func(r *rng) string { return r.pick("dp.pt.", "dp.st.", "dp.st.prd.") + r.mixed(alnum, 43) }, "DOPPLER_TOKEN"),
	t("flyio-token", func(r *rng) string {
		if r.chance(0.5) {
			return "fo1_" + r.mixed(b64u, 43)
		}
		return "FlyV1 fm2_lJPECAAAAAAAA" + r.mixed(alnum+"+/", 180) + "=="
	}, "FLY_API_TOKEN"),
	t("jwt", func(r *rng) string {
		return jwtOf(r, `{"sub":"`+r.uuid()+`","email":"dev@`+r.pick("acme.io", "example.org")+`","role":"admin","iat":1719000000,"exp":1719086400}`)
	}, "JWT", "ACCESS_TOKEN", "AUTH_TOKEN", "id_token"),
	t("jwt-secret", func(r *rng) string { return r.mixed(alnum, r.pickInt(32, 48, 64)) }, "JWT_SECRET", "SECRET_KEY_BASE", "SESSION_SECRET", "APP_KEY", "DJANGO_SECRET_KEY", "NEXTAUTH_SECRET"),
	t("bitbucket-app-password", func(r *rng) string { return "ATBB" + r.mixed(alnum, 32) + strings.ToUpper(r.hex(8)) }, "BITBUCKET_APP_PASSWORD", "BITBUCKET_TOKEN"),
	t("circleci-token", func(r *rng) string { return "CCIPAT_" + r.mixed(alnum, 22) + "_" + r.hex(40) }, "CIRCLECI_TOKEN", "CIRCLE_TOKEN"),
	t("buildkite-token", func(r *rng) string { return "bkua_" + r.hex(40) }, "BUILDKITE_API_TOKEN"),
	t("okta-token", func(r *rng) string { return "00" + r.mixed(b64u, 40) }, "OKTA_API_TOKEN", "OKTA_CLIENT_TOKEN"),
	t("mapbox-secret-token", func(r *rng) string {
		return "sk." + strings.TrimRight(b64(`{"u":"`+r.pick("acme", "jdoe", "mapteam")+`","a":"`+r.s(lower+digits, 25)+`"}`), "=") + "." + r.mixed(b64u, 22)
	}, "MAPBOX_SECRET_TOKEN", "MAPBOX_DOWNLOADS_TOKEN"),
	t("contentful-token", func(r *rng) string { return "CFPAT-" + r.mixed(b64u, 43) }, "CONTENTFUL_MANAGEMENT_TOKEN"),
	t("generic-api-key", func(r *rng) string { return r.mixed(alnum, r.pickInt(24, 32, 40, 48)) }, "API_KEY", "SERVICE_API_KEY", "apiKey", "X_API_KEY", "PAYMENTS_API_SECRET", "CLIENT_SECRET", "ACME_TOKEN"),
}

var tokByID = func() map[string]tokKind {
	m := map[string]tokKind{}
	for _, k := range tokKinds {
		m[k.id] = k
	}
	return m
}()
