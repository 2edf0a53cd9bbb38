// Package replaylog writes the per-session replay log: one JSON object a
// line, each with a timestamp and a kind, appended as a turn happens, so
// that `tail -f | jq` and `loom log stream` can follow it. The store stays
// the canonical state; the log is for watching and replaying.
package replaylog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/loomhq/loom"
)

// Entry kinds.
const (
	KindUserMessage   = "user_message"
	KindStep          = "step"
	KindFinalResult   = "final_result"
	KindSessionStart  = "session:start"
	KindSessionResume = "session:resume"
	KindSessionFork   = "session:fork"
	KindSessionEnd    = "session:end"
)

// Step types.
const (
	StepAgentStart = "agent_start"
	StepToolStart  = "tool_start"
	StepToolEnd    = "tool_end"
	StepText       = "text"
	StepReasoning  = "reasoning"
)

// Entry is one line of a replay log. Only the fields of its kind are set.
type Entry struct {
	Timestamp string          `json:"timestamp"`
	Kind      string          `json:"kind"`
	Type      string          `json:"type,omitempty"`
	SessionID string          `json:"session_id,omitempty"`
	Text      string          `json:"text,omitempty"`
	Agent     string          `json:"agent,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	Status    string          `json:"status,omitempty"`
	Error     string          `json:"error,omitempty"`
	Usage     *loom.Usage     `json:"usage,omitempty"`
	ParentID  string          `json:"parent_id,omitempty"`
	Model     string          `json:"model,omitempty"`
}

// Log appends entries to one session's log file.
type Log struct {
	mu   sync.Mutex
	path string
	// Now returns the time stamped on entries; tests replace it.
	Now func() time.Time
	// OnError, when set, is told of every failed write. Callers ignore
	// Write's error (the store, not the log, is the record), so this is
	// how a user learns that the log is not being kept.
	OnError func(error)
}

// Open returns the log at path, creating its directory. The file itself
// is created by the first entry.
func Open(path string) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("replay log: %w", err)
	}
	return &Log{path: path, Now: time.Now}, nil
}

// Path is the log file's path.
func (l *Log) Path() string { return l.path }

// Write appends e as one line. A nil Log drops entries, so callers need
// not check whether logging is on.
func (l *Log) Write(e Entry) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.write(e)
	if err != nil && l.OnError != nil {
		l.OnError(err)
	}
	return err
}

func (l *Log) write(e Entry) error {
	e.Timestamp = loom.FormatTime(l.Now())
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("replay log: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("replay log: %w", err)
	}
	// One write call per line: concurrent appenders never interleave
	// within a line.
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("replay log: %w", err)
	}
	return nil
}
