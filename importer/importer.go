// Package importer brings other agents' sessions into loom: every agent
// `loom session import --from list` names (Claude Code, Codex CLI,
// Gemini CLI, opencode, Grok Build, OpenClaw and the others
// docs/import.md lists). Each tool's format has a reader package of its
// own (importer/claudecode, importer/codex, importer/grok, …) that
// turns the tool's files into loom's domain types and nothing else, and
// registers itself (register.go); an agent whose files are another's
// format is that reader under its own name and places (Variant,
// importer/variants). This package holds what they share: the types a
// reader returns, reading lines with bounds, walking directories,
// knowing what was imported from where, writing to the store, the
// report, and following files as they change. The other way, a Format
// that is also a Writer writes a loom session as a new session of its
// tool, to continue there (handoff.go, handoff_calls.go and
// handoff_files.go: what every writer shares).
package importer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
)

// Format is one tool's session format: where the tool keeps its
// sessions, how they group into files, and how to read them.
type Format interface {
	// Tool is the tool's name, which its reader package declares
	// (claudecode.Tool, codex.Tool …): the surface of its imported
	// sessions, the first part of their keys, and the TOOL of
	// `loom session import --from TOOL`.
	Tool() string
	// Provider is the provider of the tool's sessions and replies that
	// do not name theirs, for their cost; "" when the tool has none of
	// its own (opencode names each reply's).
	Provider() string
	// Roots are the tool's default locations on this machine, honouring
	// its own home-directory override read through env (for instance
	// $CLAUDE_CONFIG_DIR); home is the user's home directory. A root
	// that does not exist is not an error: the tool is not installed.
	Roots(env func(string) string, home string) []string
	// Bundles finds the sessions' files under root, which is a directory
	// or one file. A bundle is the set of files a reader needs together
	// (a Claude Code session file with its sub-agents' files; an
	// opencode session's message and part files); files that are not
	// sessions of this tool are left out. It reads directory entries
	// only, never file contents, so that an unchanged bundle costs no
	// reading; a root that is one file may be looked into, where only
	// its first lines tell whether it is the tool's (a Windsurf
	// trajectory among Markdown files).
	Bundles(ctx context.Context, root string) ([]Bundle, error)
	// Read reads one bundle. A malformed line or record is a Problem in
	// the result, never an error: the rest of the bundle is still read.
	// An error means the bundle could not be read at all (it vanished,
	// it is not this tool's format). An import reads several bundles
	// at once, on as many workers as cores: Read is safe to call from
	// several goroutines, and what it returns depends on b's files
	// alone.
	Read(ctx context.Context, b Bundle) (*Result, error)
}

// Bundle is the files of one or more source sessions that are read
// together. Files[0] names the bundle; all paths are absolute or as
// given.
type Bundle struct {
	Files []string
}

// Name is the bundle's main file.
func (b Bundle) Name() string {
	if len(b.Files) == 0 {
		return ""
	}
	return b.Files[0]
}

// Session is one source session as a reader found it, in loom's terms.
// The importer gives it a loom id, a key (<tool>:<SourceID>), its
// project (from Cwd), seq numbers, turns and costs.
type Session struct {
	// SourceID is the tool's id of the session; it is unique within the
	// tool and one line. Sub-agent sessions and abandoned branches get
	// ids derived from their parent's (see Kind).
	SourceID string
	// Kind is loom.KindMain, loom.KindSubagent (a sub-agent's
	// transcript; ParentSourceID names the session that ran it) or
	// loom.KindFork (an abandoned branch of ParentSourceID's tree: an
	// edit, a rewind). A fork's Messages hold the whole branch, from
	// the first message, the shared ones included; ForkTurn is the last
	// turn it shares whole with its parent.
	Kind           string
	ParentSourceID string
	ForkTurn       int
	// Title is the tool's own title or summary of the session, if it
	// has one; empty means the first prompt.
	Title     string
	Cwd       string
	GitBranch string
	// Version is the tool's version that wrote the session.
	Version  string
	Model    string
	Provider string
	// Path is the file the session was read from.
	Path string
	// Origin names the loom session a handed-off file continues (see
	// package handoff); the importer makes the session a fork of it.
	Origin    *handoff.Origin
	CreatedAt time.Time
	UpdatedAt time.Time
	// Inline says the session is made of what its parent's file
	// repeats of a file of its own (Claude Code's agent_progress
	// lines): where a session of its SourceID is stored from another
	// file, that reading stands, and this one and its forks are left
	// out.
	Inline bool
	// Messages in order, each with its source id (ID), role, parts,
	// model, provider, usage and times; Seq and SessionID are left
	// for the importer. Part ids must be stable: reading the same file
	// twice gives the same ids (for instance <message id>/<index>), so
	// that a re-import recognises what it stored. An agent part's
	// SessionID holds the SourceID of the sub-agent session it ran.
	Messages []*loom.Message
	// Replaced names the messages an earlier version of the reader
	// made of lines that this version reads into another message: each
	// such id maps to the id of the message that holds what it held
	// now, which an earlier version stored too (Codex's compaction, once
	// a reply and the summary message after it, is one message since).
	// A copy imported by that version keeps them: a re-import takes
	// them as part of that message, so that it neither stores anything
	// twice nor takes the copy for a rewound one.
	Replaced map[string]string
	// Renamed names the messages that an earlier version of the reader
	// stored under other ids: each id of Messages maps to the id that
	// version gave it (Claude Code's lines without a uuid were
	// "line-<n>", the same in every session). A copy imported by that
	// version keeps those ids: a re-import takes the message, and its
	// parts (whose ids start with the message's), under them, so that it
	// neither stores anything twice nor takes the copy for a rewound one.
	Renamed map[string]string
	// Added names the messages that an earlier version of the reader
	// did not make at all (Claude Code's instructions attachments, once
	// only counted, are system messages since). A copy imported by that
	// version lacks them: a re-import that finds the copy lines up with
	// the source without them grows it as that version would, leaving
	// them out, so that it neither takes the copy for a rewound one nor
	// stores what it holds twice (a fresh import, or --rescan's, has
	// them).
	Added map[string]bool
}

// Result is what a reader found in one bundle.
type Result struct {
	// Sessions in the order they should be written: each parent before
	// its sub-agents and forks.
	Sessions []*Session
	// Skipped counts lines or records left out on purpose, by type
	// (for instance "progress", "file-history-snapshot", or
	// "unknown:<type>" for a type the reader does not know).
	Skipped map[string]int
	// Problems are malformed lines or records, each reported with its
	// file and line.
	Problems []Problem
	// Titles are the titles this bundle gives sessions read from
	// another bundle of the tool, by SourceID: a Claude Code session's
	// task call names the sub-agent whose file, too big to be read
	// with it, is a bundle of its own. Such a session takes its title
	// from here, when it is made or read later in the run, or has it
	// set when it is stored already.
	Titles map[string]string

	// unreadable counts the files of the bundle that could not be read
	// at all while the rest of it was (Unreadablef).
	unreadable int
	// lost indexes the lines problems name (LostLine).
	lost *lostIndex
}

// Unreadablef adds the problem of a file of the bundle that could not
// be read at all (not JSON, too large), the rest of the bundle read: as
// Problemf, and the file counts as one that could not be read (the
// import exits 1), as a bundle of which nothing could be read does. An
// empty file is no failure (badinput.go): its line says it is empty.
func (r *Result) Unreadablef(file string, line int, reason string) {
	if r.Empty(file) {
		return
	}
	r.Problemf(file, line, reason)
	r.unreadable++
}

// Skip counts one line or record of type t as skipped; a nil Result
// counts nothing (a reader going over what it counted once already).
func (r *Result) Skip(t string) {
	if r == nil {
		return
	}
	if r.Skipped == nil {
		r.Skipped = map[string]int{}
	}
	if t == "" {
		// A record naming no type is counted as such, never under an
		// empty label ("skipped 1 , …").
		t = "untyped"
	}
	r.Skipped[t]++
}

// Problem records a line or record a reader could not read.
type Problem struct {
	File string `json:"file"`
	// Line is the 1-based line number, 0 when the file is not read by
	// lines.
	Line   int    `json:"line,omitempty"`
	Reason string `json:"reason"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return p.File + ":" + strconv.Itoa(p.Line) + ": " + p.Reason
	}
	return p.File + ": " + p.Reason
}

// Problemf adds a problem at file and line.
func (r *Result) Problemf(file string, line int, reason string) {
	r.Problems = append(r.Problems, Problem{File: file, Line: line, Reason: reason})
}

// StatRoot is how a reader's Bundles looks at its root: its file
// information, nil (and no error) when the root does not exist, or the
// error, named with the tool.
func StatRoot(tool, root string) (fs.FileInfo, error) {
	fi, err := os.Stat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	return fi, nil
}

// FileRoot is how a Bundles that lists a directory looks at its root
// first: a root that is a file is its own one bundle, read whatever its
// name, and dir reports a directory to list. A root that does not exist
// has no bundles; one that cannot be looked at is an error (StatRoot).
func FileRoot(tool, root string) (bs []Bundle, dir bool, err error) {
	fi, err := StatRoot(tool, root)
	if fi == nil {
		return nil, false, err
	}
	if !fi.IsDir() {
		return []Bundle{{Files: []string{root}}}, false, nil
	}
	return nil, true, nil
}

// ToolDir is where a tool keeps its files: the directory its override
// variable envVar names when set (env may be nil), else home joined with
// rel; empty when neither is known.
func ToolDir(env func(string) string, home, envVar string, rel ...string) string {
	if env != nil {
		if dir := env(envVar); dir != "" {
			return dir
		}
	}
	if home == "" {
		return ""
	}
	return filepath.Join(append([]string{home}, rel...)...)
}

// SharedRoots is the roots that more than one of fms names on this
// machine (Open Codex's ~/.codex/sessions is the Codex CLI's too): such
// a directory being there says only that one of them is, so an agent is
// found there only by files of its own.
func SharedRoots(fms []Format, env func(string) string, home string) map[string]bool {
	seen := map[string]int{}
	for _, fm := range fms {
		for _, r := range fm.Roots(env, home) {
			seen[filepath.Clean(r)]++
		}
	}
	shared := map[string]bool{}
	for r, n := range seen {
		if n > 1 {
			shared[r] = true
		}
	}
	return shared
}

// Under is the one root dir joined with rel, the directory a tool keeps
// its sessions in below its own (ToolDir) or the home directory: none
// when dir is empty, the tool's directory unknown.
func Under(dir string, rel ...string) []string {
	if dir == "" {
		return nil
	}
	return []string{filepath.Join(append([]string{dir}, rel...)...)}
}

// HandoffDir is the directory tool keeps its files in (ToolDir of h's
// environment and home), which its handoff writer writes under; an
// error when there is none.
func HandoffDir(tool string, h *handoff.Handoff, envVar string, rel ...string) (string, error) {
	dir := ToolDir(h.Env, h.Home, envVar, rel...)
	if dir == "" {
		return "", fmt.Errorf("%s: no home directory to write to", tool)
	}
	return dir, nil
}

// Finder is a Format whose sessions can be found by their id alone: how
// a tool's notify program, which is told a session's id but not its
// file, imports that session (loom session import --hook).
type Finder interface {
	// FindSession returns the file of the session with the tool's id id
	// under roots (the Format's Roots), "" when there is none.
	FindSession(ctx context.Context, roots []string, id string) (string, error)
}

// ReplyWaiter is a Format whose tool runs its end-of-turn hook before it
// has written the turn's reply to the session file, and passes the
// reply's text to the hook (Claude Code's Stop): the hook waits for the
// reply to reach the file before it imports it.
type ReplyWaiter interface {
	// AwaitReply waits, at most wait, until the session file at path
	// holds the reply whose text is text, and reports whether it does.
	AwaitReply(ctx context.Context, path, text string, wait time.Duration) bool
}

// Keep adds s to the result when it has messages, dated by its first
// message when it has no time of its own; a session without messages is
// counted as skipped, as "empty-<what>".
func (r *Result) Keep(s *Session, what string) {
	if len(s.Messages) == 0 {
		r.Skip("empty-" + what)
		return
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = s.Messages[0].CreatedAt
	}
	r.Sessions = append(r.Sessions, s)
}
