package teamrun

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"math"
	"strconv"
	"time"

	"github.com/loomhq/loom"
)

// blockChanges digests msgs, a page of a session's messages, block by
// block into blocks, and returns the seqs of the messages to send: those
// after sentSeq and those of a block whose digest differs from its known
// one. resent says whether any of them was sent before.
func blockChanges(msgs []*loom.Message, known []string, sentSeq int64, blocks *[]string) (changed map[int64]bool, resent bool) {
	changed = map[int64]bool{}
	for i := 0; i < len(msgs); {
		b := (msgs[i].Seq - 1) / BlockMessages
		j := i
		for j < len(msgs) && (msgs[j].Seq-1)/BlockMessages == b {
			j++
		}
		block := msgs[i:j]
		for int64(len(*blocks)) <= b {
			*blocks = append(*blocks, "")
		}
		(*blocks)[b] = digest(block, math.MaxInt64)
		same := b < int64(len(known)) && known[b] == digest(block, sentSeq)
		for _, m := range block {
			if m.Seq > sentSeq || !same {
				changed[m.Seq] = true
				resent = resent || m.Seq <= sentSeq
			}
		}
		i = j
	}
	return changed, resent
}

// digest is a short digest of msgs with seq up to upTo, as stored.
func digest(msgs []*loom.Message, upTo int64) string {
	d := &digester{h: sha256.New()}
	for _, m := range msgs {
		if m.Seq > upTo {
			break
		}
		d.message(m)
	}
	return hex.EncodeToString(d.h.Sum(nil)[:8])
}

// digester writes every field of a message into a hash, each ended by
// a 0 byte (a text holding one is told apart by its length, written
// before it): without encoding/json's reflection, which made the
// comparison of an unchanged project cost four times as much
// (BenchmarkPublishUnchanged).
type digester struct {
	h   hash.Hash
	buf []byte
}

func (d *digester) str(s string) {
	d.buf = strconv.AppendInt(d.buf[:0], int64(len(s)), 10)
	d.buf = append(d.buf, ':')
	d.buf = append(d.buf, s...)
	d.buf = append(d.buf, 0)
	d.h.Write(d.buf)
}

func (d *digester) num(n int64) {
	d.buf = strconv.AppendInt(d.buf[:0], n, 10)
	d.buf = append(d.buf, 0)
	d.h.Write(d.buf)
}

func (d *digester) time(t *time.Time) {
	if t == nil {
		d.num(-1)
		return
	}
	d.num(t.UnixNano())
}

func (d *digester) usage(u *loom.Usage) {
	if u == nil {
		d.num(-1)
		return
	}
	for _, n := range []int64{u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CacheWrite1hTokens, u.APICalls, u.Compactions, int64(math.Float64bits(u.CostUSD))} {
		d.num(n)
	}
}

func (d *digester) message(m *loom.Message) {
	d.num(m.Seq)
	for _, s := range []string{m.ID, m.Role, m.Model, m.Provider} {
		d.str(s)
	}
	d.usage(&m.Usage)
	if m.Error != nil {
		d.str(m.Error.Message)
		d.str(m.Error.Type)
	} else {
		d.num(-1)
	}
	d.time(&m.CreatedAt)
	d.time(m.CompletedAt)
	d.num(int64(m.Turn))
	d.num(int64(len(m.Parts)))
	for i := range m.Parts {
		p := &m.Parts[i]
		for _, s := range []string{p.ID, p.Type, p.Text, p.CallID, p.Name, p.Status, string(p.Input), string(p.Output), p.Error, p.Title, string(p.Metadata), p.Mime, p.Filename, p.URL, p.SessionID} {
			d.str(s)
		}
		d.time(p.StartedAt)
		d.time(p.EndedAt)
		if f := p.Source; f != nil {
			d.str(f.Type)
			d.str(f.Path)
			d.str(f.Text)
			d.num(int64(f.Start))
			d.num(int64(f.End))
		} else {
			d.num(-1)
		}
		d.usage(p.Usage)
	}
}

// metaDigest digests the fields of sess a record carries and the team's
// copy takes again: its title and description.
func metaDigest(sess *loom.Session) string {
	sum := sha256.Sum256([]byte(sess.Title + "\x00" + sess.Description))
	return hex.EncodeToString(sum[:8])
}
