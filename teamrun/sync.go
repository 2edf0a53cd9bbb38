package teamrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/team"
)

// Payload is what one team record carries: a session's metadata and the
// messages after those published before, as the member shares them.
type Payload struct {
	Mode     string          `json:"mode"`
	Session  *loom.Session   `json:"session"`
	Messages []*loom.Message `json:"messages"`
}

// Sync is one team sync: what it did.
type Sync struct {
	Team string `json:"team"`
	// Published is how many records this machine sent, Sessions how
	// many of its sessions they carried.
	Published int `json:"published"`
	Sessions  int `json:"sessions"`
	// Redacted is how many secrets the gate replaced in what was sent.
	Redacted int `json:"redacted"`
	// Applied is how many teammates' records were applied.
	Applied int `json:"applied"`
	// Refused are the records not applied, and why (a writer no member
	// of the chain, a record altered).
	Refused []string `json:"refused,omitempty"`
	// Rotated is set when this (admin's) machine rotated the key after a
	// member left.
	Rotated bool `json:"rotated,omitempty"`
	// Waiting says why nothing was published (a member left and the
	// admin has not rotated the key yet; this member was removed).
	Waiting string `json:"waiting,omitempty"`
}

// Stores are what a sync reads and writes: the member's own store (what
// is published) and the team's store on this machine (what is pulled).
type Stores struct {
	Own  loom.Store
	Team loom.Store
	// User is the member's user in the own store, and the user the
	// team's sessions are kept under in the team's store.
	User string
	// Detector is the secret gate every record passes before it is
	// sealed.
	Detector *secrets.Detector
}

// maxRecordMessages bounds the messages of one record.
const maxRecordMessages = 500

// SyncTeam verifies the chain, publishes what this member shares, and
// pulls the teammates' records into the team's store.
func (e *Env) SyncTeam(ctx context.Context, s *State, st Stores) (*Sync, error) {
	v, err := e.Verify(ctx, s)
	if err != nil {
		return nil, err
	}
	out := &Sync{Team: v.Name}
	if v.Stale && v.Me.Fingerprint() == v.Admin {
		if v, err = e.rotate(ctx, v); err != nil {
			return nil, err
		}
		out.Rotated = true
	}
	switch {
	case v.Members[v.Me.Fingerprint()] == nil:
		out.Waiting = "you are no longer a member of the team: nothing is sent, and nothing new can be read"
		return out, nil
	case v.Stale:
		out.Waiting = "a member left and the admin has not rotated the team's key yet (the admin's next loom team sync does): nothing is sent until then"
	default:
		if err := e.publish(ctx, v, st, out); err != nil {
			return out, err
		}
	}
	return out, e.pull(ctx, v, st, out)
}

// publish sends the sessions of the projects this member shares, from
// after what was published of each, through the secret gate.
func (e *Env) publish(ctx context.Context, v *Verified, st Stores, out *Sync) error {
	s := v.Local
	if len(s.Shares) == 0 || st.Own == nil {
		return nil
	}
	if s.Host == "" {
		s.Host, s.Next = newHost(), 1
		if err := e.Local.Save(s); err != nil {
			return err
		}
	}
	gate := st.Detector.Gate(st.Own)
	epoch, _ := s.Keys.Latest()
	c := e.client(s.Hub)
	for _, p := range s.Shares {
		sessions, err := gate.Sessions(ctx, loom.SessionFilter{UserID: st.User, ProjectID: p.ID, Archived: loom.WithArchived})
		if err != nil {
			return err
		}
		for _, sess := range sessions {
			last := s.Published[sess.ID]
			if int64(sess.MessageCount) <= last {
				continue
			}
			out.Sessions++
			for {
				msgs, err := gate.Messages(ctx, sess.ID, loom.MessageQuery{After: last, Oldest: true, Limit: maxRecordMessages})
				if err != nil {
					return err
				}
				if len(msgs) == 0 {
					break
				}
				pl := Outgoing(p.Mode, s.Me, sess, msgs)
				b, err := json.Marshal(pl)
				if err != nil {
					return err
				}
				rec, err := team.SealRecord(team.Header{Team: s.ID, Host: s.Host, Index: s.Next, Epoch: epoch, Author: v.Me.Fingerprint()}, s.Keys, v.Me, b)
				if err != nil {
					return err
				}
				if _, err := c.PutTeamRecords(ctx, s.ID, []team.Record{rec}); err != nil {
					return err
				}
				last = msgs[len(msgs)-1].Seq
				s.Next++
				s.Published[sess.ID] = last
				out.Published++
				if err := e.Local.Save(s); err != nil {
					return err
				}
			}
		}
	}
	out.Redacted = gate.Redacted()
	return nil
}

// TeamKey is the key a teammate's session is kept under in the team's
// store: its own key's surface, then @author/ and the rest, so that two
// members' sessions of one key stay two, and each says whose it is.
func TeamKey(key, author string) string {
	surface, rest, ok := strings.Cut(key, ":")
	if !ok {
		surface, rest = "cli", key
	}
	k := surface + ":@" + author + "/" + rest
	if len(k) > loom.MaxKeyLen {
		k = k[:loom.MaxKeyLen]
	}
	return k
}

// Author returns the member a team session's key names ("" for none).
func Author(key string) string {
	_, rest, _ := strings.Cut(key, ":")
	if !strings.HasPrefix(rest, "@") {
		return ""
	}
	a, _, _ := strings.Cut(rest[1:], "/")
	return a
}

// Outgoing is what a record carries of sess and msgs (read through the
// gate) for mode: with ModeAggregates, no text at all: the usage, the
// models, the agent, the tools' names and counts; the project's id and
// name.
func Outgoing(mode, me string, sess *loom.Session, msgs []*loom.Message) *Payload {
	s := *sess
	s.Key = TeamKey(sess.Key, me)
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

// pull applies every writer's records after those applied, in order; a
// record that does not verify stops its writer's log here and is
// reported.
func (e *Env) pull(ctx context.Context, v *Verified, st Stores, out *Sync) error {
	s := v.Local
	c := e.client(s.Hub)
	hosts, err := c.TeamHosts(ctx, s.ID)
	if err != nil {
		return err
	}
	for _, h := range hosts {
		after := s.Applied[h.Host]
	host:
		for after < h.Last {
			recs, more, err := c.TeamRecords(ctx, s.ID, h.Host, after, pageRecords)
			if err != nil {
				return err
			}
			for _, r := range recs {
				if r.Index != after+1 {
					out.Refused = append(out.Refused, fmt.Sprintf("writer %s: record %d is missing", h.Host, after+1))
					break host
				}
				hd, payload, err := team.OpenRecord(v.State, s.Keys, r)
				if err != nil {
					out.Refused = append(out.Refused, refusal(r, err))
					break host
				}
				if err := apply(ctx, st, v, hd, payload); err != nil {
					return fmt.Errorf("record %d of writer %s: %w", r.Index, h.Host, err)
				}
				after = r.Index
				s.Applied[h.Host] = after
				out.Applied++
			}
			if err := e.Local.Save(s); err != nil {
				return err
			}
			if !more || len(recs) == 0 {
				break
			}
		}
	}
	return nil
}

func refusal(r team.Record, err error) string {
	switch {
	case errors.Is(err, team.ErrNotMember):
		return fmt.Sprintf("writer %s, record %d: refused: %v (the hub let someone write who is no member of the verified chain)", r.Host, r.Index, err)
	default:
		return fmt.Sprintf("writer %s, record %d: refused: %v", r.Host, r.Index, err)
	}
}

// apply writes one record's session and messages into the team's store.
func apply(ctx context.Context, st Stores, v *Verified, hd *team.Header, payload []byte) error {
	var p Payload
	if err := json.Unmarshal(payload, &p); err != nil {
		return fmt.Errorf("a record this loom cannot read: %w", err)
	}
	if p.Session == nil {
		return errors.New("a record without its session")
	}
	author := v.Past[hd.Author]
	sess := p.Session
	// The key says whose it is as the chain names the author, whatever
	// the record claims.
	surface, rest, _ := strings.Cut(sess.Key, ":")
	if strings.HasPrefix(rest, "@") {
		_, rest, _ = strings.Cut(rest, "/")
	}
	sess.Key = TeamKey(surface+":"+rest, author.Name)
	sess.Surface = surface
	sess.UserID = st.User
	have, err := st.Team.Session(ctx, sess.ID)
	switch {
	case loom.ErrorCode(err) == loom.ENOTFOUND:
		if len(p.Messages) == 0 || p.Messages[0].Seq != 1 {
			return nil
		}
		return loom.WriteImport(ctx, st.Team, &loom.ImportWrite{Sessions: []*loom.SessionData{{Session: sess, Messages: p.Messages}}})
	case err != nil:
		return err
	}
	if Author(have.Key) != author.Name {
		// Another member's session of the same id: not theirs to add to.
		return nil
	}
	var msgs []*loom.Message
	for _, m := range p.Messages {
		if m.Seq > int64(have.MessageCount) {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 0 || msgs[0].Seq != int64(have.MessageCount)+1 {
		return nil
	}
	return loom.WriteImport(ctx, st.Team, &loom.ImportWrite{Changes: []loom.ImportChange{{Session: have, Messages: msgs}}})
}

// MemberOf returns what names the member whose session each id of
// the team's store st is (Author of its key), each session read once; a
// session it cannot read is named "".
func MemberOf(ctx context.Context, st loom.Store) func(sessionID string) string {
	names := map[string]string{}
	return func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		n := ""
		if s, err := st.Session(ctx, id); err == nil {
			n = Author(s.Key)
		}
		names[id] = n
		return n
	}
}
