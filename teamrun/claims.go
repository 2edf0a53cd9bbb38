package teamrun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/loomhq/loom/team"
)

// claims is the file (the team's directory's claims) that says, for
// each session of the team's store, the chain head (seq) of the record
// that wrote it and its author's fingerprint: one line "ID SEQ AUTHOR"
// appended per session written, the last line of an id its claim: a
// record of whose writing a session here, for whoever audits a
// machine's copy. A session's owner is the member its copy names
// (apply); appended, so a team of many sessions does not rewrite it.
type claims string

// add appends the claim of the session id that the record hd wrote.
func (c claims) add(id string, hd *team.Header) error {
	if c == "" {
		return nil
	}
	f, err := os.OpenFile(string(c), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %d %s\n", id, hd.ChainSeq, hd.Author)
	return errors.Join(err, f.Close())
}

// tombstones is the file (the team's directory's deleted) that keeps,
// for each session of the team's store its owner deleted, whose it was:
// one line "ID FINGERPRINT" (the owner member's) appended per deletion
// applied. A session has one owner, forever: once deleted, the store
// holds no copy that says whose it was (apply), and a record of another
// member's that writes it again would be applied as a new session of
// theirs; this keeps the owner after the copy is gone, so that it is set
// aside on every machine that applied the deletion, whatever the hub
// claims (its operator may delete team_sessions). Ids and fingerprints
// only: nothing of what the session said.
type tombstones struct {
	path string
	// owners are the file's lines, read at the first use.
	owners map[string]string
}

// owner returns the fingerprint of the member whose session id was when
// its owner deleted it, "" for a session not deleted here.
func (t *tombstones) owner(id string) (string, error) {
	if t == nil || t.path == "" {
		return "", nil
	}
	if t.owners == nil {
		b, err := os.ReadFile(t.path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("the team's deleted sessions: %w", err)
		}
		t.owners = map[string]string{}
		for _, line := range strings.Split(string(b), "\n") {
			if id, fp, ok := strings.Cut(line, " "); ok {
				t.owners[id] = fp
			}
		}
	}
	return t.owners[id], nil
}

// add keeps that session id, which member owner owned, was deleted.
func (t *tombstones) add(id, owner string) error {
	if t == nil || t.path == "" {
		return nil
	}
	if had, err := t.owner(id); err != nil || had == owner {
		return err
	}
	f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %s\n", id, owner)
	if err = errors.Join(err, f.Close()); err == nil {
		t.owners[id] = owner
	}
	return err
}
