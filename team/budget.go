package team

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// KindBudget is the admin's setting of the team's budgets per member
// (Entry.Budget): what the hub takes of each member's records and chain
// entries.
const KindBudget = "budget"

// Budget bounds what one member (with every machine of theirs) puts on
// the team's hub: records, by count and bytes (header and sealed body,
// as the hub holds them), and chain entries, by count and bytes (as
// signed; the admin's and the joins are not counted). Every teammate
// downloads all of it, at every sync (records) and every command
// (entries). A field 0 is its default (DefaultBudget).
type Budget struct {
	Records     int64 `json:"records,omitempty"`
	RecordBytes int64 `json:"record_bytes,omitempty"`
	Entries     int64 `json:"entries,omitempty"`
	EntryBytes  int64 `json:"entry_bytes,omitempty"`
}

// DefaultBudget is a team's budget per member until its admin sets one:
// room for years of one member's shared sessions (a session is a few
// records, a few KiB to a few MiB sealed), and for far more invites,
// joins and shares than a member makes, while a teammate's download
// stays bounded.
var DefaultBudget = Budget{
	Records:     100_000,
	RecordBytes: 1 << 30,
	Entries:     1000,
	EntryBytes:  4 << 20,
}

// maxBudget bounds what a budget entry may set any field to.
const maxBudget = 1 << 50

// Or returns b with each field 0 taken from def.
func (b Budget) Or(def Budget) Budget {
	pick := func(v, d int64) int64 {
		if v == 0 {
			return d
		}
		return v
	}
	return Budget{pick(b.Records, def.Records), pick(b.RecordBytes, def.RecordBytes), pick(b.Entries, def.Entries), pick(b.EntryBytes, def.EntryBytes)}
}

// Budgets returns the team's budget per member now: the admin's last
// budget entry, its fields 0 (or no entry) the defaults.
func (st *State) Budgets() Budget { return st.Budget.Or(DefaultBudget) }

// Usage is what one member signed of the chain: entries and their bytes
// as signed (joins and the admin's not counted).
type Usage struct {
	Entries int64
	Bytes   int64
}

// SetBudget makes the admin's entry that sets the team's budget per
// member to b (a field 0: its default).
func SetBudget(st *State, admin *Identity, b Budget, at time.Time) ([]byte, error) {
	if admin.Fingerprint() != st.Admin {
		return nil, fmt.Errorf("only the team's admin sets its budgets")
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	e := st.NewEntry(KindBudget, admin.Fingerprint(), at)
	e.Budget = &b
	return Sign(e, admin)
}

func (b Budget) check() error {
	for _, v := range []int64{b.Records, b.RecordBytes, b.Entries, b.EntryBytes} {
		if v < 0 || v > maxBudget {
			return errors.New("a budget is a whole number, 0 (the default) or more")
		}
	}
	return nil
}

// takeBudget applies e, the admin's budget entry.
func (st *State) takeBudget(e *Entry) error {
	if e.Budget == nil {
		return errors.New("a budget entry without its budget")
	}
	if err := e.Budget.check(); err != nil {
		return err
	}
	st.Budget = *e.Budget
	return nil
}

// count adds e, signed as size bytes, to what member (its signer's, as
// the chain was before e) signed of the chain.
func (st *State) count(e *Entry, member string, size int) {
	if e.Kind == KindJoin || e.Kind == KindCreate || e.By == st.Admin || member == "" {
		return
	}
	if st.Signed == nil {
		st.Signed = map[string]Usage{}
	}
	u := st.Signed[member]
	u.Entries++
	u.Bytes += int64(size)
	st.Signed[member] = u
}

// Next checks signed as the chain's next entry against st, the
// checkpoint of a verified chain, and returns the state after it; st is
// left as it was, whether signed is taken or refused. It accepts and
// refuses exactly as Verify of the whole chain with signed after it
// does (TestCheckpointAsWhole), at the cost of one entry, not of the
// chain.
func (st *State) Next(pinned string, signed []byte) (*State, error) {
	n := st.clone()
	if err := n.Apply(pinned, signed); err != nil {
		return nil, err
	}
	return n, nil
}

// clone copies st deeply enough that applying an entry to the copy
// leaves st as it was: its maps and slices (the entries and members
// they point to are never changed once taken).
func (st *State) clone() *State {
	n := *st
	n.Members = maps.Clone(st.Members)
	n.Joined, n.Left = maps.Clone(st.Joined), maps.Clone(st.Left)
	n.EpochAt = maps.Clone(st.EpochAt)
	if st.Holders != nil {
		n.Holders = make(map[int]map[string]bool, len(st.Holders))
		for ep, h := range st.Holders {
			n.Holders[ep] = maps.Clone(h)
		}
	}
	n.Invites, n.Expires, n.Revoked = maps.Clone(st.Invites), maps.Clone(st.Expires), maps.Clone(st.Revoked)
	n.InviteFor, n.InviteBy = maps.Clone(st.InviteFor), maps.Clone(st.InviteBy)
	n.Departed, n.JoinedVia, n.Machines = maps.Clone(st.Departed), maps.Clone(st.JoinedVia), maps.Clone(st.Machines)
	n.Cut, n.Past, n.Signed = maps.Clone(st.Cut), maps.Clone(st.Past), maps.Clone(st.Signed)
	// Clipped, an append copies them rather than write past their end
	// into what st's may share.
	n.Hashes, n.Entries = slices.Clip(st.Hashes), slices.Clip(st.Entries)
	return &n
}

// WriterKeys returns the keys whose writer ids are member's, now or
// before (the member's and each machine's), as writer ids start with
// them: what TeamUsage counts of one member.
func (st *State) WriterKeys(member string) []string {
	out := []string{compact(member)}
	for m, o := range st.machinesEver() {
		if o == member {
			out = append(out, compact(m))
		}
	}
	slices.Sort(out[1:])
	return out
}
