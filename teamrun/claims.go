package teamrun

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/loomhq/loom/team"
)

// claims is the file (the team's directory's claims) that says, for
// each session of the team's store, the chain head (seq) of the record
// that wrote it and its author's fingerprint: one line "ID SEQ AUTHOR"
// appended per session written, the last line of an id its claim. It is
// read only when a second member's record names a session id the store
// holds as another's, which honest members never do; appended, so a
// team of many sessions does not rewrite it.
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

// of returns the claim of session id: the head its copy was written
// under and its author (0, "" when none is known: written before
// claims were kept, or by a record naming no head).
func (c claims) of(id string) (int64, string) {
	f, err := os.Open(string(c))
	if err != nil {
		return 0, ""
	}
	defer f.Close()
	var seq int64
	author := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// The author's fingerprint, last, holds spaces.
		fs := strings.SplitN(sc.Text(), " ", 3)
		if len(fs) == 3 && fs[0] == id {
			seq, _ = strconv.ParseInt(fs[1], 10, 64)
			author = fs[2]
		}
	}
	return seq, author
}

// earlier reports whether the record hd writes session id before the
// copy the store holds, in chain order: it names an earlier head; at
// the same head, its author joined the chain before. A copy whose claim
// is not known stays, as does one against a record naming no head.
func (c claims) earlier(v *Verified, id string, hd *team.Header) bool {
	if c == "" || hd.ChainSeq == 0 {
		return false
	}
	seq, author := c.of(id)
	switch {
	case seq == 0:
		return false
	case hd.ChainSeq != seq:
		return hd.ChainSeq < seq
	}
	return joinedAt(v, hd.Author) < joinedAt(v, author)
}

// joinedAt is the entry the member fp is (or is a machine of) joined
// the chain by.
func joinedAt(v *Verified, fp string) int64 {
	if m := v.MemberOf(fp); m != nil {
		if at, ok := v.Joined[m.Fingerprint()]; ok {
			return at
		}
	}
	return v.Seq + 1
}
