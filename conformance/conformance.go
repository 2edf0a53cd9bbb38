// Package conformance is the test suite every loom.Store engine passes:
// one test per contract of the store (lazy creation, atomic append,
// newest-N, streaming boundary, locking, search, fork, lifecycle,
// compaction, nothing lost, import). An engine's tests call Run with a
// function that opens handles on one fresh database.
package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// Opener opens a new handle on the same database each time it is called:
// two handles behave like two processes sharing the store.
type Opener func(t *testing.T) loom.Engine

// Factory creates a fresh, empty database for one test and returns how to
// open handles on it.
type Factory func(t *testing.T) Opener

// Orphan makes the lock that handle st holds on a session look as if
// its process had died, as a holder killed without releasing leaves it:
// an engine's tests give the lock row the pid of a process that has
// exited (DeadPID).
type Orphan func(t *testing.T, st loom.Store, sessionID string)

// DeadPID returns the pid of a process that has exited and been reaped.
func DeadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run a short-lived process: %v", err)
	}
	return cmd.ProcessState.Pid()
}

// Run runs every contract against the engine that factory builds; orphan
// is how the engine's tests make a lock's holder look dead.
func Run(t *testing.T, factory Factory, orphan Orphan) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"Services", testServices},
		{"LazyCreation", testLazyCreation},
		{"AtomicAppend", testAtomicAppend},
		{"NewestN", testNewestN},
		{"StreamingBoundary", testStreamingBoundary},
		{"Locking", testLocking},
		{"Search", testSearch},
		{"Snippets", testSnippets},
		{"SearchLimits", testSearchLimits},
		{"SearchAnyWord", testSearchAnyWord},
		{"SearchTiers", testSearchTiers},
		{"SearchRareAmongCommon", testSearchRareAmongCommon},
		{"SearchRareAmongCommonElsewhere", testSearchRareAmongCommonElsewhere},
		{"SearchWordsMeet", testSearchWordsMeet},
		{"SearchNamedSession", testSearchNamedSession},
		{"SearchSameIDs", testSearchSameIDs},
		{"SearchTitlesWeighed", testSearchTitlesWeighed},
		{"SearchInstructions", testSearchInstructions},
		{"LongMessage", testLongMessage},
		{"Fork", testFork},
		{"Rewind", testRewind},
		{"RewindFork", testRewindFork},
		{"ForkLineage", testForkLineage},
		{"RewindLineage", testRewindLineage},
		{"ReadSessions", testReadSessions},
		{"ReadSessionsDuringRewind", testReadSessionsDuringRewind},
		{"Archive", testArchive},
		{"Family", testFamily},
		{"RenameDescribeDeletePrune", testLifecycle},
		{"DeleteLocked", func(t *testing.T, open Opener) { testDeleteLocked(t, open, orphan) }},
		{"Compaction", testCompaction},
		{"PartMetadata", testPartMetadata},
		{"NothingLostSilently", testNothingLost},
		{"ResolveReferences", testResolve},
		{"RefLen", testRefLen},
		{"SessionText", testSessionText},
		{"UpdateSession", testUpdateSession},
		{"TeamMember", testTeamMember},
		{"DescriptionIfEmpty", testDescriptionIfEmpty},
		{"MoveProject", testMoveProject},
		{"Import", testImport},
		{"ImportLong", testImportLong},
		{"ImportSources", testImportSources},
		{"SourceLocks", testSourceLocks},
		{"ImportWrite", testImportWrite},
		{"SettledTimes", testSettledTimes},
		{"CountedCalls", testCountedCalls},
		{"UpdateUsage", testUpdateUsage},
		{"Usage", testUsage},
		{"UsageSlices", testUsageSlices},
		{"UsageRollup", testUsageRollup},
		{"Activity", testActivity},
		{"LibraryAPI", testLibraryAPI},
		{"Sync", testSync},
		{"EditIndex", testEditIndex},
		{"EditVersion", testEditVersion},
		{"Originals", testOriginals},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, factory(t))
		})
	}
}

// helpers

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func newSession(user, key string) *loom.Session {
	return &loom.Session{
		ID:      loom.NewID(),
		UserID:  user,
		Key:     key,
		Project: loom.Project{ID: "0123456789abcdef", Name: "api", Root: "/src/api"},
		Cwd:     "/src/api",
		Model:   "test-model",
	}
}

func text(role, s string) *loom.Message {
	return &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: s}}}
}

func mustAppend(t *testing.T, st loom.Store, s *loom.Session, msgs ...*loom.Message) {
	t.Helper()
	if err := st.Append(ctx(t), s, msgs...); err != nil {
		t.Fatalf("append: %v", err)
	}
}

func mustMessages(t *testing.T, st loom.Store, id string, q loom.MessageQuery) []*loom.Message {
	t.Helper()
	msgs, err := st.Messages(ctx(t), id, q)
	if err != nil {
		t.Fatalf("messages: %v", err)
	}
	return msgs
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := loom.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

func checkSeqs(t *testing.T, msgs []*loom.Message, from int64) {
	t.Helper()
	for i, m := range msgs {
		if m.Seq != from+int64(i) {
			t.Fatalf("message %d has seq %d, want %d", i, m.Seq, from+int64(i))
		}
	}
}

func jsonEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func turnMessages(turn int) []*loom.Message {
	return []*loom.Message{
		text(loom.RoleUser, fmt.Sprintf("question %d", turn)),
		text(loom.RoleAssistant, fmt.Sprintf("answer %d", turn)),
	}
}

// sessionOfTurns appends turns turns to a new session of alice's titled
// title, each turn's messages (turnMessages) first shaped by shape.
func sessionOfTurns(t *testing.T, st loom.Store, title string, turns int, shape func(turn int, msgs []*loom.Message)) *loom.Session {
	t.Helper()
	s := newSession("alice", "cli:api")
	s.Title = title
	for turn := 1; turn <= turns; turn++ {
		msgs := turnMessages(turn)
		shape(turn, msgs)
		mustAppend(t, st, s, msgs...)
	}
	return s
}

// inOrder runs the steps of a test, one after the other, on what they
// share.
func inOrder(t *testing.T, steps ...func(t *testing.T)) {
	for _, step := range steps {
		step(t)
	}
}

// errOf is the error of a call that also returns a value.
func errOf[T any](_ T, err error) error { return err }
