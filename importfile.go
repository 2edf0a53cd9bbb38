package loom

import "time"

// ImportedFile records one source file that an import of another agent's
// sessions read: its size and modification time then, so that a later
// import recognises the file unchanged without reading it, and which
// sessions came from it.
type ImportedFile struct {
	UserID string `json:"user_id"`
	// Path is the file's path as the import found it.
	Path string `json:"path"`
	// Tool is the agent that wrote the file (claude-code, codex, …).
	Tool string `json:"tool"`
	// Bundle is the main file of the group the file was read with (a
	// session file with its sub-agents' files); a file alone is its own
	// bundle.
	Bundle  string    `json:"bundle"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
	// SourceID is the tool's id of the session the bundle holds, and
	// SessionID the id of its copy in loom; both empty when the bundle
	// holds several sessions (an opencode database).
	SourceID   string    `json:"source_id"`
	SessionID  string    `json:"session_id"`
	ImportedAt time.Time `json:"imported_at"`
}

// Validate checks a record before it is stored.
func (f *ImportedFile) Validate() error {
	switch {
	case f.UserID == "":
		return Errorf(EINVALID, "imported file record needs a user")
	case f.Path == "" || f.Tool == "" || f.Bundle == "":
		return Errorf(EINVALID, "imported file record needs a path, a tool and a bundle")
	}
	return nil
}
