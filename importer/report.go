package importer

import (
	"maps"
	"slices"
	"time"

	"github.com/loomhq/loom"
)

// Report is what one import did, per tool.
type Report struct {
	DryRun     bool          `json:"dry_run"`
	Tools      []*ToolReport `json:"tools"`
	Elapsed    time.Duration `json:"-"`
	DurationMS int64         `json:"duration_ms"`
}

// ToolReport is what an import did with one tool's sessions.
type ToolReport struct {
	Tool  string   `json:"tool"`
	Roots []string `json:"roots"`
	// RootsFound counts the roots that exist: none means the tool is not
	// installed (or keeps its sessions elsewhere).
	RootsFound int `json:"roots_found"`
	// FilesRead were read; FilesUnchanged were recognised as imported
	// already, from their size and time, without being read;
	// FilesFailed could not be read at all (each is also a problem): the
	// rest was imported, and the command exits non-zero.
	FilesRead      int `json:"files_read"`
	FilesUnchanged int `json:"files_unchanged"`
	FilesFailed    int `json:"files_failed"`
	// Sessions new (created), grown (messages added) and unchanged
	// (read again, nothing new).
	SessionsNew       int `json:"sessions_new"`
	SessionsGrown     int `json:"sessions_grown"`
	SessionsUnchanged int `json:"sessions_unchanged"`
	MessagesAdded     int `json:"messages_added"`
	// ToolsUpdated counts tool calls whose result arrived after the call
	// was imported.
	ToolsUpdated int `json:"tool_results_added"`
	// With Rescan: SessionsRepaired were put back as one import of their
	// file makes them, ForksMerged forks that the file does not call for
	// removed (what they held is in the session they split from), and
	// MessagesRemoved is how many messages those forks and the sessions
	// made again held.
	SessionsRepaired int `json:"sessions_repaired"`
	ForksMerged      int `json:"forks_merged"`
	MessagesRemoved  int `json:"messages_removed"`
	// Skipped counts lines or records left out, by type.
	Skipped  map[string]int `json:"skipped"`
	Problems []Problem      `json:"problems"`
	// ProblemCount counts every problem; Problems keeps the first
	// thousand.
	ProblemCount int           `json:"problem_count"`
	Elapsed      time.Duration `json:"-"`
	DurationMS   int64         `json:"duration_ms"`
	// Changes are the sessions created or grown, the first thousand, for
	// a line each as --watch prints them.
	Changes []SessionChange `json:"-"`

	ids map[string]string // source id → loom id, of the bundle being written
	// failures are the problems of files that could not be read, the
	// first few.
	failures []Problem
}

// SessionChange is one session an import created or added to.
type SessionChange struct {
	SessionID string
	Title     string
	New       bool
	// Messages were added; a change without any completed tool results
	// or usage of messages imported before.
	Messages int
}

// changed records a change to session x that added messages. A
// session changed again in the same run (a file read in segments, each
// adding its messages) keeps its one change, which counts them all.
func (tr *ToolReport) changed(x *loom.Session, isNew bool, messages int) {
	const maxChanges = 1000
	for i := len(tr.Changes) - 1; i >= 0; i-- {
		if c := &tr.Changes[i]; c.SessionID == x.ID {
			c.Messages += messages
			c.New = c.New || isNew
			return
		}
	}
	if len(tr.Changes) < maxChanges {
		tr.Changes = append(tr.Changes, SessionChange{SessionID: x.ID, Title: x.Title, New: isNew, Messages: messages})
	}
}

func (tr *ToolReport) problem(p Problem) {
	const maxProblems = 1000
	if len(tr.Problems) < maxProblems {
		tr.Problems = append(tr.Problems, p)
	}
	tr.ProblemCount++
}

// read counts files read into res, with what res skipped and its
// problems.
func (tr *ToolReport) read(files int, res *Result) {
	tr.FilesRead += files
	tr.FilesFailed += res.unreadable
	for k, n := range res.Skipped {
		tr.Skipped[k] += n
	}
	for _, p := range res.Problems {
		tr.problem(p)
	}
}

// failed records a file that could not be read at all.
func (tr *ToolReport) failed(p Problem) {
	tr.FilesFailed++
	tr.problem(p)
	if len(tr.failures) < 10 {
		tr.failures = append(tr.failures, p)
	}
}

// Failures are the problems of the first files of each tool that could
// not be read, so that a quiet import (a hook) can name them.
func (r *Report) Failures() []Problem {
	var out []Problem
	for _, t := range r.Tools {
		out = append(out, t.failures...)
	}
	return out
}

// FilesFailed is how many files of every tool could not be read.
func (r *Report) FilesFailed() int {
	n := 0
	for _, t := range r.Tools {
		n += t.FilesFailed
	}
	return n
}

// SkippedTotal is how many lines were skipped, of every type.
func (tr *ToolReport) SkippedTotal() int {
	n := 0
	for _, v := range tr.Skipped {
		n += v
	}
	return n
}

// SkippedTypes are the skipped types, sorted.
func (tr *ToolReport) SkippedTypes() []string {
	return slices.Sorted(maps.Keys(tr.Skipped))
}

func (r *Report) done(start, end time.Time) {
	r.Elapsed = end.Sub(start)
	r.DurationMS = r.Elapsed.Milliseconds()
}
