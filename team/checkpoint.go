package team

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"time"
)

// A checkpoint is a verified chain's state as a machine keeps it between
// commands: the next command reads the entries after it from the hub
// and checks each against it (State.Next), rather than reading and
// verifying the whole chain again. It is only as good as the file it is
// kept in: a machine keeps it with its team's keys, which an attacker
// who can write there holds already.

// checkpointVersion changes when State does in a way an older
// checkpoint cannot be read into.
const checkpointVersion = 1

type checkpoint struct {
	Version int
	State   *State
}

// MarshalCheckpoint encodes st as a checkpoint.
func (st *State) MarshalCheckpoint() ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(checkpoint{Version: checkpointVersion, State: st}); err != nil {
		return nil, fmt.Errorf("team %s: checkpoint: %w", st.Team, err)
	}
	return b.Bytes(), nil
}

// MarshalVerifierCheckpoint encodes st as a checkpoint of what verifying
// the chain's next entries and records needs, the hub's: its entries
// without their sealed shares and wrapped keys, which only members open
// and no later entry's check reads. Its size grows with the chain's
// entries, not with their bytes. A state read back from it verifies
// entries and records as st does (TestVerifierCheckpoint), and opens no
// share nor key.
func (st *State) MarshalVerifierCheckpoint() ([]byte, error) {
	n := *st
	n.Entries = make([]*Entry, len(st.Entries))
	for i, e := range st.Entries {
		c := *e
		c.Sealed, c.Keys = nil, nil
		n.Entries[i] = &c
	}
	return n.MarshalCheckpoint()
}

// UnmarshalCheckpoint decodes a checkpoint MarshalCheckpoint made; an
// error for one of another version or not whole (the caller verifies the
// chain from its genesis instead).
func UnmarshalCheckpoint(b []byte) (*State, error) {
	var c checkpoint
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&c); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if c.Version != checkpointVersion || c.State == nil || c.State.Seq == 0 || len(c.State.Entries) != int(c.State.Seq) || len(c.State.Hashes) != int(c.State.Seq) {
		return nil, fmt.Errorf("checkpoint: not one of version %d, or not whole", checkpointVersion)
	}
	st := c.State
	// gob leaves out what is empty: a verified chain's maps are made
	// at its creation, empty or not.
	for _, m := range []*map[string]int64{&st.Joined, &st.Left, &st.Departed} {
		if *m == nil {
			*m = map[string]int64{}
		}
	}
	for _, m := range []*map[string]string{&st.InviteFor, &st.InviteBy, &st.JoinedVia, &st.Machines} {
		if *m == nil {
			*m = map[string]string{}
		}
	}
	for _, m := range []*map[string]bool{&st.Invites, &st.Revoked} {
		if *m == nil {
			*m = map[string]bool{}
		}
	}
	for _, m := range []*map[string]*Member{&st.Members, &st.Past} {
		if *m == nil {
			*m = map[string]*Member{}
		}
	}
	if st.Expires == nil {
		st.Expires = map[string]time.Time{}
	}
	if st.EpochAt == nil {
		st.EpochAt = map[int]int64{}
	}
	if st.Holders == nil {
		st.Holders = map[int]map[string]bool{}
	}
	for ep := range st.EpochAt {
		if st.Holders[ep] == nil {
			st.Holders[ep] = map[string]bool{}
		}
	}
	return st, nil
}
