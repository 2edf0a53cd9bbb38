package secrets_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/secrets"
)

// The anchors' true positives the detector missed, as agents carry
// them: keys of no shape of their own right after their service's name,
// the formats gitleaks knows of Sidekiq, Sumo Logic, Flutterwave and
// Slack's legacy tokens, curl's user:password over a continued line,
// quoted or with an e-mail address, and a setting's line in a file
// read with line numbers or in an XML element's text. Each must be
// gone once redacted.
func TestAnchorsMissesFound(t *testing.T) {
	d := secrets.Default()
	for _, c := range []struct{ text, secret string }{
		// A service's name, then its key.
		{"cloze: 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d / testuser1005@example.com", "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d"},
		{"kanban '11XQ98FVS8WI' kanban 'tn1vjduk6fjhoqscmqx9hpa.kanbantool.com'", "11XQ98FVS8WI"},
		{"  <id>{agora 3devtbiys8b282kidr9u78kjq8xdtlo1}</id>", "3devtbiys8b282kidr9u78kjq8xdtlo1"},
		{"  <id>{apideck id J6rYP2lzThxp9JeGg74TDgAXvfQsvzonsHpYHDsG}</id>", "J6rYP2lzThxp9JeGg74TDgAXvfQsvzonsHpYHDsG"},
		{"\tapiMetrics := \"5po8TFGawiYNCc1ct4ofWkBqzIfA6IeO\"", "5po8TFGawiYNCc1ct4ofWkBqzIfA6IeO"},
		{"liveagent 'S1vAf8FVzS8g52avAG78sANc01XaHWIx' 'https://eg-te.ladesk.com'", "S1vAf8FVzS8g52avAG78sANc01XaHWIx"},
		// gitleaks' formats.
		{"export BUNDLE_ENTERPRISE__CONTRIBSYS__COM=cafeb4b3:d3adb33f", "cafeb4b3:d3adb33f"},
		{"https://cafeb4b3:d3adb33f@enterprise.contribsys.com/", "cafeb4b3"},
		{`SUMO_ACCESS_ID = "suGyI5imvADdvU"`, "suGyI5imvADdvU"},
		{`flutterwavePubKey = "FLWPUBK_TEST-9e790af3aacb5909b2512e49082f0dd2-X"`, "FLWPUBK_TEST-9e790af3aacb5909b2512e49082f0dd2-X"},
		{`"access_token1": "xoxa-0-r3m2yu4m6qzd"`, "xoxa-0-r3m2yu4m6qzd"},
		{`"refresh_token2": "xoxr-7dphuhpqgwyv"`, "xoxr-7dphuhpqgwyv"},
		// curl's user:password.
		{"sh-5.0$ curl -k -X POST https://infinispan:11222/rest/v2/caches/default/hello \\\n  -H 'Content-type: text/plain' \\\n  -u developer:yqDVtkqPECriaLRi", "yqDVtkqPECriaLRi"},
		{"curl --user kevin:'pRf7vG2h1L8nQkW9' -iX PATCH", "pRf7vG2h1L8nQkW9"},
		{"curl --user roger23@gmail.com:pQ9wTxu4Fg https://www.dropbox.com/cli_link -v", "pQ9wTxu4Fg"},
		{`curl -u ":d2LkV78zLx!t" https://localhost:9200`, "d2LkV78zLx!t"},
		// A setting's line as a numbered read and a Jenkins job show it.
		{"     1→jiraToken = 0gyj8yci9xbb45po1nzqfa16\n", "0gyj8yci9xbb45po1nzqfa16"},
		{"      <command>jiraToken = 0gyj8yci9xbb45po1nzqfa16</command>", "0gyj8yci9xbb45po1nzqfa16"},
	} {
		red, n := d.Redact(c.text)
		if n == 0 || strings.Contains(red, c.secret) {
			t.Errorf("%q: %q left: %q", c.text, c.secret, red)
		}
	}
}

// A service's name before a value that is no key of its: a version, a
// path, a word, a commit, a package's coordinate. None may be flagged.
func TestServiceNamesBeforeCleanValues(t *testing.T) {
	d := secrets.Default()
	notFlagged(t, d, []string{
		"github: 9fceb02d0ae598e95dc970b74767f19372d61af8",
		"github.sha: 9fceb02d0ae598e95dc970b74767f19372d61af8",
		"kanban board: sprint-backlog-2024",
		"jira: PROJ-1234",
		"npm: 10.2.4",
		"stripe: 2023-10-16",
		"twitch = 'https://twitch.tv/somechannel'",
		"xoxa-token and xoxr-tokens are Slack's legacy tokens",
		`notes            = "Maven - io.jsonwebtoken:jjwt-jackson-0.11.2"`,
		"lexigram = '=yIcB4LRVZ4iEJVky0JvzVS6yzreDuFgz8zSmfXNlWuEIE29ad6Wmc9sQtUzWBp8dV960IeSdWk5V'",
		"stripo = 'ayJhbGciOiJIUzI1NiJ9.qflXV62P6Y51gAFD9pnq9FpcgDQOfr68GtBUARUvk7gzbAfg6eF66Txb4R9idT41JsG5CqTKXMfMnzpPVByJRFjtfXIFasywYCd53PqB774bhbBFgfEznjdQjOu8ui910q.8QQbrVsL16ya98sn8yyjLbBX21bix2G_QhFg_rKN9Bv'",
	})
}

// gitleaks' tests of its rules' edges that are no secret: a Telegram
// bot token's shape with parts of the wrong length, a 1Password token's
// shape filled with x. A real bot token under the same name is still
// found.
func TestBrokenShapesNotSecrets(t *testing.T) {
	d := secrets.Default()
	notFlagged(t, d, []string{
		`telegram_api_token = "0948:Amlrj-tmcnaqx5da9mhv8sbu3pnt3wgxtc-"`,
		`telegram_api_token = "30910312729491652:Ax92-9hi1uv63us5osy5sybq3mb45sz7cfk"`,
		`telegram_api_token = "15277211:Adot-jn89xgppdhqusu9tngl-n-w5db3t1--some-other-thing"`,
		"ops_eyJ" + strings.Repeat("x", 300),
	})
	text := `telegram_api_token = "5277211431:AAdot3jn89xgppdhqusu9tnglqn4w5db3t1"`
	if red, _ := d.Redact(text); strings.Contains(red, "AAdot3jn89") {
		t.Errorf("a bot token left: %q", red)
	}
}

// A service's key with a byte none of its keys' formats has is none,
// though a user's name or an address beside it may hold any byte: a
// format of any text and of varying length says nothing of the key.
// A key whose format is any byte at one length is still found.
func TestServiceKeysBesideNamesOfAnyText(t *testing.T) {
	d := secrets.Default()
	notFlagged(t, d, []string{
		"thousandeyes token - 'QRv5GR?QjWmQ6esvXuvk3pcw0IMAw5NO'",
		"kucoin secret = 'c19c2539?53367c726a5c04c'",
	})
	text := "nethunt token - 'ai$oy@v8w9-$rcawnt^87rv3-9k0t&srbc8v'"
	if red, _ := d.Redact(text); strings.Contains(red, "87rv3-9k0t") {
		t.Errorf("a key of any byte left: %q", red)
	}
}
