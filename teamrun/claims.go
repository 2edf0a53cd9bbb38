package teamrun

import (
	"errors"
	"fmt"
	"os"

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
