package teamrun

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/syncpath"
	"github.com/loomhq/loom/team"
)

// Payload is what one team record carries: a session's metadata and
// messages of it, as the member shares them: the messages after those
// published before, and those published before that changed since (a
// part or usage updated, a secret redacted), each whole. Op says what
// else the record does.
type Payload struct {
	Op       string          `json:"op,omitempty"`
	Mode     string          `json:"mode"`
	Session  *loom.Session   `json:"session"`
	Messages []*loom.Message `json:"messages"`
}

// What a record does besides adding and updating messages.
const (
	// OpReplace: the session is written again from its first message
	// (messages were taken from it: a rewind); the record holds the first
	// of them.
	OpReplace = "replace"
	// OpDelete: the session was deleted (or left the shared project);
	// the record holds its id alone, and teammates' copies are removed.
	OpDelete = "delete"
)

// Sync is one team sync: what it did.
type Sync struct {
	Team string `json:"team"`
	// Published is how many records this machine sent, Sessions how
	// many of its sessions they carried.
	Published int `json:"published"`
	Sessions  int `json:"sessions"`
	// Updated is how many sessions sent before were sent again changed
	// (messages updated or redacted, renamed), Deleted how many were
	// deleted on the team.
	Updated int `json:"updated,omitempty"`
	Deleted int `json:"deleted,omitempty"`
	// Redacted is how many secrets the gate replaced in what was sent.
	Redacted int `json:"redacted"`
	// Applied is how many teammates' records were applied.
	Applied int `json:"applied"`
	// SetAside are the records this sync did not apply, and why (a
	// writer no member of the chain, a record altered, one the team's
	// store cannot take): each is passed over once, the rest applied.
	SetAside []SetAside `json:"set_aside,omitempty"`
	// Rotated is set when this (admin's) machine rotated the key after a
	// member left.
	Rotated bool `json:"rotated,omitempty"`
	// Waiting says why nothing was published (a member left and the
	// admin has not rotated the key yet; this member was removed; a
	// teammate wrote under a newer chain than this machine's).
	Waiting string `json:"waiting,omitempty"`
	// KeptApart is how many writers' records were kept apart, neither
	// applied nor set aside, to be read again at the next sync: written
	// under a newer chain than this machine's, or by a member who left
	// before the admin's rotation named what they wrote before.
	KeptApart int `json:"kept_apart,omitempty"`
	// Newer is the record that names a newer chain than this machine's,
	// signed by a member of it: evidence that the hub hides entries.
	Newer *Evidence `json:"newer,omitempty"`
}

// Stores are what a sync reads and writes: the member's own store (what
// is published) and the team's store on this machine (what is pulled).
type Stores struct {
	Own  loom.Store
	Team loom.Engine
	// User is the member's user in the own store, and the user the
	// team's sessions are kept under in the team's store.
	User string
	// Detector is the secret gate every record passes before it is
	// sealed.
	Detector *secrets.Detector
	// Scrub, when set, removes from the team's store's files what
	// records that redacted or deleted sessions left behind (the old
	// text in free pages and the search index).
	Scrub func(context.Context) error
	// claims are the team's sessions' first writers (set by SyncTeam).
	claims claims
}

// maxRecordMessages bounds the messages of one record.
const maxRecordMessages = 500

// SyncTeam verifies the chain, publishes what this member shares, and
// pulls the teammates' records into the team's store.
func (e *Client) SyncTeam(ctx context.Context, s *State, st Stores) (*Sync, error) {
	if !s.KeysMoved {
		if _, err := MigrateKeys(ctx, st.Team, st.User, s.ID); err != nil {
			return nil, err
		}
		s.KeysMoved = true
	}
	v, err := e.Verify(ctx, s)
	if errors.Is(err, ErrGone) {
		if !s.Gone {
			s.Gone = true
			if err := e.Local.Save(s); err != nil {
				return nil, err
			}
		}
		return &Sync{Team: s.Name, Waiting: notMember}, nil
	}
	if err != nil {
		return nil, err
	}
	st.claims = claims(e.Local.claimsFile(s.ID))
	out := &Sync{Team: v.Name}
	if (v.Stale || v.ExpiredHolder(e.now())) && v.Me.Fingerprint() == v.Admin {
		if v, err = e.rotate(ctx, v); err != nil {
			return nil, err
		}
		out.Rotated = true
	}
	if n := s.Newer; n != nil && (v.Seq >= n.Seq && v.Epoch >= n.Epoch || !v.In(n.Author)) {
		// The chain shows what the evidence said it hid, or its writer
		// is no member any more.
		s.Newer = nil
	}
	if !v.In(v.Me.Fingerprint()) {
		out.Waiting = notMember
		return out, nil
	}
	// The teammates' records first: one written under a newer chain
	// than this machine's stops this machine publishing under its own.
	if err := e.pull(ctx, v, st, out); err != nil {
		return out, err
	}
	switch {
	case !v.In(v.Me.Fingerprint()):
		// The chain the pull read again removed this machine.
		out.Waiting = notMember
		return out, nil
	case s.Newer != nil:
		out.Newer = s.Newer
		out.Waiting = fmt.Sprintf("a teammate wrote under a newer chain (entry %d, epoch %d) than this machine verified (entry %d, epoch %d): the hub may be hiding entries from this machine; nothing is sent until it shows them (compare loom team head with a teammate's)", s.Newer.Seq, s.Newer.Epoch, v.Seq, v.Epoch)
		return out, e.Local.Save(s)
	case v.Stale:
		out.Waiting = "a member left and the admin has not rotated the team's key yet (the admin's next loom team sync does): nothing is sent until then"
		return out, nil
	}
	if err := e.publish(ctx, v, st, out); err != nil {
		return out, err
	}
	if out.Published == 0 {
		return out, nil
	}
	// What this machine just sent, as the team sees it.
	return out, e.pull(ctx, v, st, out)
}

// notMember is what a sync of a machine no longer in the team says.
const notMember = "you are no longer a member of the team: nothing is sent, and nothing new can be read"

// Evidence is a record that names a newer chain than this machine's:
// its writer id and index, its author's fingerprint, and the head and
// epoch it names.
type Evidence struct {
	Host   string `json:"host"`
	Index  int64  `json:"index"`
	Author string `json:"author"`
	Seq    int64  `json:"seq"`
	Epoch  int    `json:"epoch"`
}

// publish sends the sessions of the projects this member shares, each
// as it changed since what was published of it (new messages, messages
// updated or redacted, a rename, a deletion), through the secret gate.
func (e *Client) publish(ctx context.Context, v *Verified, st Stores, out *Sync) error {
	s := v.Local
	if len(s.Shares) == 0 || st.Own == nil {
		return nil
	}
	if !team.OwnsWriter(v.Me.Fingerprint(), s.Host) {
		// A writer id of before it was bound to its key (random) is
		// refused by the hub: this machine writes under a new one.
		s.Host, s.Next = team.NewWriter(v.Me.Fingerprint()), 1
		if err := e.Local.Save(s); err != nil {
			return err
		}
	}
	pub := &publisher{e: e, v: v, det: st.Detector, gate: st.Detector.Gate(st.Own), raw: st.Own, out: out}
	pub.epoch, _ = s.Keys.Latest()
	ids := make([]string, 0, len(s.Shares))
	for id := range s.Shares {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		p := s.Shares[id]
		f := loom.SessionFilter{UserID: st.User, ProjectID: p.ID, Archived: loom.WithArchived}
		raw, err := st.Own.Sessions(ctx, f)
		if err != nil {
			return err
		}
		gated, err := pub.gate.Sessions(ctx, f)
		if err != nil {
			return err
		}
		byID := make(map[string]*loom.Session, len(gated))
		for _, g := range gated {
			byID[g.ID] = g
		}
		live := map[string]bool{}
		for _, sess := range raw {
			g := byID[sess.ID]
			if g == nil {
				continue
			}
			live[sess.ID] = true
			if err := pub.session(ctx, p, sess, g); err != nil {
				return err
			}
		}
		var gone []string
		for sid, sent := range s.Sent {
			if sent.Project == p.ID && !live[sid] {
				gone = append(gone, sid)
			}
		}
		sort.Strings(gone)
		for _, sid := range gone {
			if err := pub.send(ctx, &Payload{Op: OpDelete, Mode: p.Mode, Session: &loom.Session{ID: sid}}); err != nil {
				return err
			}
			delete(s.Sent, sid)
			out.Deleted++
			if err := e.Local.Save(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// publisher sends one sync's records.
type publisher struct {
	e     *Client
	v     *Verified
	det   *secrets.Detector
	gate  *secrets.Gate
	raw   loom.Store
	epoch int
	out   *Sync
}

// send seals pl as this machine's next record and puts it on the hub.
func (p *publisher) send(ctx context.Context, pl *Payload) error {
	s := p.v.Local
	b, err := json.Marshal(pl)
	if err != nil {
		return err
	}
	// Padded with spaces (which JSON reads past) to its size class: the
	// hub learns a record's size class, not its length.
	b = append(b, bytes.Repeat([]byte{' '}, team.PadClass(len(b))-len(b))...)
	h := team.Header{Team: s.ID, Host: s.Host, Index: s.Next, Epoch: p.epoch, Author: p.v.Me.Fingerprint(), ChainSeq: p.v.Seq, ChainHead: p.v.Head}
	rec, err := team.SealRecord(h, s.Keys, p.v.Me, b)
	if err != nil {
		return err
	}
	if p.e.put != nil {
		err = p.e.put(ctx, s.ID, []team.Record{rec})
	} else {
		err = p.e.putRecord(ctx, s, rec)
	}
	if err != nil {
		return err
	}
	s.Next++
	p.out.Published++
	return nil
}

// putRecord puts rec on the hub and checks that the hub holds it: a hub
// that says it stored none holds it from a push whose answer was lost,
// or holds another record at its index (this machine's state restored
// from a copy, or the hub's tables edited), which is an error: nothing
// more is sent.
func (e *Client) putRecord(ctx context.Context, s *State, rec team.Record) error {
	c := e.client(s.Hub)
	n, err := c.Team(s.ID).Put(ctx, []loom.SyncRecord{rec.Sync()})
	if err != nil {
		return fmt.Errorf("team %s: record %d of writer %s refused: %w", s.Name, rec.Index, rec.Host, err)
	}
	if n == 1 {
		return nil
	}
	held, _, err := c.Team(s.ID).Records(ctx, rec.Host, rec.Index-1, 1)
	if err != nil {
		return fmt.Errorf("team %s: the hub stored none of record %d of writer %s, and did not say what it holds there: %w", s.Name, rec.Index, rec.Host, err)
	}
	if len(held) == 1 && held[0].Index == rec.Index && bytes.Equal(held[0].Header, rec.Header) && bytes.Equal(held[0].Body, rec.Body) {
		return nil
	}
	return loom.Errorf(loom.ECONFLICT, "team %s: the hub refused record %d of this machine's writer %s: it holds another record there (this machine's team state restored from a copy, or the hub's tables edited); nothing more was sent", s.Name, rec.Index, rec.Host)
}

// session sends what changed of sess (as stored; g is it through the
// gate) since what was sent of it: the messages of each block whose
// digest changed and the messages after, each page's through the gate
// again; its fields alone when only they changed.
func (p *publisher) session(ctx context.Context, proj team.Project, sess, g *loom.Session) error {
	s := p.v.Local
	sent := s.Sent[sess.ID]
	op := ""
	switch {
	case sent == nil:
		sent = &Sent{}
	case int64(sess.MessageCount) < sent.Seq:
		// Messages were taken from it: it is sent whole again.
		sent, op = &Sent{}, OpReplace
	}
	meta := metaDigest(sess)
	known := sent.Blocks
	if sent.Meta == "" {
		known = nil // sent by a loom that kept no digests: compare nothing
	}
	var blocks []string
	var after int64
	n, updated := 0, op == OpReplace
	for {
		msgs, err := p.raw.Messages(ctx, sess.ID, loom.MessageQuery{After: after, Oldest: true, Limit: maxRecordMessages})
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			break
		}
		changed := map[int64]bool{}
		for i := 0; i < len(msgs); {
			b := (msgs[i].Seq - 1) / BlockMessages
			j := i
			for j < len(msgs) && (msgs[j].Seq-1)/BlockMessages == b {
				j++
			}
			block := msgs[i:j]
			for int64(len(blocks)) <= b {
				blocks = append(blocks, "")
			}
			blocks[b] = digest(block, math.MaxInt64)
			same := b < int64(len(known)) && known[b] == digest(block, sent.Seq)
			for _, m := range block {
				if m.Seq > sent.Seq || !same {
					changed[m.Seq] = true
					updated = updated || m.Seq <= sent.Seq
				}
			}
			i = j
		}
		if len(changed) > 0 {
			before := p.gate.Redacted()
			gm, err := p.gate.Messages(ctx, sess.ID, loom.MessageQuery{After: after, Oldest: true, Limit: maxRecordMessages})
			if err != nil {
				return err
			}
			// Counted when sent: the gate also reads what is only
			// compared, which an idle sync must not report.
			p.out.Redacted += p.gate.Redacted() - before
			var picked []*loom.Message
			for _, m := range gm {
				if changed[m.Seq] {
					picked = append(picked, m)
				}
			}
			pl := Outgoing(proj.Mode, g, picked)
			if n == 0 {
				pl.Op = op
			}
			if err := p.send(ctx, pl); err != nil {
				return err
			}
			n++
		}
		after = msgs[len(msgs)-1].Seq
	}
	if n == 0 && sent.Meta != "" && sent.Meta != meta {
		if err := p.send(ctx, Outgoing(proj.Mode, g, nil)); err != nil {
			return err
		}
		n, updated = n+1, true
	}
	if n == 0 && sent.Project == proj.ID && sent.Meta == meta {
		return nil
	}
	if n > 0 {
		p.out.Sessions++
		// The secrets of the session's own fields, sent with it (the
		// list's gate read every session's, sent or not).
		fields := p.det.Gate(p.raw)
		if _, err := fields.Session(ctx, sess.ID); err != nil {
			return err
		}
		p.out.Redacted += fields.Redacted()
	}
	if updated {
		p.out.Updated++
	}
	s.Sent[sess.ID] = &Sent{Project: proj.ID, Seq: after, Meta: meta, Blocks: blocks}
	return p.e.Local.Save(s)
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

// ownKey is the key a record's session is kept under in the team's
// store: the member's own key, "" for a session without one (a
// rewind's, an import's). A loom before this one sent the key with its
// author's name packed in ("cli:@alice/app"): that name, when it is the
// author's as the chain names them, is taken out again; whose the
// session is goes in Session.Member, from the chain alone.
func ownKey(key, author string) string {
	surface, rest, ok := strings.Cut(key, ":")
	if !ok {
		return key
	}
	rest = strings.TrimPrefix(rest, "@"+author+"/")
	if rest == "" {
		return ""
	}
	return surface + ":" + rest
}

// MigrateKeys moves the sessions of a team's store st that a loom
// before this one applied, with their author's name packed into the key
// ("cli:@alice/app", Member empty), to the key of their own ("cli:app")
// with the member and the team (id) as fields: key "" where the packed
// key named none, or named the session's id (a session that had none).
// It reports how many it moved; a store with none to move costs one
// listing. SyncTeam runs it first, once (State.KeysMoved).
func MigrateKeys(ctx context.Context, st loom.Store, user, team string) (int, error) {
	all, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, Archived: loom.WithArchived})
	if err != nil {
		return 0, fmt.Errorf("team store: %w", err)
	}
	n := 0
	for _, s := range all {
		surface, rest, _ := strings.Cut(s.Key, ":")
		if s.Member != "" || !strings.HasPrefix(rest, "@") {
			continue
		}
		member, rest, ok := strings.Cut(rest[1:], "/")
		if !ok || member == "" {
			continue
		}
		key := surface + ":" + rest
		if rest == "" || rest == s.ID {
			key = ""
		}
		if _, err := st.UpdateSession(ctx, s.ID, loom.SessionUpdate{Key: &key, Team: &team, Member: &member, KeepUpdatedAt: true}); err != nil {
			return n, fmt.Errorf("team store: session %s: %w", s.ID, err)
		}
		n++
	}
	return n, nil
}

// Outgoing is what a record carries of sess and msgs (read through the
// gate) for mode: with ModeAggregates, no text at all: the usage, the
// models, the agent, the tools' names and counts; the project's id and
// name.
func Outgoing(mode string, sess *loom.Session, msgs []*loom.Message) *Payload {
	s := *sess
	// The member's own key: whose it is, each teammate's machine takes
	// from the chain (Session.Member), never from the record.
	s.Team, s.Member = "", ""
	s.Lock, s.DeletedAt = nil, nil
	if mode != team.ModeAggregates {
		return &Payload{Mode: team.ModeContent, Session: &s, Messages: msgs}
	}
	s.Title = fmt.Sprintf("%s session of %s (aggregates only)", s.Surface, s.CreatedAt.Format("2006-01-02"))
	s.Description, s.LastPrompt, s.Cwd, s.GitBranch = "", "", "", ""
	s.Project.Root = ""
	if s.Source != nil {
		s.Source = &loom.Source{Tool: s.Source.Tool, Version: s.Source.Version}
	}
	out := make([]*loom.Message, len(msgs))
	for i, m := range msgs {
		c := *m
		c.Error = nil
		c.Parts = nil
		for _, p := range m.Parts {
			switch p.Type {
			case "tool":
				c.Parts = append(c.Parts, loom.Part{ID: p.ID, Type: p.Type, CallID: p.CallID, Name: p.Name, Status: p.Status, StartedAt: p.StartedAt, EndedAt: p.EndedAt})
			case "step-start", "step-finish":
				c.Parts = append(c.Parts, loom.Part{ID: p.ID, Type: p.Type, Usage: p.Usage})
			}
		}
		if len(c.Parts) == 0 {
			c.Parts = []loom.Part{{ID: m.ID + "-a", Type: "text", Text: ""}}
		}
		out[i] = &c
	}
	return &Payload{Mode: team.ModeAggregates, Session: &s, Messages: out}
}

// pageRecords is how many records a pull asks for at once.
const pageRecords = 200

// pull applies every writer's records after those applied, in order. A
// record that does not verify, or that the team's store cannot take, is
// set aside (kept in the team's state with whose it is and why) and the
// writer's next records are applied: no record stops a team. Only what
// fails on this machine (the hub unreachable, the store unwritable)
// stops the pull, to be tried again.
func (e *Client) pull(ctx context.Context, v *Verified, st Stores, out *Sync) (err error) {
	s := v.Local
	c := e.client(s.Hub)
	hosts, err := c.Team(s.ID).Hosts(ctx)
	if err != nil {
		return err
	}
	scrub, refreshed := false, false
	defer func() {
		if scrub && st.Scrub != nil && err == nil {
			err = st.Scrub(ctx)
		}
	}()
	for _, h := range hosts {
		// A writer's records a page at a time on the one path of
		// records (syncpath.Writer); a record kept apart stops its
		// writer until the next sync.
		_, err := syncpath.Writer(ctx, c.Team(s.ID), h.Host, s.Applied[h.Host], h.Last, pageRecords, func(recs []loom.SyncRecord) (int64, bool, error) {
			after := s.Applied[h.Host]
			for _, x := range recs {
				r := team.RecordOf(x)
				if r.Index <= after {
					continue
				}
				if r.Index != after+1 {
					// The hub holds no record between: what it lost or
					// withheld cannot be applied.
					out.setAside(s, SetAside{Host: h.Host, Index: after + 1, Why: fmt.Sprintf("records %d to %d are missing on the hub", after+1, r.Index-1)})
				}
				hd, payload, err := team.OpenRecord(v.State, s.Keys, r)
				var nc *team.NewerChain
				if errors.As(err, &nc) && !refreshed {
					// The chain may have grown since this sync read it (a
					// member joined and wrote at once): read it again,
					// once a pull.
					refreshed = true
					nv, verr := e.Verify(ctx, s)
					if verr != nil {
						return after, false, verr
					}
					*v = *nv
					hd, payload, err = team.OpenRecord(v.State, s.Keys, r)
				}
				if keptApart(s, r, err) {
					out.KeptApart++
					return after, true, e.Local.Save(s)
				}
				if err == nil {
					if s.Writers == nil {
						s.Writers = map[string]string{}
					}
					if s.Writers[h.Host] == "" {
						s.Writers[h.Host] = hd.Author
					}
					var changed bool
					changed, err = apply(ctx, st, v, hd, payload)
					if err != nil && !recordsFault(err) {
						return after, false, fmt.Errorf("record %d of writer %s: %w", r.Index, h.Host, err)
					}
					scrub = scrub || changed
				}
				if err != nil {
					out.setAside(s, SetAside{Host: h.Host, Index: r.Index, Author: authorOf(v.State, r), Why: refusal(err)})
				} else {
					out.Applied++
				}
				after = r.Index
				s.Applied[h.Host] = after
			}
			return after, false, e.Local.Save(s)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// keptApart reports whether a record that did not open (err) is kept
// apart, to be read again at the next sync: written under a newer chain
// than this machine's and signed by a member of this chain (kept in s as
// evidence that the hub hides entries), or by a member who left before
// the admin's rotation named what they wrote before. A record of a
// newer chain that no member of this one signed is set aside: junk that
// names a made-up head is not read again at every sync.
func keptApart(s *State, r team.Record, err error) bool {
	if errors.Is(err, team.ErrPending) {
		return true
	}
	var nc *team.NewerChain
	if !errors.As(err, &nc) || !nc.Signed {
		return false
	}
	if s.Newer == nil || nc.Seq > s.Newer.Seq || nc.Epoch > s.Newer.Epoch {
		var h team.Header
		json.Unmarshal(r.Header, &h)
		s.Newer = &Evidence{Host: r.Host, Index: r.Index, Author: h.Author, Seq: nc.Seq, Epoch: nc.Epoch}
	}
	return true
}

// SetAside is a record a sync did not apply: whose writer and index, its
// author as the verified chain names them ("" when it names none), and
// why. It is the one kind of record set aside of every sync, personal
// and team (package syncpath).
type SetAside = syncpath.SetAside

// maxSetAside bounds the records set aside a team's state keeps
// (SetAsideTotal counts them all): the first ones, a member's before
// those of writers no member of the chain, whose junk could otherwise
// push a member's out. The state is written at every page a sync
// applies and every session it sends: it stays small.
const maxSetAside = 200

func (out *Sync) setAside(s *State, a SetAside) {
	a = syncpath.Clip(a)
	out.SetAside = append(out.SetAside, a)
	s.SetAsideTotal++
	if len(s.SetAside) < maxSetAside {
		s.SetAside = append(s.SetAside, a)
		return
	}
	if a.Author == "" {
		return
	}
	for i, old := range s.SetAside {
		if old.Author == "" {
			s.SetAside = append(append(s.SetAside[:i:i], s.SetAside[i+1:]...), a)
			return
		}
	}
}

// authorOf names the author a record's header claims, when the chain
// names them: a member's name (a machine's is its member's).
func authorOf(st *team.State, r team.Record) string {
	var h team.Header
	if json.Unmarshal(r.Header, &h) != nil || h.Author == "" {
		return ""
	}
	if m := st.MemberOf(h.Author); m != nil && !st.IsInvite(h.Author) {
		return m.Name
	}
	return ""
}

// errRecord is in the chain of a record's own fault, found applying it:
// it is set aside, and the next records are applied.
var errRecord = errors.New("a record the team's store cannot take")

// recordsFault reports whether err, from applying a record, is the
// record's fault (set aside) rather than this machine's (the pull stops,
// to be tried again).
func recordsFault(err error) bool {
	if errors.Is(err, errRecord) {
		return true
	}
	switch loom.ErrorCode(err) {
	case loom.EINVALID, loom.ECONFLICT, loom.EAMBIGUOUS:
		return true
	}
	return false
}

func refusal(err error) string {
	switch {
	case errors.Is(err, team.ErrNotMember):
		return fmt.Sprintf("%v (the hub let someone write who is no member of the verified chain)", err)
	default:
		return err.Error()
	}
}

// apply writes one record's session and messages into the team's
// store: a new session whole, new messages appended, messages it holds
// updated where the record's differ (parts, usage), its title and
// description taken again; a deletion removes the session. It reports
// whether it changed or removed what the store held (which a scrub
// then clears from its files).
func apply(ctx context.Context, st Stores, v *Verified, hd *team.Header, payload []byte) (bool, error) {
	var p Payload
	if err := json.Unmarshal(payload, &p); err != nil {
		return false, fmt.Errorf("%w: this loom cannot read it: %v", errRecord, err)
	}
	if p.Session == nil || p.Session.ID == "" {
		return false, fmt.Errorf("%w: it names no session", errRecord)
	}
	author := v.MemberOf(hd.Author)
	sess := p.Session
	// Whose it is is the chain's word on the author, whatever the
	// record claims; its key is the member's own.
	sess.Team, sess.Member = v.Local.ID, author.Name
	sess.Key = ownKey(sess.Key, author.Name)
	if sess.Key != "" {
		sess.Surface = loom.SurfaceOf(sess.Key)
	}
	sess.UserID = st.User
	have, err := st.Team.Session(ctx, sess.ID)
	found := err == nil
	if err != nil && loom.ErrorCode(err) != loom.ENOTFOUND {
		return false, err
	}
	if found && have.Member != author.Name {
		// Another member's session of the same id: it stays theirs,
		// unless this record wrote it first in chain order (the hub
		// lists the writers in its own order, which a writer id picks).
		if len(p.Messages) == 0 || p.Messages[0].Seq != 1 || !st.claims.earlier(v, sess.ID, hd) {
			return false, nil
		}
		if _, err := st.Team.Delete(ctx, sess.ID, loom.DeleteOptions{Purge: true, Force: true}); err != nil {
			return false, err
		}
		found = false
	}
	var kept []*loom.SessionData
	switch p.Op {
	case OpDelete:
		if !found {
			return false, nil
		}
		_, err := st.Team.Delete(ctx, sess.ID, loom.DeleteOptions{Purge: true, Force: true})
		return true, err
	case OpReplace:
		if found {
			// Its sub-agent sessions go with it when it is removed: they
			// are kept and written back after it.
			if kept, err = subagents(ctx, st.Team, sess.ID); err != nil {
				return false, err
			}
			if _, err := st.Team.Delete(ctx, sess.ID, loom.DeleteOptions{Purge: true, Force: true}); err != nil {
				return false, err
			}
			found = false
		}
	case "":
	default:
		return false, fmt.Errorf("%w: an operation this loom does not know (%q): update loom", errRecord, p.Op)
	}
	if !found {
		if len(p.Messages) == 0 || p.Messages[0].Seq != 1 {
			return p.Op == OpReplace, nil
		}
		err := loom.WriteImport(ctx, st.Team, &loom.ImportWrite{Sessions: append([]*loom.SessionData{{Session: sess, Messages: p.Messages}}, kept...)})
		if err == nil {
			err = st.claims.add(sess.ID, hd)
		}
		return p.Op == OpReplace, err
	}
	changes, err := updates(ctx, st.Team, have, p.Messages)
	if err != nil {
		return false, err
	}
	changedMeta := sess.Title != have.Title || sess.Description != have.Description
	var msgs []*loom.Message
	for _, m := range p.Messages {
		if m.Seq > int64(have.MessageCount) {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) > 0 && msgs[0].Seq == int64(have.MessageCount)+1 {
		changes = append(changes, loom.ImportChange{Session: have, Messages: msgs})
	}
	if len(changes) > 0 {
		if err := loom.WriteImport(ctx, st.Team, &loom.ImportWrite{Changes: changes}); err != nil {
			return false, err
		}
	}
	if changedMeta {
		if _, err := st.Team.UpdateSession(ctx, sess.ID, loom.SessionUpdate{Title: &sess.Title, Description: &sess.Description, KeepUpdatedAt: true}); err != nil {
			return false, err
		}
	}
	return changedMeta || len(changes) > 0 && len(msgs) < len(p.Messages), nil
}

// updates returns the changes that make the messages have holds of
// those in msgs (the ones it holds already) the record's: each part
// that differs, and the usage where it does.
func updates(ctx context.Context, st loom.Store, have *loom.Session, msgs []*loom.Message) ([]loom.ImportChange, error) {
	var lo, hi int64
	for _, m := range msgs {
		if m.Seq > int64(have.MessageCount) {
			break
		}
		if lo == 0 {
			lo = m.Seq
		}
		hi = m.Seq
	}
	if lo == 0 {
		return nil, nil
	}
	old, err := st.Messages(ctx, have.ID, loom.MessageQuery{After: lo - 1, Before: hi + 1})
	if err != nil {
		return nil, err
	}
	bySeq := make(map[int64]*loom.Message, len(old))
	for _, m := range old {
		bySeq[m.Seq] = m
	}
	var out []loom.ImportChange
	for _, m := range msgs {
		o := bySeq[m.Seq]
		if o == nil {
			continue
		}
		parts := make(map[string]loom.Part, len(o.Parts))
		for _, p := range o.Parts {
			parts[p.ID] = p
		}
		for _, p := range m.Parts {
			if op, ok := parts[p.ID]; ok && samePart(op, p) {
				continue
			}
			out = append(out, loom.ImportChange{SessionID: have.ID, Seq: m.Seq, Part: &p})
		}
		if m.Usage != o.Usage {
			u := m.Usage
			out = append(out, loom.ImportChange{SessionID: have.ID, Seq: m.Seq, Usage: &u})
		}
	}
	return out, nil
}

func samePart(a, b loom.Part) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// subagents reads the sub-agent sessions of id whole.
func subagents(ctx context.Context, st loom.Store, id string) ([]*loom.SessionData, error) {
	fam, err := st.Family(ctx, loom.FamilyQuery{IDs: []string{id}, SubagentsOnly: true})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, f := range fam {
		if f.ID != id {
			ids = append(ids, f.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return st.ReadSessions(ctx, ids, loom.MessageQuery{})
}
