package command

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
)

// Exit codes. Each is decided once, in Main, from the error a command
// returns.
const (
	ExitOK        = 0
	ExitError     = 1
	ExitUsage     = 2
	ExitNotFound  = 3
	ExitAmbiguous = 4
	ExitLocked    = 5
	// ExitInterrupted is a run stopped by Ctrl+C, as shells report it
	// (128 + SIGINT).
	ExitInterrupted = 130
)

// UsageError is a mistake in how a command was called: an unknown flag or
// command, a missing or extra argument, a value that does not parse.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func UsageErrorf(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// SilentError ends a command with an exit code and no message, for
// outcomes the command already explained.
type SilentError struct{ Code int }

// ExitCode returns the exit code for err.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var se *SilentError
	if errors.As(err, &se) {
		return se.Code
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	switch loom.ErrorCode(err) {
	case loom.ENOTFOUND:
		return ExitNotFound
	case loom.EAMBIGUOUS:
		return ExitAmbiguous
	case loom.ELOCKED:
		return ExitLocked
	}
	return ExitError
}

func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// NoArgs rejects arguments to a command that takes none, naming an
// unknown subcommand as such.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasSubCommands() {
		return UnknownCommand(cmd, args[0])
	}
	return UsageErrorf("%s takes no arguments (see '%s --help')", cmd.CommandPath(), cmd.CommandPath())
}

// ArgsBetween accepts between lo and hi arguments (hi < 0: no limit).
func ArgsBetween(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			what := "too many arguments"
			if len(args) < lo {
				what = "missing arguments"
			}
			return UsageErrorf("%s; usage: %s", what, cmd.UseLine())
		}
		return nil
	}
}

func (e *SilentError) Error() string { return fmt.Sprintf("exit %d", e.Code) }
