package clitest

import (
	"strings"
	"testing"
	"time"
)

func WaitFor(t *testing.T, s interface{ String() string }, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q in:\n%s", want, s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
