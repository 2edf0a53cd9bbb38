package cli

import "github.com/loomhq/loom/cli/command"

// Factory is what main wires in from the outside world (see
// command.Factory); cmd/loom builds the real one.
type Factory = command.Factory

// Invocation is one run of the command line on a Factory (see
// command.Invocation); Main makes it.
type Invocation = command.Invocation

// Access is what a command does with the store (see command.Access).
type Access = command.Access

// Damage is what an engine's error says of its store's file.
type Damage = command.Damage

// What an engine's error says of its store's file.
const (
	Undamaged = command.Undamaged
	Damaged   = command.Damaged
	NotAStore = command.NotAStore
)

// The ways a command opens the store.
const (
	AccessRead   = command.AccessRead
	AccessWrite  = command.AccessWrite
	AccessCreate = command.AccessCreate
)

// ServeConfig is what loom serve hands the server (see
// command.ServeConfig).
type ServeConfig = command.ServeConfig

// Exit codes, decided once in Main from the error a command returns.
const (
	ExitOK          = command.ExitOK
	ExitError       = command.ExitError
	ExitUsage       = command.ExitUsage
	ExitNotFound    = command.ExitNotFound
	ExitAmbiguous   = command.ExitAmbiguous
	ExitLocked      = command.ExitLocked
	ExitInterrupted = command.ExitInterrupted
)

// ExitCode returns the exit code for err.
func ExitCode(err error) int { return command.ExitCode(err) }
