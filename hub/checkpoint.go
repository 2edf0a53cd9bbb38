package hub

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/team"
)

// The hub's checkpoints of teams' chains kept in its store
// (loom.TeamCheckpoints, docs/team.md "Checkpoints: the chain verified
// once"). A process that starts takes in a team's kept checkpoint, the
// verified state after an entry, and verifies only the entries after it.
//
// The store's rows are its operator's to edit, and a checkpoint is a
// whole state: members, their keys, epochs, invites. One edited (a key
// of the operator's made the admin's, say) would have the hub take an
// entry that the chain does not allow. So each checkpoint is sealed with
// an HMAC of a key the hub process keeps outside its store
// (Edge.CheckpointKey), over the team, the entry and the state; on load
// the MAC must verify and the entry the checkpoint ends at must be, by
// hash, the one the store holds at its seq (a checkpoint of another
// chain, or one the chain was rolled back behind, is not taken). Any
// other checkpoint is ignored, said in the log, and the chain verified
// from its genesis, as before, and kept again.

// CheckpointEvery is how many entries the hub takes in past its kept
// checkpoint of a team before it keeps a new one. A checkpoint holds the
// chain's entries (team.State), so keeping one costs as much as the
// chain's size; a process that starts verifies at most this many entries
// past it.
const CheckpointEvery = 16

// checkpointMACPrefix binds a checkpoint's MAC to its purpose.
const checkpointMACPrefix = "loom hub team checkpoint 1\n"

// CheckpointKeyID names key in the store's rows: a process with another
// key neither takes nor replaces its checkpoints.
func CheckpointKeyID(key []byte) string {
	sum := sha256.Sum256(append([]byte("loom hub checkpoint key id\n"), key...))
	return hex.EncodeToString(sum[:8])
}

func checkpointMAC(key []byte, id string, seq int64, state []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(checkpointMACPrefix))
	m.Write([]byte(id))
	m.Write([]byte{0})
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(seq))
	m.Write(b[:])
	m.Write(state)
	return m.Sum(nil)
}

// checkpoints returns the store's checkpoints, nil when the hub keeps
// none (a store without them, or no key to seal them with).
func (h *teamHandler) checkpoints() loom.TeamCheckpoints {
	if h.edge.Checkpoints == nil || len(h.edge.CheckpointKey) == 0 {
		return nil
	}
	return h.edge.Checkpoints
}

func (h *teamHandler) log() *slog.Logger {
	if h.edge.Logger != nil {
		return h.edge.Logger
	}
	return slog.Default()
}

// loadCheckpoint returns team id's kept checkpoint, checked, and the
// entries the store holds after it; nil when none is kept, or the one
// kept is not to be taken (said in the log).
func (h *teamHandler) loadCheckpoint(ctx context.Context, id string) (*team.State, []loom.TeamEntry, error) {
	cs := h.checkpoints()
	if cs == nil {
		return nil, nil, nil
	}
	c, err := cs.TeamCheckpoint(ctx, id, CheckpointKeyID(h.edge.CheckpointKey))
	if err != nil || c == nil {
		return nil, nil, err
	}
	refuse := func(why string) (*team.State, []loom.TeamEntry, error) {
		h.log().Warn("team checkpoint not taken: the chain is verified from its genesis", "team", id, "entry", c.Seq, "why", why)
		return nil, nil, nil
	}
	if c.Seq < 1 || !hmac.Equal(c.MAC, checkpointMAC(h.edge.CheckpointKey, id, c.Seq, c.State)) {
		return refuse("its MAC does not verify (the row was altered, or sealed with another key)")
	}
	st, err := team.UnmarshalCheckpoint(c.State)
	if err != nil {
		return refuse(err.Error())
	}
	if st.Team != id || st.Seq != c.Seq {
		return refuse(fmt.Sprintf("it is the state of team %s after entry %d", st.Team, st.Seq))
	}
	es, err := h.st.TeamChain(ctx, id, c.Seq-1)
	if err != nil {
		return nil, nil, err
	}
	if len(es) == 0 || es[0].Seq != c.Seq || team.Hash(es[0].Entry) != st.Head {
		return refuse(fmt.Sprintf("the store's entry %d is not the one it ends at (the chain was rolled back or rewritten)", c.Seq))
	}
	return st, es[1:], nil
}

// saveCheckpoint keeps c's state in the store, in the background, when
// it is CheckpointEvery entries past the one kept (or none is): a
// request does not wait on a write the size of the chain. One at a time
// per team; c.mu is held.
func (h *teamHandler) saveCheckpoint(id string, c *verifiedChain) {
	cs := h.checkpoints()
	st := c.st
	if cs == nil || st == nil || (c.saved > 0 && st.Seq < c.saved+CheckpointEvery) || c.saving {
		return
	}
	c.saving = true
	key := h.edge.CheckpointKey
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// st is never changed once c.st is another: entries are taken
		// into copies (team.State.Next).
		err := func() error {
			b, err := st.MarshalVerifierCheckpoint()
			if err != nil {
				return err
			}
			return cs.PutTeamCheckpoint(ctx, id, loom.TeamCheckpoint{KeyID: CheckpointKeyID(key), Seq: st.Seq, State: b, MAC: checkpointMAC(key, id, st.Seq, b)})
		}()
		c.mu.Lock()
		defer c.mu.Unlock()
		c.saving = false
		if err != nil {
			h.log().Warn("team checkpoint not kept", "team", id, "entry", st.Seq, "err", err)
			return
		}
		c.saved = max(c.saved, st.Seq)
	}()
}
