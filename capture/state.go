package capture

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/loomhq/loom/internal/safefile"
	"github.com/loomhq/loom/internal/sqlstore"
)

// State is what a running capture says of itself, in a file it
// rewrites at every heartbeat and after every import: which process it
// is, when it last wrote (its heartbeat), what it follows, and when it
// last captured something of each agent. `loom capture status` and
// `loom doctor` read it; nothing else depends on it (delete it and the
// next heartbeat writes it again).
type State struct {
	PID       int       `json:"pid"`
	Host      string    `json:"host"`
	Version   string    `json:"version,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Heartbeat time.Time `json:"heartbeat_at"`
	// IntervalMS is how often the heartbeat is written.
	IntervalMS int64 `json:"heartbeat_interval_ms"`
	// Stopped is when the capture ended on its own (a signal, a
	// service stop): a capture killed leaves its last heartbeat only.
	Stopped *time.Time `json:"stopped_at"`
	// Runs counts the imports done since it started.
	Runs   int           `json:"runs"`
	Agents []*AgentState `json:"agents"`
}

// AgentState is what a capture follows of one agent and last captured.
type AgentState struct {
	Agent string   `json:"agent"`
	Roots []string `json:"roots"`
	// Found says one of the roots exists: the agent is on this machine.
	Found bool `json:"found"`
	// LastRun is the end of the last import that read its files;
	// LastCapture the end of the last one that added sessions or
	// messages of it.
	LastRun     *time.Time `json:"last_run_at"`
	LastCapture *time.Time `json:"last_capture_at"`
	// Sessions and Messages count what was added since the capture
	// started.
	Sessions int `json:"sessions_captured"`
	Messages int `json:"messages_captured"`
	// Problems counts the problems reported since it started, and
	// LastProblem is the latest.
	Problems    int    `json:"problems"`
	LastProblem string `json:"last_problem,omitempty"`
}

// Interval is how often a capture writes its heartbeat; one whose
// heartbeat is older than three of them is taken for gone.
func (s *State) Interval() time.Duration {
	if s.IntervalMS <= 0 {
		return DefaultInterval
	}
	return time.Duration(s.IntervalMS) * time.Millisecond
}

// DefaultInterval is the heartbeat's interval.
const DefaultInterval = 5 * time.Second

// Liveness says whether the capture of a state file is running, and
// why it is taken to be or not.
type Liveness struct {
	Running bool `json:"running"`
	// Why says how it is known: "heartbeat 2 s ago from pid 41", "its
	// process (pid 41) is gone", "stopped at …", "no heartbeat yet".
	Why string `json:"why"`
	// HeartbeatAge is the age of the last heartbeat; zero with none.
	HeartbeatAge time.Duration `json:"-"`
}

// Live says whether s (nil: no state file) is of a capture running
// now: its process alive on this host and its heartbeat fresh.
func Live(s *State, now time.Time) Liveness {
	if s == nil {
		return Liveness{Why: "no capture has run: no state file"}
	}
	age := now.Sub(s.Heartbeat)
	if age < 0 {
		age = 0
	}
	l := Liveness{HeartbeatAge: age}
	host, _ := os.Hostname()
	switch {
	case s.Stopped != nil:
		l.Why = "stopped at " + s.Stopped.Local().Format("2006-01-02 15:04:05")
	case s.Host != "" && host != "" && s.Host != host:
		l.Why = fmt.Sprintf("the state file is of another host (%s)", s.Host)
	case !sqlstore.Alive(s.PID):
		l.Why = fmt.Sprintf("its process (pid %d) is gone; last heartbeat %s ago", s.PID, roundAge(age))
	case age > 3*s.Interval():
		l.Why = fmt.Sprintf("pid %d is alive but its last heartbeat is %s old", s.PID, roundAge(age))
	default:
		l.Running = true
		l.Why = fmt.Sprintf("pid %d, heartbeat %s ago", s.PID, roundAge(age))
	}
	return l
}

func roundAge(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// StatePath is the state file under loom's state directory.
func StatePath(stateDir string) string {
	return filepath.Join(stateDir, "capture", "state.json")
}

// InstalledPath is where loom capture install records what it installed
// (the service's file, the hooks it added), under loom's state directory.
func InstalledPath(stateDir string) string {
	return filepath.Join(stateDir, "capture", "installed.json")
}

// Installed is the service's file that loom capture install wrote and
// that is still there; "" when no service is installed.
func Installed(stateDir string) string {
	b, err := os.ReadFile(InstalledPath(stateDir))
	if err != nil {
		return ""
	}
	var m struct {
		Service string `json:"service"`
	}
	if json.Unmarshal(b, &m) != nil || m.Service == "" {
		return ""
	}
	if _, err := os.Stat(m.Service); err != nil {
		return ""
	}
	return m.Service
}

// ReadState reads the state file at path; nil, and no error, when there
// is none.
func ReadState(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("capture state: %w", err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("capture state %s: %w", path, err)
	}
	return &s, nil
}

// WriteState replaces the state file at path with s, whole: a reader
// never finds half of one.
func WriteState(path string, s *State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("capture state: %w", err)
	}
	if err := safefile.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("capture state: %w", err)
	}
	return nil
}

// Agent is the state of agent, nil when s follows no such agent.
func (s *State) Agent(agent string) *AgentState {
	if s == nil {
		return nil
	}
	for _, a := range s.Agents {
		if a.Agent == agent {
			return a
		}
	}
	return nil
}
