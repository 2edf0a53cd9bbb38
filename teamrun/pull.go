package teamrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/syncpath"
	"github.com/loomhq/loom/team"
)

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
	if !out.asked {
		out.asked = true
		changed, err := e.fillGaps(ctx, v, st, out)
		if err != nil {
			return err
		}
		scrub = changed
	}
	byJoin(v.State, hosts)
	for _, h := range hosts {
		// A writer's records a page at a time on the one path of
		// records (syncpath.Writer); a record kept apart stops its
		// writer until the next sync.
		_, err := syncpath.Writer(ctx, c.Team(s.ID), h.Host, s.Applied[h.Host], h.Last, pageRecords, func(recs []loom.SyncRecord) (int64, bool, error) {
			after := s.Applied[h.Host]
			// What this page applied of a teammate, kept byte for byte
			// before the index is saved, to send on if its writer leaves
			// and the hub loses or alters it (keepApplied, relay).
			var kept []loom.SyncRecord
			save := func() error {
				if h.Host != s.Host {
					if err := e.Local.keepApplied(s.ID, h.Host, kept); err != nil {
						return err
					}
				}
				return e.Local.Save(s)
			}
			for _, x := range recs {
				r := team.RecordOf(x)
				if r.Index <= after {
					continue
				}
				// The hub holds no record between (gap): when the record
				// after it is its member's, signed, what the hub lost or
				// withheld is asked for again at every sync (fillGaps)
				// until it holds them or their author's machine sends them
				// again; otherwise it is said once.
				gap := r.Index != after+1
				missing := SetAside{Host: h.Host, Index: after + 1, Why: fmt.Sprintf("records %d to %d are missing on the hub", after+1, r.Index-1)}
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
					return after, true, save()
				}
				if errors.Is(err, envelope.ErrTampered) && alteredGap(v.State, s, h.Host, r.Index) {
					// Altered on the hub: its author's audit sends it again
					// (closing the gap), or, its author gone, a teammate who
					// applied it sends it on (relay); asked again until then.
					addGap(s, h.Host, r.Index, r.Index)
				}
				if err == nil && hd.ChainSeq < s.Heads[h.Host] {
					err = fmt.Errorf("%w: it names entry %d of the chain, and the record of this writer before it named entry %d: a writer's heads only move forward", team.ErrNotThen, hd.ChainSeq, s.Heads[h.Host])
				}
				if err == nil {
					if s.Heads == nil {
						s.Heads = map[string]int64{}
					}
					s.Heads[h.Host] = hd.ChainSeq
					if _, in := writerMember(v.State, s, h.Host); gap && (in || departedBounds(v.State, h.Host, after+1)) {
						addGap(s, h.Host, after+1, r.Index-1)
						gap = false
					}
					for _, i := range restoresOf(payload) {
						closeGap(s, h.Host, i)
					}
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
				if gap {
					out.setAside(s, missing)
				}
				if err != nil {
					out.setAside(s, SetAside{Host: h.Host, Index: r.Index, Author: authorOf(v.State, r), Why: refusal(err)})
				} else {
					out.Applied++
					kept = append(kept, x)
				}
				after = r.Index
				s.Applied[h.Host] = after
			}
			return after, false, save()
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// alteredGap reports whether a record of writer host at idx that the hub
// holds altered is a gap, asked for again at every sync: when the writer
// is a member's (their audit sends it again, naming it) or the chain
// named, when it left, a last index at or past idx (a teammate who
// applied it before sends it on: keepApplied, relay). A record altered
// before its writer left is asked for all the same after.
func alteredGap(st *team.State, s *State, host string, idx int64) bool {
	if departedBounds(st, host, idx) {
		return true
	}
	_, in := writerMember(st, s, host)
	return in
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

// byJoin orders hosts as a machine that holds none of their sessions
// yet reads them: by the entry their key joined the chain by (a
// machine's own join, a member's, the genesis first), then by writer
// id; writer ids bound to no key of the chain come last. Honest members
// never write one session twice, and the hub refuses a record of a
// session another member wrote first: when records of one session by
// two members reach a machine all the same (filed by the hub's operator
// by hand), the member who joined first keeps it there, not the one
// whose writer id the hub lists first.
func byJoin(st *team.State, hosts []loom.SyncHost) {
	joined := make(map[string]int64, len(st.Joined))
	for key, seq := range st.Joined {
		joined[strings.ReplaceAll(key, " ", "")] = seq
	}
	at := make(map[string]int64, len(hosts))
	for _, h := range hosts {
		fp, _, _ := strings.Cut(h.Host, "-")
		seq, ok := joined[fp]
		if !ok || !team.Bound(h.Host) {
			seq = math.MaxInt64
		}
		at[h.Host] = seq
	}
	sort.SliceStable(hosts, func(i, j int) bool {
		a, b := at[hosts[i].Host], at[hosts[j].Host]
		if a != b {
			return a < b
		}
		return hosts[i].Host < hosts[j].Host
	})
}

// maxGapAsks bounds the gaps one sync asks the hub for again.
const maxGapAsks = 100

// fillGaps asks the hub again for the records of each writer's gaps
// (State.Gaps): those it holds now are applied, after the writer's
// later records, and a record of the writer's that names them in its
// Restores closes them too.
func (e *Client) fillGaps(ctx context.Context, v *Verified, st Stores, out *Sync) (scrub bool, err error) {
	s := v.Local
	pruneGaps(v.State, s)
	if len(s.Gaps) == 0 {
		return false, nil
	}
	c := e.client(s.Hub)
	hosts := make([]string, 0, len(s.Gaps))
	for h := range s.Gaps {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	asked := 0
	for _, host := range hosts {
		var kept []loom.SyncRecord
		for _, g := range append([][2]int64(nil), s.Gaps[host]...) {
			if asked++; asked > maxGapAsks {
				// The rest at the next syncs: an operator who drops every
				// other record does not make a sync ask a million times.
				break
			}
			recs, _, err := c.Team(s.ID).Records(ctx, host, g[0]-1, int(min(g[1]-g[0]+1, pageRecords)))
			if err != nil {
				return scrub, err
			}
			for _, x := range recs {
				r := team.RecordOf(x)
				if r.Index < g[0] || r.Index > g[1] {
					continue
				}
				closeGap(s, host, r.Index)
				hd, payload, err := team.OpenRecord(v.State, s.Keys, r)
				if errors.Is(err, envelope.ErrTampered) && alteredGap(v.State, s, host, r.Index) {
					addGap(s, host, r.Index, r.Index) // still altered
				}
				if err == nil {
					for _, i := range restoresOf(payload) {
						closeGap(s, host, i)
					}
					var changed bool
					changed, err = apply(ctx, st, v, hd, payload)
					if err != nil && !recordsFault(err) {
						return scrub, fmt.Errorf("record %d of writer %s: %w", r.Index, host, err)
					}
					scrub = scrub || changed
				}
				if err != nil {
					out.setAside(s, SetAside{Host: host, Index: r.Index, Author: authorOf(v.State, r), Why: refusal(err)})
				} else {
					out.Applied++
					kept = append(kept, x)
				}
			}
		}
		if host != s.Host {
			if err := e.Local.keepApplied(s.ID, host, kept); err != nil {
				return scrub, err
			}
		}
	}
	return scrub, e.Local.Save(s)
}
