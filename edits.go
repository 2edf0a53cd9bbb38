package loom

import (
	"context"
	"time"
)

// Kinds of file edit (FileEdit.Op).
const (
	// EditWrite is a tool call that wrote a whole file (Write,
	// write_file, create): every line it holds is known.
	EditWrite = "write"
	// EditChange is a tool call that replaced text in a file (Edit,
	// MultiEdit, replace, str_replace, a patch): the lines it put in
	// are known, and where.
	EditChange = "edit"
	// EditDelete is a tool call or a patch that deleted a file.
	EditDelete = "delete"
	// EditMove is a patch or a shell command that moved a file to Path
	// from From.
	EditMove = "move"
	// EditShell is a shell command that wrote the file in a way whose
	// content cannot be known from the call (sed -i, a redirect of a
	// program's output, a script).
	EditShell = "shell"
	// EditProgram is a program the agent ran (a script of python3, node
	// …) whose text names the file as one it writes: it probably wrote
	// it, but what it wrote is not known (blame credits it with a lower
	// confidence, and says so).
	EditProgram = "program"
)

// FileEdit is one change an agent's tool call made to a file, as the
// edit index keeps it: what `loom blame` matches a repository's lines
// against. An edit belongs to the message that holds the tool call;
// the session is the one that stores that message (the oldest live
// one reading it, for a message that forks share).
type FileEdit struct {
	SessionID string `json:"session_id"`
	MessageID string `json:"message_id"`
	Seq       int64  `json:"seq"`
	Turn      int    `json:"turn"`
	// PartID is the tool part, N the edit's place among those the
	// message's parts made (a patch can change several files).
	PartID string `json:"part_id"`
	N      int    `json:"n"`
	Tool   string `json:"tool"`
	Op     string `json:"op"`
	// Path is the file, absolute, as the session's machine named it
	// (resolved against the session's working directory); From is
	// where a move took it from.
	Path string `json:"path"`
	From string `json:"from,omitempty"`
	// Agent is the tool that wrote the session (its source tool, or
	// "loom"); Model and Provider what produced the message.
	Agent    string    `json:"agent"`
	Model    string    `json:"model"`
	Provider string    `json:"provider"`
	At       time.Time `json:"at"`
	// Member is the member whose session it is, for a teammate's
	// session in a team's store (Session.Member); "" for one's own.
	Member string `json:"member,omitempty"`
	// Lines are the hashes of the lines the edit put in (see package
	// fileedit), 0 between runs of lines that are not together.
	Lines []uint64 `json:"-"`
	// Parts are the stored parts of the message, when the query asked
	// for them (EditQuery.Parts): what the edit's text is read from.
	Parts []byte `json:"-"`
}

// EditQuery selects edits from the index.
type EditQuery struct {
	UserID string
	// Paths keeps the edits of these files (absolute paths), Under
	// those of every file below this directory, SessionID those of one
	// session (the messages it stores itself). At least one is set.
	Paths     []string
	Under     string
	SessionID string
	// Dirs keeps the edits of every file below any of these directories:
	// Under for several at once (one query where each directory was
	// one). A bare query may give an edit below two of them (one inside
	// the other) once for each.
	Dirs []string
	// Parts asks for each edit's message parts (FileEdit.Parts).
	Parts bool
	// Trashed keeps the edits of sessions in the trash too.
	Trashed bool
	// Bare reads the edits' own columns only (Path, From, Op, Tool,
	// Lines), of every user's sessions, without their messages and
	// sessions: the quick look over a whole repository that finds which
	// files to read whole (with UserID) next.
	Bare bool
	// PathsOnly, with Bare, reads each edit's Path alone (the index of
	// the edits' paths, not their rows): which files a directory's edits
	// name, the quickest look of all.
	PathsOnly bool
}

// EditSource is a stored message body the edit index has not read yet:
// its parts as stored (a JSON array) and the working directory of a
// session that holds it, which relative paths are resolved against.
// Mark changes when the body is rewritten (a redaction), so that edits
// read from an older form of it are never stored.
type EditSource struct {
	Body  int64
	Mark  int64
	Parts []byte
	Cwd   string
}

// IndexedEdit is one edit as the index stores it, read from body Body.
type IndexedEdit struct {
	Body   int64
	N      int
	PartID string
	Tool   string
	Op     string
	Path   string
	From   string
	Lines  []uint64
}

// EditStore is a Store that keeps an index of the file edits its
// messages' tool calls made (docs/blame.md). A body is marked for the
// index in the transaction that stores it (an append, an import, a
// sync, a rewrite that redacts it); package fileedit reads the marked
// bodies and stores what it finds (UnindexedEdits, PutEdits) before
// the index is read. Like vectors, edits are derived data: never
// synced or exported, gone with their body.
type EditStore interface {
	// UnindexedEdits returns up to n bodies marked for the index, in
	// order of id.
	UnindexedEdits(ctx context.Context, n int) ([]EditSource, error)
	// PutEdits stores edits, read from done, and unmarks done, in one
	// transaction. The edits of a body whose mark changed meanwhile are
	// dropped; it stays marked.
	PutEdits(ctx context.Context, done []EditSource, edits []IndexedEdit) error
	// Edits returns the edits q selects, oldest first, each with its
	// message and session; it does not look at marked bodies.
	Edits(ctx context.Context, q EditQuery) ([]FileEdit, error)
	// ProjectRoots returns the project roots userID's sessions of
	// project projectID recorded: where else a repository was when its
	// sessions ran (another machine, a move).
	ProjectRoots(ctx context.Context, userID, projectID string) ([]string, error)
}

// EditVersioner is an EditStore that names, cheaply, the state of
// everything its edit queries and project roots answer from: the edit
// index's rows, the messages and sessions they are read through, the
// sessions' trash state and project roots. EditVersion returns a value
// that changes in the transaction of any change to those (a new edit
// indexed, a message rewritten or deleted, a session forked, trashed,
// restored, purged or moved), and only one state has it: what was read
// after a version was read may be kept under it, and stands while
// EditVersion returns it again. loom blame keeps its answer for a file
// so (docs/blame.md, "The answer kept").
type EditVersioner interface {
	EditVersion(ctx context.Context) (string, error)
}

// RecordedRoot is a project root sessions recorded: where a repository
// was when they ran (on this machine or another), its project, and how
// many of the user's sessions ran there.
type RecordedRoot struct {
	Root        string `json:"root"`
	ProjectID   string `json:"project_id"`
	ProjectName string `json:"project_name"`
	Sessions    int    `json:"sessions"`
}

// RootLister is an EditStore that lists every project root its user's
// sessions recorded: what blame matches a repository's clone against
// when its sessions were recorded at another path (another machine, a
// teammate's, a clone moved) under another project.
type RootLister interface {
	RecordedRoots(ctx context.Context, userID string) ([]RecordedRoot, error)
}
