package cli

// What the tests of package cli_test call of this package's own.
var (
	ReplayRun     = replayRun
	ReplayWait    = replayWait
	LogStreamRun  = logStreamRun
	PrintError    = printError
	MaxReplayWait = maxReplayWait
)
