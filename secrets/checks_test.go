package secrets_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/secrets"
)

// notFlagged checks that d finds no secret in any of texts.
func notFlagged(t *testing.T, d *secrets.Detector, texts []string) {
	t.Helper()
	for _, text := range texts {
		if f := d.Find(text); len(f) > 0 {
			red, _ := d.Redact(text)
			t.Errorf("%q flagged: %q", text, red)
		}
	}
}

// textSecret is a text and the secret in it.
type textSecret struct{ text, secret string }

// redactsAll checks that d's redaction of each text leaves none of its
// secret.
func redactsAll(t *testing.T, d *secrets.Detector, cases []textSecret) {
	t.Helper()
	for _, c := range cases {
		red, _ := d.Redact(c.text)
		if strings.Contains(red, c.secret) {
			t.Errorf("%q: %q left in %q", c.text, c.secret, red)
		}
	}
}
