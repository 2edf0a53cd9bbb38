package synclog

import (
	"time"

	"github.com/loomhq/loom"
)

// TypeOriginalKept is a chunk of the original bytes an import read of an
// agent's file (loom.OriginalChunk), so that another machine can read
// the session again with its own readers (`loom session reimport`). Only
// the chunks of a file that holds one session are recorded: a database
// of several sessions names none, and stays on the machine that read it.
const TypeOriginalKept Type = 14

// OriginalKept is one chunk of the file Path, of the session SessionID:
// Size bytes of the file from Offset, zstd-compressed in Data.
type OriginalKept struct {
	SessionID string    `json:"session_id"`
	Tool      string    `json:"tool"`
	Path      string    `json:"path"`
	Bundle    string    `json:"bundle"`
	Offset    int64     `json:"offset"`
	Size      int64     `json:"size"`
	Tail      string    `json:"tail"`
	ModTime   time.Time `json:"mod_time"`
	Data      []byte    `json:"data"`
}

// Type implements Payload.
func (*OriginalKept) Type() Type { return TypeOriginalKept }

// Validate implements Payload.
func (p *OriginalKept) Validate() error {
	if err := validID(p.SessionID, "original's session"); err != nil {
		return err
	}
	c := p.Chunk("x")
	if err := c.Validate(); err != nil {
		return invalid("%s", loom.ErrorMessage(err))
	}
	return nil
}

// Chunk is the chunk p records, of user.
func (p *OriginalKept) Chunk(user string) loom.OriginalChunk {
	return loom.OriginalChunk{UserID: user, Tool: p.Tool, Path: p.Path, Bundle: p.Bundle, SessionID: p.SessionID,
		Offset: p.Offset, Size: p.Size, Data: p.Data, Tail: p.Tail, ModTime: p.ModTime}
}

// OriginalRecord is the record of chunk c, nil when c names no session.
func OriginalRecord(c loom.OriginalChunk) *OriginalKept {
	if c.SessionID == "" {
		return nil
	}
	return &OriginalKept{SessionID: c.SessionID, Tool: c.Tool, Path: c.Path, Bundle: c.Bundle, Offset: c.Offset,
		Size: c.Size, Tail: c.Tail, ModTime: c.ModTime, Data: c.Data}
}
