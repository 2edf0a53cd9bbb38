package command_test

import (
	"context"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
)

// A --surface no session has and loom does not write is a usage error
// listing the surfaces there are; one that exists, or that loom writes,
// is not.
func TestCheckSurface(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	addSession(t, st, &loom.Session{Key: "telegram:42"}, "hi")
	addSession(t, st, &loom.Session{UserID: "bob", Key: "discord:7"}, "hi")
	for _, s := range []string{"", "cli", "http", "telegram"} {
		if err := command.CheckSurface(ctx, st, "local", s); err != nil {
			t.Errorf("--surface %q: %v", s, err)
		}
	}
	err := command.CheckSurface(ctx, st, "local", "telgram")
	want := `--surface "telgram": no session has it; the surfaces are cli, http, telegram`
	if err == nil || err.Error() != want || command.ExitCode(err) != command.ExitUsage {
		t.Fatalf("a typo: %v, want %q (exit 2)", err, want)
	}
	// Another user's surface is not this user's.
	if err := command.CheckSurface(ctx, st, "local", "discord"); command.ExitCode(err) != command.ExitUsage {
		t.Fatalf("bob's surface for local: %v", err)
	}
}
