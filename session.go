package loom

import (
	"encoding/base64"
	"strings"
	"time"
)

// Session kinds: a normal session, a fork of another, or the child session
// of a sub-agent.
const (
	KindMain     = "main"
	KindFork     = "fork"
	KindSubagent = "subagent"
)

// Project is where a command-line session belongs: the git top-level
// directory (or the working directory outside git), its base name, and the
// first 16 hex digits of the SHA-256 of its path; for a work tree whose
// repository has a remote, the id and name are the repository's (the hash
// of the normalised remote URL, the repository's name) and the root is
// the clone the session was made in.
type Project struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Root string `json:"root"`
}

// Lock records the process attached to a session for writing.
type Lock struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
	// Expires is when a holder on another host stops being trusted
	// unless it renews its lease. Not part of the JSON shape.
	Expires time.Time `json:"-"`
	// Owner identifies the Store handle that holds the lock.
	Owner string `json:"-"`
}

// HeldElsewhere reports whether a live holder other than the store handle
// owner has s's lock. Engines fill Lock only while its holder is alive,
// so a dead holder's lock counts as free.
func (s *Session) HeldElsewhere(owner string) bool {
	return s.Lock != nil && s.Lock.Owner != owner
}

// CheckNotHeld returns the ELOCKED error of the first session another
// live holder than owner has, nil when owner may change them all.
func CheckNotHeld(sessions []*Session, owner string) error {
	for _, s := range sessions {
		if s.HeldElsewhere(owner) {
			return Locked(s.ID, s.Lock)
		}
	}
	return nil
}

// Session is one durable thread of work: an ordered list of messages plus
// metadata. It is created by its first message.
type Session struct {
	ID           string     `json:"id"`
	Key          string     `json:"key"`
	Title        string     `json:"title"`
	Description  string     `json:"description"`
	UserID       string     `json:"user_id"`
	Surface      string     `json:"surface"`
	Kind         string     `json:"kind"`
	ParentID     string     `json:"parent_id"`
	ForkTurn     int        `json:"fork_turn"`
	Project      Project    `json:"project"`
	Cwd          string     `json:"cwd"`
	Model        string     `json:"model"`
	Provider     string     `json:"provider"`
	Profile      string     `json:"profile"`
	MessageCount int        `json:"message_count"`
	TurnCount    int        `json:"turn_count"`
	LastPrompt   string     `json:"last_prompt"`
	Usage        Usage      `json:"usage"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	DeletedAt    *time.Time `json:"deleted_at"`
	// ArchivedAt is when the session was archived: hidden from lists and
	// default searches, kept until it is deleted. Nil when it is not.
	ArchivedAt *time.Time `json:"archived_at"`
	Lock       *Lock      `json:"lock"`
	// SummarySeq is the seq of the latest compaction summary, 0 if none.
	// The model's context is that summary and everything after it.
	SummarySeq int64 `json:"summary_seq,omitempty"`
	// GitBranch is the git branch the session's work was on.
	GitBranch string `json:"git_branch"`
	// Source says where an imported session came from; nil for loom's
	// own sessions.
	Source *Source `json:"source"`
	// Team and Member say whose a teammate's session is, in a team's
	// store on a member's machine: the team's id and the member's name
	// as the team's verified membership chain names the record's author.
	// Both are "" for one's own sessions. Key stays the member's own key:
	// two members' sessions of one key are two sessions (the key is
	// unique per team, member, project and user).
	Team   string `json:"team,omitempty"`
	Member string `json:"member,omitempty"`
}

// SessionSummary is what a listing shows of a session (loom session
// list's table, the picker): the fields of Session it names, and
// nothing else. Reading it costs a listing a third of the columns a
// whole Session does; Session by id gives the rest.
type SessionSummary struct {
	ID           string     `json:"id"`
	Key          string     `json:"key"`
	Title        string     `json:"title"`
	Surface      string     `json:"surface"`
	Kind         string     `json:"kind"`
	ParentID     string     `json:"parent_id"`
	ForkTurn     int        `json:"fork_turn"`
	Project      Project    `json:"project"`
	MessageCount int        `json:"message_count"`
	LastPrompt   string     `json:"last_prompt"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	DeletedAt    *time.Time `json:"deleted_at"`
	ArchivedAt   *time.Time `json:"archived_at"`
	GitBranch    string     `json:"git_branch"`
	// Description is the session's description: what its user wrote, or
	// the summary written once it went quiet (package summarize).
	Description string `json:"description,omitempty"`
	// Team and Member are those of a teammate's session (Session.Team).
	Team   string `json:"team,omitempty"`
	Member string `json:"member,omitempty"`
}

// Summary returns the summary of s.
func (s *Session) Summary() *SessionSummary {
	return &SessionSummary{ID: s.ID, Key: s.Key, Title: s.Title, Surface: s.Surface, Kind: s.Kind,
		ParentID: s.ParentID, ForkTurn: s.ForkTurn, Project: s.Project, MessageCount: s.MessageCount,
		LastPrompt: s.LastPrompt, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, DeletedAt: s.DeletedAt,
		ArchivedAt: s.ArchivedAt, GitBranch: s.GitBranch, Description: s.Description, Team: s.Team, Member: s.Member}
}

// Source is where an imported session came from: the tool that wrote it
// (its surface), that tool's version, and the file it was read from.
type Source struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	Path    string `json:"path"`
}

// SurfaceOf returns the surface of a key: the part before the first colon.
func SurfaceOf(key string) string {
	if i := strings.IndexByte(key, ':'); i >= 0 {
		return key[:i]
	}
	return key
}

// Validate checks the fields a new session must have.
func (s *Session) Validate() error {
	switch {
	case s.ID == "":
		return Errorf(EINVALID, "session id required")
	case s.UserID == "":
		return Errorf(EINVALID, "session user required")
	}
	switch s.Kind {
	case "", KindMain, KindFork, KindSubagent:
	default:
		return Errorf(EINVALID, "unknown session kind %q", s.Kind)
	}
	if s.Kind == KindSubagent && s.ParentID == "" {
		return Errorf(EINVALID, "a sub-agent session needs a parent")
	}
	if s.Key != "" {
		if err := ValidKey(s.Key); err != nil {
			return err
		}
	}
	return validText("title", s.Title)
}

// SessionFilter selects sessions for List. Zero fields do not filter.
type SessionFilter struct {
	UserID    string
	ProjectID string
	// ProjectName keeps sessions of projects with this base name, in any
	// directory (how a project that moved on disk is found again).
	ProjectName string
	Surface     string
	Key         string
	ParentID    string
	Kind        string
	// Text keeps sessions whose title, key, description or last prompt
	// contains it, ignoring case (of ASCII letters at least; engines fold
	// others as their databases do), or whose id starts with it (4
	// characters or more), or one of whose newest matching messages
	// (MaxTextMatches of them) matches it as a search does.
	Text string
	// GitBranch keeps sessions whose work was on this git branch.
	GitBranch string
	// Deleted lists the trash instead of live sessions.
	Deleted bool
	// Archived says whether archived sessions are left out (the
	// default), the only ones listed, or listed with the others.
	Archived ArchiveFilter
	// UpdatedBefore keeps sessions last updated before this time.
	UpdatedBefore time.Time
	// Before is a cursor: sessions updated before (UpdatedAt, ID).
	Before *Cursor
	Limit  int
}

// ArchiveFilter selects sessions by whether they are archived.
type ArchiveFilter int

const (
	// HideArchived leaves archived sessions out, as lists and the
	// picker show sessions.
	HideArchived ArchiveFilter = iota
	// OnlyArchived lists archived sessions alone (--archived).
	OnlyArchived
	// WithArchived lists every session, archived or not: how a session
	// is found by its key, which an archived session keeps.
	WithArchived
)

// MaxTextMatches bounds the messages a SessionFilter.Text search reads:
// the newest this many matches of the user's messages. A word found in
// most messages would otherwise make every listing read all of them.
const MaxTextMatches = 2000

// FamilyQuery selects the lineage trees Store.Family returns.
type FamilyQuery struct {
	// IDs are the sessions whose families are read.
	IDs []string
	// UserID, when set, keeps to this user's sessions at every
	// generation.
	UserID string
	// SubagentsOnly follows sub-agent children only (not forks): what a
	// session carries with it when it is deleted or exported.
	SubagentsOnly bool
	// FromRoot starts each family at the oldest live ancestor of the
	// session instead of at the session itself: the whole tree it
	// belongs to. With SubagentsOnly it climbs from sub-agent sessions
	// to the sessions that spawned them only.
	FromRoot bool
	// MaxDepth bounds the generations below each family's root (and,
	// with FromRoot, above the session); 0 means MaxFamilyDepth.
	MaxDepth int
	// Limit bounds how many sessions are returned, 0 for no bound. When
	// it cuts, nearer generations are kept first, so every session
	// returned comes with its parent.
	Limit int
}

// MaxFamilyDepth is the deepest lineage Family follows. The store never
// makes a cycle of parent links, but a hand-edited database could hold
// one; the bound keeps the query finite.
const MaxFamilyDepth = 1000

// Cursor is a position in the newest-first session order.
type Cursor struct {
	UpdatedAt time.Time
	ID        string
}

// CursorAfter returns the cursor of the page that follows s.
func CursorAfter(s *Session) *Cursor { return &Cursor{UpdatedAt: s.UpdatedAt, ID: s.ID} }

// String encodes c as an opaque token for a client to pass back.
func (c *Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.UpdatedAt.UTC().Format(time.RFC3339Nano) + "|" + c.ID))
}

// ParseCursor decodes a token that Cursor.String made.
func ParseCursor(token string) (*Cursor, error) {
	bad := Errorf(EINVALID, "invalid cursor: pass the next value of a previous page")
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, bad
	}
	ts, id, ok := strings.Cut(string(b), "|")
	if !ok || id == "" {
		return nil, bad
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return nil, bad
	}
	return &Cursor{UpdatedAt: t, ID: id}, nil
}

// SessionUpdate changes a session's metadata; nil fields are kept.
type SessionUpdate struct {
	Title       *string
	Description *string
	Key         *string
	Project     *Project
	Cwd         *string
	Model       *string
	Provider    *string
	Profile     *string
	GitBranch   *string
	// Team and Member set whose teammate's session it is (Session.Team):
	// what a team's store on a member's machine says of its sessions.
	Team   *string
	Member *string
	// Archived archives the session (true) or brings it back (false).
	// It is not activity: updated_at stays as it was.
	Archived *bool
	// KeepUpdatedAt says the change is not activity either: updated_at
	// stays as it was, so the session keeps its place in lists, as its
	// project's current session, and its age for prune. It is how loom
	// moves sessions to their project's new id.
	KeepUpdatedAt bool
	// DescriptionIfEmpty says Description is written only where the
	// session's description is still empty when the change is made,
	// checked and written in one transaction: where it is not, the
	// change leaves Description out (the other fields still apply) and
	// records nothing of it for sync. It is how a summary is stored,
	// never over a description a user wrote meanwhile.
	DescriptionIfEmpty bool
}

// RewindOptions say where a session goes back to.
type RewindOptions struct {
	// Turn is the last turn the session keeps; the turns after it move
	// to a new fork.
	Turn int
	// ID is the new fork's id (default: a new one).
	ID string
}

// ForkOptions says where to fork and how to name the new session.
type ForkOptions struct {
	// Turn is the last turn copied; 0 copies every turn.
	Turn  int
	Title string
	Key   string
	// ID of the new session; generated when empty.
	ID string
}

// ResolveScope narrows reference resolution: the user whose sessions are
// searched, and the project whose keys are preferred.
type ResolveScope struct {
	UserID    string
	ProjectID string
	// Deleted resolves among trashed sessions (for restore).
	Deleted bool
}

// DeleteOptions say how Delete removes a session.
type DeleteOptions struct {
	// Purge removes the sessions for good instead of moving them to the
	// trash.
	Purge bool
	// Force deletes even while another live process holds a lock on the
	// session or its sub-agent sessions; that process's next write then
	// fails with ENOTFOUND.
	Force bool
}

// PruneOptions selects sessions not updated for a while: OlderThan
// zero selects every session (negative is EINVALID).
type PruneOptions struct {
	UserID    string
	ProjectID string
	OlderThan time.Duration
	DryRun    bool
}

// PruneResult says what a prune removed (or would remove) and what it kept
// because another process holds it.
type PruneResult struct {
	Removed []*Session
	Skipped []*Session
}
