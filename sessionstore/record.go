package sessionstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/synclog"
)

// sessionChanged is the record of update u of a session, out as stored
// after it: the fields u sets, as stored (a title trimmed), the archived
// state with its time, and the session's updated time when the change is
// activity (see query.UpdateColumns). It is nil when u changes nothing.
func sessionChanged(out *loom.Session, u loom.SessionUpdate) synclog.Payload {
	p := &synclog.SessionChanged{SessionID: out.ID, Description: u.Description, Key: u.Key, Project: u.Project,
		Cwd: u.Cwd, Model: u.Model, Provider: u.Provider, Profile: u.Profile, GitBranch: u.GitBranch}
	if u.Title != nil {
		t := strings.TrimSpace(*u.Title)
		p.Title = &t
	}
	activity := p.Title != nil || p.Description != nil || p.Key != nil || p.Project != nil || p.Cwd != nil ||
		p.Model != nil || p.Provider != nil || p.Profile != nil || p.GitBranch != nil
	if u.Archived != nil {
		p.Archive = &synclog.Archive{At: out.ArchivedAt}
	}
	if activity && !u.KeepUpdatedAt {
		at := out.UpdatedAt
		p.At = &at
	}
	if !activity && p.Archive == nil {
		return nil
	}
	return p
}

// recordChunk is how many messages one record of an import, or of a
// store's history when sync is set up, holds at most, and RecordBytes
// about how much content (ChunkLen): so that a record stays far below
// synclog.MaxPayload as JSON, and below what a hub takes of one record
// sealed (loom.MaxSyncBody) whatever compression gains.
const (
	recordChunk = 1000
	RecordBytes = 4 << 20
)

// ChunkLen returns how many of msgs, one at least, the next record of
// them holds: up to recordChunk messages and about RecordBytes of their
// content. A single message larger than that is a record of its own.
func ChunkLen(msgs []*loom.Message) int {
	size := 0
	for i, m := range msgs {
		if i == recordChunk {
			return i
		}
		size += 256 // ids, role, times, usage
		for _, p := range m.Parts {
			size += 64 + len(p.Text) + len(p.Input) + len(p.Output) + len(p.Error) + len(p.Title) + len(p.Metadata) + len(p.URL)
		}
		if i > 0 && size > RecordBytes {
			return i
		}
	}
	return len(msgs)
}

// importRecords are the records of importing d: the session with its
// first messages, then the rest appended in chunks (ChunkLen,
// chunkRecord), then its archive again (rearchive). The first record's
// row leaves out the usage of the later chunks, which their appends add
// when applied.
func importRecords(d *loom.SessionData) []synclog.Payload {
	first := d.Messages[:ChunkLen(d.Messages)]
	row := *d.Session
	for _, m := range d.Messages[len(first):] {
		row.Usage.Sub(m.Usage)
	}
	out := []synclog.Payload{chunkRecord(&row, first, "")}
	for i := len(first); i < len(d.Messages); {
		n := ChunkLen(d.Messages[i:])
		out = append(out, chunkRecord(&row, d.Messages[i:i+n], d.Messages[i-1].ID))
		i += n
	}
	if p := rearchive(d.Session, len(out)); p != nil {
		out = append(out, p)
	}
	return out
}

// chunkRecord is the record of chunk, messages of session row in order:
// the session imported with them when prev is "" (they are its first),
// else an append of them after message prev.
func chunkRecord(row *loom.Session, chunk []*loom.Message, prev string) synclog.Payload {
	if prev == "" {
		return &synclog.Imported{Sessions: []*loom.SessionData{{Session: row, Messages: chunk}}}
	}
	return &synclog.MessagesAppended{SessionID: row.ID, FirstSeq: chunk[0].Seq, PrevID: prev,
		Messages: chunk, At: chunk[len(chunk)-1].CreatedAt}
}

// rearchive is the record that puts session row, written in records
// records by chunkRecord, back in the archive: applying an append takes
// a session out of it. Nil when row is not archived or took one record.
func rearchive(row *loom.Session, records int) synclog.Payload {
	if row.ArchivedAt == nil || records < 2 {
		return nil
	}
	return &synclog.SessionChanged{SessionID: row.ID, Archive: &synclog.Archive{At: row.ArchivedAt}}
}

// HistorySteps are what recording a store's history (recordHistory)
// reads, beside ForkReads.UsageOf.
type HistorySteps interface {
	// AllSessions returns every session, in the trash or archived too,
	// oldest first (then by id), so a parent before its forks and
	// sub-agents.
	AllSessions(ctx context.Context) ([]*loom.Session, error)
	// MessagesFrom returns up to limit messages of session id from seq
	// from on, as the session reads them.
	MessagesFrom(ctx context.Context, id string, from int64, limit int) ([]*loom.Message, error)
}

// historyReads are the reads of recordHistory.
type historyReads interface {
	HistorySteps
	UsageOf(ctx context.Context, src string, from, to int64) (loom.Usage, error)
}

// recordHistory records in log every session tx holds, as sync is set
// up on its store: each as an import of it as it is now (importRecords'
// records, its lock left out, a fork as a whole session with its
// inherited messages), reading recordChunk messages at a time, so a long
// session's history is never in memory at once.
func recordHistory(ctx context.Context, tx historyReads, log *SyncLog) error {
	sessions, err := tx.AllSessions(ctx)
	if err != nil {
		return err
	}
	for _, x := range sessions {
		if err := recordSession(ctx, tx, log, x); err != nil {
			return fmt.Errorf("session %s: %w", x.ID, err)
		}
	}
	return nil
}

// recordSession records session x as recordHistory does: an import of
// it with its first messages, then appends of the rest, each record as
// long as ChunkLen says; then its archive again (rearchive).
func recordSession(ctx context.Context, tx historyReads, log *SyncLog, x *loom.Session) error {
	x.Lock = nil // a lock is this host's own
	records, prev, next := 0, "", int64(1)
	for {
		page, err := tx.MessagesFrom(ctx, x.ID, next, recordChunk)
		if err != nil {
			return err
		}
		if records > 0 && len(page) == 0 {
			break
		}
		full := len(page) == recordChunk
		for first := true; first || len(page) > 0; first = false {
			n := ChunkLen(page)
			if records == 0 && (n < len(page) || full) {
				// The later chunks' appends add their usage when applied.
				later, err := tx.UsageOf(ctx, x.ID, int64(n)+1, span.OpenSeq)
				if err != nil {
					return err
				}
				row := *x
				row.Usage.Sub(later)
				x = &row
			}
			if err := log.record(ctx, chunkRecord(x, page[:n], prev)); err != nil {
				return err
			}
			records++
			if n > 0 {
				prev, next = page[n-1].ID, page[n-1].Seq+1
			}
			page = page[n:]
		}
		if !full {
			break
		}
	}
	if p := rearchive(x, records); p != nil {
		return log.record(ctx, p)
	}
	return nil
}
