package secrets_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/secrets"
)

// A value named as a known service's that holds a character none of
// the service's keys can hold is no key of that service; the same
// value under a name that says no service, or under a password's name,
// is still a secret, and a value that fits the service's format is
// still its key. A long random key with one stray byte is a key
// altered under any name but a password's.
func TestServiceFormats(t *testing.T) {
	d := secrets.Default()
	notFlagged(t, d, []string{
		// Keys of services whose keys are letters and digits, with a
		// character no key of theirs holds.
		`adobe_key = "q8Wm#3vRkT9zL!x2bN7pD4hY6c5f1g0j"`,
		"[DEBUG] Using airbrake Key=Zq8mN3kL9x**2vB7wR4y$UqH7vL2mZ9x",
		"zendesk token - 'Hq3vW8mLz2?Tk9vQ2mLxNq3vW8mLz2xTk9vQ2mLx'",
		`twilioToken := "Nq3vW8mLz2xT?9vQ2mLxNq3vW8mLz2x"`,
		// A form's CSRF token, a test's token that is said not to
		// match, a shell's variable given to curl --user.
		`<input type="hidden" name="authenticity_token" value="Zq8mN3kL9xT2vB7wR4yUqH7vL2mZ9xR4-Hq3vW8mLz2xTk9vQ2mLx_A" />`,
		`nonMatchingToken := "q7wv2k9hrzxmb4tkl3aj8o1i"`,
		// A word that ends like a key's prefix starts no key.
		"id: task_test_h7jtek9hrzwmbmtklmaj4o1i2gibya",
		`curl -sL --user "$DEPLOY_USER:$DEPLOY_PASSWORD" "$REGISTRY_URL"`,
		// Sentry's organization tokens carry base64 of JSON, and a user
		// token is 64 hex digits exactly; words where a Slack token's
		// secret goes.
		"sntrys_Zq8mN3kL9xT2vB7wR4yUqH7vL2mZ9xR4Hq3vW8mLz2xTk9vQ2mLxNq3vW8mLz2xTk9vQ2mLxaB",
		"sntryu_4d21f07ea419be0c2a2a7986f9b8fb3932adbfd9ebde7fa957c0c30aa1f7ee1e5",
		"xoxe.xoxp-1-SlackAppConfigurationRefreshTokenHere",
		// A long random key of one alphabet with one byte out of it,
		// under any name but a password's: a key altered, not one a
		// person chose.
		"token - 'Hq3vW8mLz2?Tk9vQ2mLxNq3vW8mLz2xTk9vQ2mLx'",
		`secret: "BXIMbhBlC3=5hIbqCEKvq7op!V2ZfO0XWbcnasZmPm/AJfQqdcnt/+2Ytxc1hDq1m/"`,
		// A key of the one length its service's format fixes, with a
		// letter or two out of its alphabet: a K in hex digits.
		`api2cart_key = "4f9a1c0e7b3d8e2f6a5c1d9b0e7fK3a2"`,
		"kucoin key = 'Z19c2539c5e367c7260a5c04'",
		"twilio token - 'SK_9f3a7c1e5b8d2f6a0c4e9b1d7f3a5c8'",
		// A URL's host names the service of its query's key.
		`curl "https://api.bscscan.com/api?module=stats&apikey=K3P9QW7XZ2M4B8N6$V1C5R0T2Y7U3I9O4P6^"`,
		// A JSON Web Token's shape whose header is no JSON.
		`apiKey := "eyJhbGciQiJIUzI1NiIsInR5cCI6IkpXVCJ9.c3j27xdcg2lMLzgeonyLGcTJFiz4soCmZ9cpvnpKnA1hEDCM4PmBxdUcl1MhOoSf.khfLW-Djd2dY5-eY4k-JmGs9RN4209yNJ4UyjB2Kmjo"`,
		// A Terraform Cloud token (14, .atlasv1., 67) with a ? in it:
		// its format's dots are dots, not any byte.
		"terraformcloudpersonaltoken = 'U8JZpDE0iGXlD6.atlasv1.gNCFbaEPFjbD0kH8Oool8DklZDOCj2?SaJiHkTj0rLGlkoMXGjtEkDnNfribxUdl7dX'",
	})
	redactsAll(t, d, []textSecret{
		// The same values under names that say no service.
		{`api_key = "q8Wm#3vRkT9zL!x2bN7pD4hY6c5f1g0j"`, "q8Wm#3vRkT9zL!x2bN7pD4hY6c5f1g0j"},
		// The same under a URL of no known service's host.
		{`curl "https://api.acme-billing.io/api?module=stats&apikey=K3P9QW7XZ2M4B8N6$V1C5R0T2Y7U3I9O4P6^"`, "K3P9QW7XZ2M4B8N6$V1C5R0T2Y7U3I9O4P6^"},
		// A person's secret with a symbol in it, long or not.
		{`JWT_SECRET="my-jwt-secret-for-production-use-only!"`, "my-jwt-secret-for-production-use-only!"},
		{"token - 'Hq3vW8mLz2?Tk9vQ2m'", "Hq3vW8mLz2?Tk9vQ2m"},
		{`client_secret = "Xq7#Lm2Rz9Tk4$Wp8!Vn3"`, "Xq7#Lm2Rz9Tk4$Wp8!Vn3"},
		// A password under a service's name: people choose them.
		{`adobe_password = "q8Wm#3vRkT9zL!x2bN7pD4h"`, "q8Wm#3vRkT9zL!x2bN7pD4h"},
		// Keys that fit their service's format.
		{`adobe_key = "q8wm3vrkt9zlx2bn7pd4hy6c5f1g0j3e"`, "q8wm3vrkt9zlx2bn7pd4hy6c5f1g0j3e"},
		{"zendesk token - 'Hq3vW8mLz2xTk9vQ2mLxNq3vW8mLz2xTk9vQ2mLx'", "Hq3vW8mLz2xTk9vQ2mLxNq3vW8mLz2xTk9vQ2mLx"},
		// Of the length, with a separator the format lacks, or many
		// letters out of it: another kind of the service's credential.
		{`fastly_token = "b7kq2mz9x=w4_r8t3n-6p1vls5hd0cj"`, "b7kq2mz9x=w4_r8t3n-6p1vls5hd0cj"},
		{`api2cart_key = "4f9a1c0e7b3d8e2f6a5c1d9b0e7fK3a2zz"`, "4f9a1c0e7b3d8e2f6a5c1d9b0e7fK3a2zz"},
		// A JSON Web Token whose header is JSON, under the same name.
		{`apiKey := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzdmMtcmVwb3J0aW5nIiwiaWF0IjoxNzY0MjAxNjAwLCJzY29wZSI6InJlYWQ6cmVwb3J0cyJ9.khfLW-Djd2dY5-eY4k-JmGs9RN4209yNJ4UyjB2Kmjo"`, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzdmMtcmVwb3J0aW5nIiwiaWF0IjoxNzY0MjAxNjAwLCJzY29wZSI6InJlYWQ6cmVwb3J0cyJ9.khfLW-Djd2dY5-eY4k-JmGs9RN4209yNJ4UyjB2Kmjo"},
		// Kinds of a service's keys its known formats do not hold (an
		// Asana client secret is not the token TruffleHog knows).
		{`asana_client_secret = "c3k8umqbpebsm2fp9cojk67o310mjiut"`, "c3k8umqbpebsm2fp9cojk67o310mjiut"},
		{"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", "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"},
	})
}

// Values of examples and tests that read as secrets and are none: a
// time UUID, a field's type and options, a test's words, a short word
// and a count, keys cut short of their provider's format, and the keys
// the Kubernetes project publishes in its examples.
func TestExamplesAreNotSecrets(t *testing.T) {
	d := secrets.Default()
	notFlagged(t, d, []string{
		`token: "7488a646-e31f-11e4-aace-600308960662",`,
		"mix phx.gen.schema Accounts.Superhero superheroes secret_identity:redact password:string:redact",
		`"password" => "too short",`,
		`apiKey := "API-1234"`,
		"SPECTRAL_TOKEN=spu-1234",
		// Letters and digits counting up in turn: a stand-in.
		"twitch_access_token = '1a2b3c4d'",
		`client_secret = "a1b2c3d4e5f6g7h8"`,
		"pcsk_abcd_5qU9s3iLVFmaSaJtMat7gTHaT9fXa7ykiBk7iz4uUMuLGLemkdutTgwJevYhqtn",
		"OPENAI_ADMIN_KEY=sk-admin-JWARXiHjpLXSh6W_0pFGb3sW7yr0cKheXXtWGMY0Q8kbBNqsxLskJy0LCOABCDEFGHgTJWgjMvdi6YlPvdXRq",
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: ceph-secret\nstringData:\n  key: QVFCMTZWMVZvRjVtRXhBQTVrQ1FzN2JCajhWVUxSdzI2Qzg0SEE9PQ==  # base64 of what ceph auth get-key prints\n",
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: azure-secret\ntype: Opaque\ndata:\n  azurestorageaccountname: azhzdGVzdA==\n",
	})
	redactsAll(t, d, []textSecret{
		// A random UUID under a token's name, a key of the formats,
		// a password of a word and a count, a Secret's own key.
		{`token: "5f0c7a2e-9b4d-4c1e-8a3f-2d6b9e1c4a7f",`, "5f0c7a2e-9b4d-4c1e-8a3f-2d6b9e1c4a7f"},
		{"pcsk_T5Afk6_5qU9s3iLVFmaSaJtMat7gTHaT9fXa7ykiBk7iz4uUMuLGLemkdutTgwJevYhqtn", "pcsk_T5Afk6_5qU9s3iLVFmaSaJtMat7gTHaT9fXa7ykiBk7iz4uUMuLGLemkdutTgwJevYhqtn"},
		{"postgres://alice:Hollow123@db.internal:5432/app", "Hollow123"},
		{`client_secret = "1a2b3c4dQm7xR9vT4wZ8pLk2"`, "1a2b3c4dQm7xR9vT4wZ8pLk2"},
		{"apiVersion: v1\nkind: Secret\nmetadata:\n  name: ceph-secret\nstringData:\n  key: QVFEa3pQcFh2TjJtTEE5cVJ3N3pUazNZdkJuOEhwMmNYcjRtV0E9PQ==  # ceph auth get-key\n", "QVFEa3pQcFh2TjJtTEE5cVJ3N3pUazNZdkJuOEhwMmNYcjRtV0E9PQ=="},
	})
}

// A value between tags on a line of its own in a diff's added lines or
// in a short file read with line numbers and kept as a JSON string, and
// base64 on a diff's added line, are found as they are elsewhere.
func TestCarriedLines(t *testing.T) {
	d := secrets.Default()
	for _, c := range []struct{ text, secret string }{
		{"\"     1→<apiToken>\\n     2→    Nq3vW8mLz2xTk9vQ2mLx\\n     3→</apiToken>\\n\"", "Nq3vW8mLz2xTk9vQ2mLx"},
		{"+<apiToken>\n+    Nq3vW8mLz2xTk9vQ2mLx\n+</apiToken>\n", "Nq3vW8mLz2xTk9vQ2mLx"},
		// Sourcegraph's hex in capitals too.
		{"SRC_ACCESS_TOKEN is sgp_4Fa9B3c7D1e8A2b6C0d5E9f3A7b1C4d8E2f6A0b9 now", "sgp_4Fa9B3c7D1e8A2b6C0d5E9f3A7b1C4d8E2f6A0b9"},
		{"+ZXlKaGJHY2lPaUpJVXpJMU5pSXNJblI1Y0NJNklrcFhWQ0o5LmV5SnpkV0lpT2lKa1pYQnNiM2tpTENKcFlYUWlPakUzTURBd01EQXdNREI5LlFtOXZkSE4wY21Gd1MyVjVPVGd6TWpjME5qVTRNak5yWkdwbQ==\n", "ZXlKaGJHY2lPaUpJVXpJMU5pSXNJblI1Y0NJNklrcFhWQ0o5LmV5SnpkV0lpT2lKa1pYQnNiM2tpTENKcFlYUWlPakUzTURBd01EQXdNREI5LlFtOXZkSE4wY21Gd1MyVjVPVGd6TWpjME5qVTRNak5yWkdwbQ=="},
	} {
		red, _ := d.Redact(c.text)
		if strings.Contains(red, c.secret[:20]) {
			t.Errorf("%q: %q left in %q", c.text, c.secret, red)
		}
	}
}
