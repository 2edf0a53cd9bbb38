// Package retention knows when other agents delete their own sessions:
// each agent's retention setting as the agent itself reads it (Claude
// Code's cleanupPeriodDays, Gemini CLI's general.sessionRetention) and
// its rule, applied to the session files on this machine, beside what
// loom holds of each (importer.Cover). `loom doctor` reports it; the
// chat's first screen and the status line warn from it. See
// docs/durability.md.
package retention

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Policy is what an agent keeps of its sessions, and where that was
// read.
type Policy struct {
	Agent string `json:"agent"`
	// Deletes says the agent deletes sessions by itself; false: it
	// keeps them until the user deletes them.
	Deletes bool `json:"deletes"`
	// MaxAge is how long after a session was last written the agent
	// deletes it; MaxCount (when not 0) how many of the newest it keeps.
	MaxAge   time.Duration `json:"-"`
	MaxDays  float64       `json:"max_age_days,omitempty"`
	MaxCount int           `json:"max_count,omitempty"`
	// Setting is the setting's name as the agent reads it, File the
	// settings file it came from (empty: the agent's default applies).
	Setting string `json:"setting,omitempty"`
	File    string `json:"file,omitempty"`
	// Since says what the age is counted from.
	Since string `json:"since,omitempty"`
	// When says when the agent deletes what is due.
	When string `json:"when"`
	// Problem is a setting the agent refuses, and so deletes nothing
	// while it stays so.
	Problem string `json:"problem,omitempty"`
}

// Session is a session its agent will delete by the horizon.
type Session struct {
	Agent    string `json:"agent"`
	SourceID string `json:"source_id,omitempty"`
	Path     string `json:"path"`
	// LastWritten is the time the agent's rule counts from (Claude
	// Code's: the file's modification time; Gemini CLI's: the
	// lastUpdated the file records); DeletesAt is when the agent may
	// delete it, at the earliest (already past: at the agent's next
	// start).
	LastWritten time.Time `json:"last_written"`
	DeletesAt   time.Time `json:"deletes_at"`
	// Held says how much of it loom holds; SessionID and Title name
	// loom's copy.
	Held      importer.Held `json:"held"`
	SessionID string        `json:"session_id,omitempty"`
	Title     string        `json:"title,omitempty"`
	// Why is the rule that deletes it ("kept 30 days", "past the 100
	// newest").
	Why string `json:"why"`
}

// AgentReport is one agent found on this machine: its policy, how many
// sessions it holds, and those it will delete by the horizon.
type AgentReport struct {
	Policy
	Sessions int       `json:"sessions"`
	AtRisk   []Session `json:"at_risk"`
}

// Report is every agent found that has a retention rule loom knows.
type Report struct {
	Now    time.Time     `json:"now"`
	Within time.Duration `json:"-"`
	Agents []AgentReport `json:"agents"`
}

// Key names the session a file at risk is of: the agent's id for it,
// else the file (the files of one session share its key: Gemini CLI
// writes one session in two when it is resumed in a later minute).
func (s Session) Key() string {
	if s.SourceID != "" {
		return s.Agent + ":" + s.SourceID
	}
	return s.Agent + ":" + s.Path
}

// Unheld are the sessions at risk that loom does not hold whole, by
// the first of each one's files at risk.
func (r *Report) Unheld() []Session {
	var out []Session
	seen := map[string]bool{}
	for _, a := range r.Agents {
		for _, s := range a.AtRisk {
			if s.Held != importer.HeldWhole && !seen[s.Key()] {
				seen[s.Key()] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// AtRisk counts every session at risk (not its files).
func (r *Report) AtRisk() int {
	n := 0
	for _, a := range r.Agents {
		n += a.SessionsAtRisk()
	}
	return n
}

// SessionsAtRisk counts the sessions of a.AtRisk (not their files).
func (a AgentReport) SessionsAtRisk() int {
	seen := map[string]bool{}
	for _, s := range a.AtRisk {
		seen[s.Key()] = true
	}
	return len(seen)
}

// Place says where an agent keeps its files: the environment (its
// variables) and the home directory.
type Place struct {
	Getenv func(string) string
	Home   string
	// System is the directory of machine-wide settings files ("/" on a
	// real machine; tests point it elsewhere).
	System string
}

// rule is an agent's retention: its policy as read from its settings,
// and when each of its session files is due.
type rule interface {
	agent() string
	policy(pl Place) Policy
	// due says when the agent deletes each bundle of cov (the agent's
	// files, compared with the store), as sessions at risk whatever
	// their time; the caller keeps those due by the horizon. It counts
	// the sessions cov holds too: a file is not always one (an empty
	// chat, a sub-agent's file).
	due(ctx context.Context, p Policy, cov []importer.Coverage, now time.Time) (due []Session, sessions int, err error)
}

// counter is a rule whose agent writes a session in more files than
// one: count says how many sessions cov holds (due says it too).
type counter interface {
	count(ctx context.Context, cov []importer.Coverage) (int, error)
}

var rules = []rule{claudeCode{}, gemini{}, keeper{"codex", "keeps its rollouts until you delete them (codex delete)"}}

// Check applies every agent's rule to its files on this machine (those
// of formats, under their default locations), beside what st holds of
// them for user, and reports the sessions due within the horizon from
// now. An agent not installed is left out.
func Check(ctx context.Context, st loom.Store, user string, formats []importer.Format, pl Place, now time.Time, within time.Duration) (*Report, error) {
	rep := &Report{Now: now, Within: within, Agents: []AgentReport{}}
	for _, r := range rules {
		i := slices.IndexFunc(formats, func(f importer.Format) bool { return f.Tool() == r.agent() })
		if i < 0 {
			continue
		}
		f := formats[i]
		roots := f.Roots(pl.Getenv, pl.Home)
		cov, err := importer.Cover(ctx, st, user, importer.Target{Format: f, Roots: roots})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.agent(), err)
		}
		if len(cov) == 0 {
			continue
		}
		p := r.policy(pl)
		a := AgentReport{Policy: p, Sessions: len(cov), AtRisk: []Session{}}
		if c, ok := r.(counter); ok && (!p.Deletes || p.Problem != "") {
			if a.Sessions, err = c.count(ctx, cov); err != nil {
				return nil, fmt.Errorf("%s: %w", r.agent(), err)
			}
		}
		if p.Deletes && p.Problem == "" {
			due, n, err := r.due(ctx, p, cov, now)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.agent(), err)
			}
			a.Sessions = n
			for _, s := range due {
				if s.DeletesAt.After(now.Add(within)) {
					continue
				}
				if s.SessionID != "" {
					if x, err := st.Session(ctx, s.SessionID); err == nil {
						s.Title = x.Title
					}
				}
				a.AtRisk = append(a.AtRisk, s)
			}
			slices.SortFunc(a.AtRisk, func(x, y Session) int { return x.DeletesAt.Compare(y.DeletesAt) })
		}
		rep.Agents = append(rep.Agents, a)
	}
	return rep, nil
}

// session is a Session of c, due at.
func session(c importer.Coverage, at, last time.Time, why string) Session {
	return Session{Agent: c.Tool, SourceID: c.SourceID, Path: c.Bundle.Name(), LastWritten: last, DeletesAt: at,
		Held: c.Held, SessionID: c.SessionID, Why: why}
}

// keeper is an agent that deletes none of its sessions by itself.
type keeper struct{ name, when string }

func (k keeper) agent() string { return k.name }
func (k keeper) policy(Place) Policy {
	return Policy{Agent: k.name, When: k.when}
}
func (keeper) due(_ context.Context, _ Policy, cov []importer.Coverage, _ time.Time) ([]Session, int, error) {
	return nil, len(cov), nil
}

// days is d in days, for reports.
func days(d time.Duration) float64 { return d.Hours() / 24 }

// DayWords says n days in words: "1 day", "2.5 days", "30 days".
func DayWords(n float64) string {
	s := strconv.FormatFloat(n, 'f', -1, 64)
	if n == 1 {
		return s + " day"
	}
	return s + " days"
}
