package teamrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/secrets"
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
	// Restores are the indexes of its writer's records the hub lost or
	// altered that this record is sent again for: the session they wrote
	// as it is now. A teammate missing them stops asking for them.
	Restores []int64 `json:"restores,omitempty"`
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
	// Foreign says, a line each, the sessions of this member's that the
	// hub refused because another member wrote them first: they are not
	// sent again.
	Foreign []string `json:"foreign,omitempty"`
	// Restored and Altered are the indexes of this machine's records the
	// hub had lost, or held altered, that this sync sent again (as later
	// records: RestoredLine says so).
	Restored []int64 `json:"restored,omitempty"`
	Altered  []int64 `json:"altered,omitempty"`
	// Relayed is how many records of writers who left, kept by this
	// machine, the hub had lost or held altered and this sync sent on.
	Relayed int `json:"relayed,omitempty"`
	// Missing are the runs of teammates' records the hub does not hold,
	// still open after this sync: asked for again at every sync.
	Missing []Gap `json:"missing,omitempty"`
	// asked is set once this sync asked for the gaps again.
	asked bool
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
	// claims are the team's sessions' first writers, deleted the owners
	// of those deleted (set by SyncTeam).
	claims  claims
	deleted *tombstones
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
	st.deleted = &tombstones{path: e.Local.deletedFile(s.ID)}
	out := &Sync{Team: v.Name}
	defer func() { out.Missing = gaps(v.State, s) }()
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
	if err := e.relay(ctx, v, out); err != nil {
		if ctx.Err() != nil {
			return out, err
		}
		slog.Warn("team sync: the records kept of writers who left were not audited", "team", s.Name, "err", err)
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
	if err := e.audit(ctx, pub); err != nil {
		return err
	}
	ids := make([]string, 0, len(s.Shares))
	for id := range s.Shares {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		p := s.Shares[id]
		pub.project = p.ID
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
			if s.Foreign[sess.ID] != "" {
				continue
			}
			err := pub.session(ctx, p, sess, g)
			var fe *foreignError
			if errors.As(err, &fe) {
				// Another member wrote this session first: it is theirs on
				// the team, and not sent again.
				if s.Foreign == nil {
					s.Foreign = map[string]string{}
				}
				s.Foreign[sess.ID] = fe.msg
				out.Foreign = append(out.Foreign, fmt.Sprintf("session %s is not sent: %s", sess.ID, fe.msg))
				if err := e.Local.Save(s); err != nil {
					return err
				}
				continue
			}
			if err != nil {
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
	// project is the project whose sessions are being sent.
	project string
	// restores are the indexes of this machine's records the hub lost
	// or altered, by the session they wrote (audit), and held what the
	// hub held at each.
	restores map[string][]int64
	held     map[int64]string
}

// send seals pl as this machine's next record and puts it on the hub.
func (p *publisher) send(ctx context.Context, pl *Payload) error {
	s := p.v.Local
	pl.Restores = p.restores[pl.Session.ID]
	b, err := json.Marshal(pl)
	if err != nil {
		return err
	}
	// Padded with spaces (which JSON reads past) to its size class: the
	// hub learns a record's size class, not its length.
	b = append(b, bytes.Repeat([]byte{' '}, team.PadClass(len(b))-len(b))...)
	tag, err := team.SessionTag(s.Keys, s.ID, pl.Session.ID)
	if err != nil {
		return err
	}
	h := team.Header{Team: s.ID, Host: s.Host, Index: s.Next, Epoch: p.epoch, Author: p.v.Me.Fingerprint(), ChainSeq: p.v.Seq, ChainHead: p.v.Head, Session: tag}
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
	if err := sentLog(p.e.Local.sentFile(s.ID)).wrote(rec, pl.Session.ID, p.project); err != nil {
		return err
	}
	if len(pl.Restores) > 0 {
		return p.restoredBy(pl)
	}
	return nil
}

// foreignError is a put the hub refused because another member wrote
// the record's session first (409): the session is theirs on the team.
type foreignError struct{ msg string }

func (e *foreignError) Error() string { return e.msg }

// putRecord puts rec on the hub and checks that the hub holds it: a hub
// that says it stored none holds it from a push whose answer was lost,
// or holds another record at its index (this machine's state restored
// from a copy, or the hub's tables edited), which is an error: nothing
// more is sent.
func (e *Client) putRecord(ctx context.Context, s *State, rec team.Record) error {
	c := e.client(s.Hub)
	n, err := c.Team(s.ID).Put(ctx, []loom.SyncRecord{rec.Sync()})
	if loom.ErrorCode(err) == loom.ECONFLICT && strings.Contains(err.Error(), hub.ForeignSession) {
		return &foreignError{msg: err.Error()}
	}
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
	case int64(sess.MessageCount) < sent.Seq, sent.Resend:
		// Messages were taken from it, or the hub lost or altered a
		// record of it (audit): it is sent whole again.
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
		changed, resent := blockChanges(msgs, known, sent.Seq, &blocks)
		updated = updated || resent
		if len(changed) > 0 {
			if err := p.sendChanged(ctx, proj, g, sess.ID, after, changed, n == 0, op); err != nil {
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

// sendChanged sends the messages of the page after after whose seqs
// changed holds, read again through the gate, as one record; the
// first record of a session carries op.
func (p *publisher) sendChanged(ctx context.Context, proj team.Project, g *loom.Session, id string, after int64, changed map[int64]bool, first bool, op string) error {
	before := p.gate.Redacted()
	gm, err := p.gate.Messages(ctx, id, loom.MessageQuery{After: after, Oldest: true, Limit: maxRecordMessages})
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
	if first {
		pl.Op = op
	}
	return p.send(ctx, pl)
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
