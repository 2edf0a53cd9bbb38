package teamrun

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/team"
)

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

// apply writes one record's session and messages into the team's
// store: a new session whole, new messages appended, messages it holds
// updated where the record's differ (parts, usage), its title and
// description taken again; a deletion removes the session. It reports
// whether it changed or removed what the store held (which a scrub
// then clears from its files).
func apply(ctx context.Context, st Stores, v *Verified, hd *team.Header, payload []byte) (bool, error) {
	p, err := readPayload(payload)
	if err != nil {
		return false, err
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
	if hd.Session != "" {
		// The tag the hub filed the session's owner by must be this
		// session's: a record under another's tag would change a
		// session its owner never saw claimed.
		tag, err := team.SessionTag(v.Local.Keys, v.Local.ID, sess.ID)
		if err != nil {
			return false, err
		}
		if tag != hd.Session {
			return false, fmt.Errorf("%w: its header names another session than the one it writes (%s)", errRecord, sess.ID)
		}
	}
	have, err := st.Team.Session(ctx, sess.ID)
	found := err == nil
	if err != nil && loom.ErrorCode(err) != loom.ENOTFOUND {
		return false, err
	}
	if found && have.Member != author.Name {
		// A session has one owner, forever: the member whose record
		// wrote it here first. Another member's record never changes
		// nor replaces it, whatever writer id, epoch or head it names.
		return false, fmt.Errorf("%w: session %s is %s's: a record of %s's does not change it", errRecord, sess.ID, have.Member, author.Name)
	}
	if !found {
		// Nor once its owner deleted it: a record of another member's
		// does not write it again.
		owner, err := st.deleted.owner(sess.ID)
		if err != nil {
			return false, err
		}
		if owner != "" && owner != author.Fingerprint() {
			name := "another member"
			if m := v.Past[owner]; m != nil {
				name = m.Name
			}
			return false, fmt.Errorf("%w: session %s was %s's, who deleted it: a record of %s's does not write it again", errRecord, sess.ID, name, author.Name)
		}
	}
	var kept []*loom.SessionData
	switch p.Op {
	case OpDelete:
		if !found {
			return false, nil
		}
		// Its owner is kept first: a deletion tried again finds no
		// session to say whose it was.
		if err := st.deleted.add(sess.ID, author.Fingerprint()); err != nil {
			return false, err
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
		write := func() error {
			return st.Team.ApplyImport(ctx, &loom.ImportWrite{Sessions: append([]*loom.SessionData{{Session: sess, Messages: p.Messages}}, kept...)})
		}
		err := write()
		changed := p.Op == OpReplace
		if loom.ErrorCode(err) == loom.ECONFLICT && sess.Key != "" {
			var took bool
			if took, err = takeKey(ctx, st.Team, sess, err); took {
				changed = true
				err = write()
			}
		}
		if err == nil {
			err = st.claims.add(sess.ID, hd)
		}
		return changed, err
	}
	return applyUpdate(ctx, st.Team, have, sess, p.Messages)
}

// takeKey settles which of a member's two sessions under one key the
// team's store keeps (loom never writes two, a member posting to the
// hub's API can): the one of the smaller id, whichever a machine applied
// first, so that every teammate keeps the same one. sess is the
// session a record writes, which the store refused with conflict: when
// the member's session holding its key has a larger id, it is removed
// (its later records are set aside as sess's would have been) and
// takeKey reports true, for sess to be written again; otherwise it
// returns conflict, saying which session keeps the key.
func takeKey(ctx context.Context, st loom.Engine, sess *loom.Session, conflict error) (bool, error) {
	held, err := st.Sessions(ctx, loom.SessionFilter{UserID: sess.UserID, ProjectID: sess.Project.ID, Key: sess.Key, Archived: loom.WithArchived})
	if err != nil {
		return false, err
	}
	for _, h := range held {
		if h.ID == sess.ID || h.Team != sess.Team || h.Member != sess.Member || h.Key != sess.Key {
			continue
		}
		if h.ID < sess.ID {
			return false, fmt.Errorf("%w: %s's session %s has its key %q, and of two sessions under one key the one of the smaller id is kept", conflict, h.Member, h.ID, sess.Key)
		}
		if _, err := st.Delete(ctx, h.ID, loom.DeleteOptions{Purge: true, Force: true}); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, conflict
}

// readPayload reads a record's payload, which must name a session.
func readPayload(payload []byte) (*Payload, error) {
	var p Payload
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, fmt.Errorf("%w: this loom cannot read it: %v", errRecord, err)
	}
	if p.Session == nil || p.Session.ID == "" {
		return nil, fmt.Errorf("%w: it names no session", errRecord)
	}
	return &p, nil
}

// applyUpdate brings have, the session the store holds, to the
// record's sess and messages recMsgs: the parts and usage of the
// messages it holds, the messages after, its title and description.
// It reports whether it changed what the store held.
func applyUpdate(ctx context.Context, st loom.Engine, have, sess *loom.Session, recMsgs []*loom.Message) (bool, error) {
	changes, err := updates(ctx, st, have, recMsgs)
	if err != nil {
		return false, err
	}
	changedMeta := sess.Title != have.Title || sess.Description != have.Description
	var msgs []*loom.Message
	for _, m := range recMsgs {
		if m.Seq > int64(have.MessageCount) {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) > 0 && msgs[0].Seq == int64(have.MessageCount)+1 {
		changes = append(changes, loom.ImportChange{Session: have, Messages: msgs})
	}
	if len(changes) > 0 {
		if err := st.ApplyImport(ctx, &loom.ImportWrite{Changes: changes}); err != nil {
			return false, err
		}
	}
	if changedMeta {
		if _, err := st.UpdateSession(ctx, sess.ID, loom.SessionUpdate{Title: &sess.Title, Description: &sess.Description, KeepUpdatedAt: true}); err != nil {
			return false, err
		}
	}
	return changedMeta || len(changes) > 0 && len(msgs) < len(recMsgs), nil
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
