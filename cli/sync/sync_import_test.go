package sync_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// Two machines import the same Claude Code files (a synced ~/.claude):
// the second a shorter copy of one session's file first, then the whole
// file, grown. After they sync, both list one copy of each session, under
// the id a machine that imported the files alone gives it, with the same
// messages, and a search finds each message once.
func TestSyncImportsOfOneSource(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step")
	const sid = "258c7280-ae70-4798-800f-63464d01a85d"
	a, b, _, _ := clitest.SyncPair(t, "")
	alone := clitest.NewEmptyFixture(t)
	src := filepath.Join(clitest.Samples, "claude-code")
	dirA, dirB, dirAlone := t.TempDir(), t.TempDir(), t.TempDir()
	clitest.CopyTree(t, src, dirA)
	clitest.CopyTree(t, src, dirB)
	clitest.CopyTree(t, src, dirAlone)
	file := filepath.Join(dirB, "spotter", sid+".jsonl")
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(whole, []byte("\n"))
	if err := os.WriteFile(file, bytes.Join(lines[:len(lines)*2/3], nil), 0o644); err != nil {
		t.Fatal(err)
	}

	a.MustExec(t, "session", "import", "--from", "claude-code", dirA)
	b.MustExec(t, "session", "import", "--from", "claude-code", dirB)
	alone.MustExec(t, "session", "import", "--from", "claude-code", dirAlone)
	a.MustExec(t, "sync")
	b.MustExec(t, "sync")
	// The tool writes on: the whole file at the shorter copy's place.
	if err := os.WriteFile(file, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	b.MustExec(t, "session", "import", "--from", "claude-code", dirB)
	b.MustExec(t, "sync")
	a.MustExec(t, "sync")

	type listed struct {
		ID           string `json:"id"`
		Key          string `json:"key"`
		MessageCount int    `json:"message_count"`
	}
	list := func(fx *clitest.Fixture) []string {
		var ss []listed
		if err := json.Unmarshal([]byte(fx.MustExec(t, "session", "list", "-a", "--json", "--limit", "1000")), &ss); err != nil {
			t.Fatal(err)
		}
		var out []string
		keys := map[string]bool{}
		for _, s := range ss {
			if keys[s.Key] {
				t.Errorf("two sessions keyed %s", s.Key)
			}
			keys[s.Key] = true
			out = append(out, s.Key+" "+s.ID+" "+clitest.Itoa(s.MessageCount))
		}
		slices.Sort(out)
		return out
	}
	la, lb, want := list(a), list(b), list(alone)
	if len(want) == 0 {
		t.Fatal("nothing imported")
	}
	if !slices.Equal(la, want) || !slices.Equal(lb, want) {
		t.Fatalf("sessions after sync:\nfirst:  %v\nsecond: %v\nalone:  %v", la, lb, want)
	}
	// The same but for the source file's path, which is each machine's
	// own.
	same := func(args ...string) {
		t.Helper()
		ga := strings.ReplaceAll(normalJSON(t, a.MustExec(t, args...)), dirA, "SRC")
		gb := strings.ReplaceAll(normalJSON(t, b.MustExec(t, args...)), dirB, "SRC")
		if ga != gb {
			i := 0
			for i < len(ga) && i < len(gb) && ga[i] == gb[i] {
				i++
			}
			from := max(0, i-300)
			t.Fatalf("loom %s differs:\nfirst:  …%s\nsecond: …%s", strings.Join(args, " "), ga[from:min(len(ga), i+200)], gb[from:min(len(gb), i+200)])
		}
	}
	same("session", "list", "-a", "--json", "--limit", "1000")
	for _, s := range la {
		same("session", "show", strings.Fields(s)[1], "--json")
	}
	// Each message is found once, on both machines as on one that
	// imported the files alone. (Scores may differ a little: a store's
	// index statistics count the replies it completed in place.)
	for _, word := range []string{"defmodule", "xterm", "orchestrator", "bd0afab"} {
		ha, hb, hw := hitMessages(t, a, word), hitMessages(t, b, word), hitMessages(t, alone, word)
		if len(hw) == 0 || len(hw) >= 100 {
			t.Fatalf("%d hits for %q", len(hw), word)
		}
		if !slices.Equal(ha, hw) || !slices.Equal(hb, hw) {
			t.Errorf("search %q finds %d and %d messages after sync, %d on a machine alone:\n%v\n%v\n%v", word, len(ha), len(hb), len(hw), ha, hb, hw)
		}
	}
}

// hitMessages is the messages loom search finds word in, in fx's store,
// each as its session and seq, sorted; a message found twice fails the
// test.
func hitMessages(t *testing.T, fx *clitest.Fixture, word string) []string {
	t.Helper()
	var out []string
	for _, h := range searchHits(t, fx, word) {
		f := strings.Fields(h)
		m := f[2] + " " + f[3]
		if slices.Contains(out, m) {
			t.Errorf("search %q finds message %s twice", word, m)
		}
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}
