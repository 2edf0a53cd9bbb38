package clitest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CLITimeout bounds one run of an agent's command: it only catches one
// that hangs. A Node agent that starts in seconds on a quiet machine
// takes most of a minute on one loaded many times over its cores.
//
// The tests that run real agents call t.Parallel: each has its own HOME,
// fake model server, store and work directory, and most of an agent's
// run is spent waiting on its own start and on files, so two or more at
// once take far less time than one after another.
const CLITimeout = 3 * time.Minute

func WriteSettings(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
