package clitest

import (
	"encoding/json"
	"testing"

	"github.com/loomhq/loom"
)

// ShowMessages is every message of the session ref, as `session show
// --json` prints them.
func (fx *Fixture) ShowMessages(t *testing.T, ref string) []*loom.Message {
	t.Helper()
	var shown struct{ Messages []*loom.Message }
	if err := json.Unmarshal([]byte(fx.MustExec(t, "session", "show", ref, "--full-history", "--json")), &shown); err != nil {
		t.Fatal(err)
	}
	return shown.Messages
}
