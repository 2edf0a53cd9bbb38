package realcorpus

import (
	"fmt"
	"strings"
)

// aiKinds are the keys of AI providers.
var aiKinds = []Kind{
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
}

// saasKinds are the keys of messaging, payments and SaaS services.
var saasKinds = []Kind{
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
}
