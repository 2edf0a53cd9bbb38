package claudecode

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

func TestEditedPromptMakesAFork(t *testing.T) {
	path := sessionFile(t,
		user("u1", "", 0, "first prompt"),
		asst("a1", "u1", 1, "m1", text("first answer")),
		user("u2", "a1", 2, "second prompt"),
		asst("a2", "u2", 3, "m2", text("old answer")),
		user("u3", "a2", 4, "third prompt"),
		asst("a3", "u3", 5, "m3", text("third answer")),
		// The user rewinds to the second prompt and edits it.
		user("u2b", "a1", 60, "second prompt, edited"),
		asst("a2b", "u2b", 61, "m2b", text("new answer")),
		L{"type": "summary", "summary": "The old branch", "leafUuid": "a3"},
		L{"type": "summary", "summary": "The new branch", "leafUuid": "a2b"},
		L{"type": "summary", "summary": "Summary of another session", "leafUuid": "elsewhere"},
	)
	res := readFiles(t, path)
	checkNoProblems(t, res)
	checkSkipped(t, res, map[string]int{"summary": 1})
	if got := importertest.SourceIDs(res.Sessions); !slices.Equal(got, []string{caseSID, caseSID + "@u2"}) {
		t.Fatalf("sessions = %v", got)
	}
	main, fork := res.Sessions[0], res.Sessions[1]
	if got := roles(main); !slices.Equal(got, []string{"user:u1", "assistant:a1", "user:u2b", "assistant:a2b"}) {
		t.Errorf("main = %v", got)
	}
	if main.Title != "The new branch" || main.Kind != loom.KindMain {
		t.Errorf("main title %q kind %s", main.Title, main.Kind)
	}
	if got := roles(fork); !slices.Equal(got, []string{"user:u1", "assistant:a1", "user:u2", "assistant:a2", "user:u3", "assistant:a3"}) {
		t.Errorf("fork = %v", got)
	}
	if fork.Kind != loom.KindFork || fork.ParentSourceID != caseSID || fork.ForkTurn != 1 || fork.Title != "The old branch" ||
		!fork.UpdatedAt.Equal(base.Add(5*time.Second)) {
		t.Errorf("fork %+v", *fork)
	}
	// The fork holds copies: numbering one session's messages leaves the
	// other's alone.
	if fork.Messages[0] == main.Messages[0] {
		t.Error("fork shares message values with its parent")
	}
}

func TestRegeneratedRepliesMakeForks(t *testing.T) {
	path := sessionFile(t,
		user("u1", "", 0, "prompt"),
		asst("a1", "u1", 1, "m1", text("answer")),
		user("u2", "a1", 2, "follow-up"),
		asst("a2", "u2", 3, "m2", text("answer 2")),
		user("u2b", "a1", 10, "follow-up, edited"),
		asst("a2b", "u2b", 11, "m2b", text("answer 2b")),
		// The first answer, regenerated last.
		asst("a1r", "u1", 20, "m1r", text("answer, again")),
		L{"type": "ai-title", "aiTitle": "Generated title", "sessionId": caseSID},
		L{"type": "custom-title", "customTitle": "Old name", "sessionId": caseSID},
		L{"type": "custom-title", "customTitle": "My name", "sessionId": caseSID},
	)
	res := readFiles(t, path)
	checkNoProblems(t, res)
	checkSkipped(t, res, map[string]int{"custom-title": 1, "ai-title": 1})
	// Both abandoned branches leave the main chain at a1; each is named
	// by the first message no other branch shares.
	if got := importertest.SourceIDs(res.Sessions); !slices.Equal(got, []string{caseSID, caseSID + "@u2", caseSID + "@u2b"}) {
		t.Fatalf("sessions = %v", got)
	}
	if got := roles(res.Sessions[0]); !slices.Equal(got, []string{"user:u1", "assistant:a1r"}) || res.Sessions[0].Title != "My name" {
		t.Errorf("main = %v %q", got, res.Sessions[0].Title)
	}
	for _, f := range res.Sessions[1:] {
		// The first turn goes on differently: no turn is shared whole.
		if f.ForkTurn != 0 || len(f.Messages) != 4 || f.Messages[1].ID != "a1" || f.Title != "" {
			t.Errorf("fork %s: turn %d %v %q", f.SourceID, f.ForkTurn, roles(f), f.Title)
		}
	}
}

func TestParallelToolResultsAreNotBranches(t *testing.T) {
	path := sessionFile(t,
		user("u1", "", 0, "look around"),
		asst("a1", "u1", 1, "m1", toolUse("t1", "Glob", L{"pattern": "*"})),
		with(line("progress", "p1", "a1", 2), "data", L{"type": "hook_progress"}),
		asst("a2", "p1", 2, "m1", toolUse("t2", "Read", L{"file_path": "/x"})),
		// Each result hangs off its own call's line.
		user("r1", "a1", 3, []any{toolResult("t1", "x.go", false)}),
		user("r2", "a2", 4, []any{toolResult("t2", []any{text("line 1"), text("line 2")}, false)}),
		asst("a3", "r2", 5, "m2", text("done")),
		with(line("system", "s1", "a3", 6), "subtype", "turn_duration", "durationMs", 6000),
	)
	res := readFiles(t, path)
	checkNoProblems(t, res)
	checkSkipped(t, res, map[string]int{"progress": 1, "system:turn_duration": 1})
	if len(res.Sessions) != 1 {
		t.Fatalf("sessions = %v", importertest.SourceIDs(res.Sessions))
	}
	s := res.Sessions[0]
	if got := roles(s); !slices.Equal(got, []string{"user:u1", "assistant:a1", "assistant:a3"}) {
		t.Errorf("messages = %v", got)
	}
	m := s.Messages[1]
	if len(m.Parts) != 2 || output(m.Parts[0]) != "x.go" || output(m.Parts[1]) != "line 1\nline 2" ||
		m.Parts[0].ID != "a1/0" || m.Parts[1].ID != "a2/0" || m.Usage.OutputTokens != 5 || m.Usage.InputTokens != 10 ||
		!m.CompletedAt.Equal(base.Add(2*time.Second)) {
		t.Errorf("reply %+v", m)
	}
}

func TestParentCycle(t *testing.T) {
	path := sessionFile(t,
		user("u1", "u2", 0, "one"),
		user("u2", "u1", 1, "two"),
		user("u3", "u3", 2, "three"),
	)
	res := readFiles(t, path)
	if len(res.Problems) != 1 || res.Problems[0].Line != 1 {
		t.Errorf("problems %v", res.Problems)
	}
	if len(res.Sessions) != 1 || len(res.Sessions[0].Messages) != 3 {
		t.Errorf("sessions %v", importertest.SourceIDs(res.Sessions))
	}
}

func TestForkBound(t *testing.T) {
	lines := []any{user("u1", "", 0, "prompt")}
	for i := range maxForks + 500 {
		id := "a" + strconv.Itoa(i)
		lines = append(lines, asst(id, "u1", i+1, "m-"+id, text("take "+id)))
	}
	res := readFiles(t, sessionFile(t, lines...))
	if len(res.Sessions) != 1+maxForks {
		t.Errorf("%d sessions", len(res.Sessions))
	}
	if len(res.Problems) != 1 || !strings.HasPrefix(res.Problems[0].Reason, "499 abandoned branches not imported") {
		t.Errorf("problems %v", res.Problems)
	}
	if got := roles(res.Sessions[0]); !slices.Equal(got, []string{"user:u1", "assistant:a1499"}) {
		t.Errorf("main = %v", got)
	}
}
