package command_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
)

// The exit code a script sees for each kind of error, wrapped or not.
func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, command.ExitOK},
		{errors.New("disk on fire"), command.ExitError},
		{command.UsageErrorf("unknown flag --x"), command.ExitUsage},
		{fmt.Errorf("run: %w", command.UsageErrorf("bad")), command.ExitUsage},
		{loom.NotFound("abcd"), command.ExitNotFound},
		{fmt.Errorf("show: %w", loom.Errorf(loom.EAMBIGUOUS, "two sessions")), command.ExitAmbiguous},
		{loom.Errorf(loom.ELOCKED, "held by pid 7"), command.ExitLocked},
		{loom.Errorf(loom.ECONFLICT, "taken"), command.ExitError},
		{&command.SilentError{Code: command.ExitInterrupted}, 130},
		{fmt.Errorf("wrapped: %w", &command.SilentError{Code: 4}), 4},
	} {
		if got := command.ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestOrDash(t *testing.T) {
	if command.OrDash("") != "-" || command.OrDash("x") != "x" {
		t.Fatal("OrDash")
	}
}

// A wrong number of arguments is one line naming the command's usage,
// and a usage error (exit 2).
func TestArgsBetween(t *testing.T) {
	cmd := &cobra.Command{Use: "move REF [DIR]"}
	check := command.ArgsBetween(1, 2)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"a"}, ""},
		{[]string{"a", "b"}, ""},
		{nil, "missing arguments; usage: move REF [DIR]"},
		{[]string{"a", "b", "c"}, "too many arguments; usage: move REF [DIR]"},
	} {
		err := check(cmd, tc.args)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.args, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.want || command.ExitCode(err) != command.ExitUsage {
			t.Errorf("%v: %v (exit %d), want %q (exit 2)", tc.args, err, command.ExitCode(err), tc.want)
		}
	}
	if err := command.ArgsBetween(0, -1)(cmd, make([]string, 50)); err != nil {
		t.Errorf("no upper limit: %v", err)
	}
}

// An argument to a command that takes none is refused; to a command with
// subcommands it reads as an unknown subcommand, with a suggestion.
func TestNoArgs(t *testing.T) {
	root := &cobra.Command{Use: "loom"}
	session := &cobra.Command{Use: "session"}
	list := &cobra.Command{Use: "list", Run: func(*cobra.Command, []string) {}}
	session.AddCommand(list)
	root.AddCommand(session)
	if err := command.NoArgs(list, nil); err != nil {
		t.Fatal(err)
	}
	err := command.NoArgs(list, []string{"extra"})
	if err == nil || err.Error() != "loom session list takes no arguments (see 'loom session list --help')" || command.ExitCode(err) != command.ExitUsage {
		t.Fatalf("an argument to list: %v", err)
	}
	err = command.NoArgs(session, []string{"lsit"})
	if err == nil || !strings.HasPrefix(err.Error(), `unknown command "lsit" for "loom session"; did you mean list?`) || command.ExitCode(err) != command.ExitUsage {
		t.Fatalf("an unknown subcommand: %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("the error is more than one line: %q", err)
	}
}
