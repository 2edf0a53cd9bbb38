package teamrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/team"
)

// Records of writers who left (docs/team.md, "A dropped record is
// restored or every member is told"): their author can send nothing
// again, so when the hub loses or alters one after they went, the
// admin's machine, which kept them as the hub held them when its
// removal or rotation named their last index (the chain's Cut), sends
// them on byte for byte. The hub takes such a record from any member
// (team.CheckRelay: signed by its author, up to the index the chain
// named), and teammates who read past it ask for it again until it is
// back (a gap of the writer's, kept while the chain bounds its log).

// departedFile keeps, a JSON line each, the records of writers who left
// that this machine kept.
func (l Local) departedFile(id string) string { return filepath.Join(l.Dir, id, "departed") }

// keepDeparted keeps the records the hub holds of each writer of cut up
// to the index the entry being written names for it, those signed by
// their author (team.SignedRecord): what this machine sends on later.
func (e *Client) keepDeparted(ctx context.Context, v *Verified, cut map[string]int64) error {
	if len(cut) == 0 {
		return nil
	}
	s := v.Local
	c := e.client(s.Hub).Team(s.ID)
	hosts := make([]string, 0, len(cut))
	for h := range cut {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	var b bytes.Buffer
	for _, host := range hosts {
		after := int64(0)
		for after < cut[host] {
			recs, _, err := c.Records(ctx, host, after, pageRecords)
			if err != nil {
				return fmt.Errorf("team %s: keeping writer %s's records: %w", s.Name, host, err)
			}
			if len(recs) == 0 {
				break
			}
			for _, x := range recs {
				if x.Index > cut[host] {
					break
				}
				after = x.Index
				if _, err := team.SignedRecord(v.State, team.RecordOf(x)); err != nil {
					continue
				}
				line, err := json.Marshal(x)
				if err != nil {
					return err
				}
				b.Write(line)
				b.WriteByte('\n')
			}
			if recs[len(recs)-1].Index > cut[host] {
				break
			}
		}
	}
	if b.Len() == 0 {
		return nil
	}
	f, err := os.OpenFile(e.Local.departedFile(s.ID), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	return errors.Join(err, f.Close())
}

// keep keeps the records of cut (keepDeparted) before the entry that
// names it is written; a failure is logged, and does not stop a removal.
func (e *Client) keep(ctx context.Context, v *Verified, cut map[string]int64) {
	if err := e.keepDeparted(ctx, v, cut); err != nil {
		slog.Warn("team: the records of the writers who leave were not kept, to send on if the hub loses them", "team", v.Local.Name, "err", err)
	}
}

// keptDeparted reads the records this machine kept of writers who left,
// by writer, in index order (a record kept twice once): those the
// admin's machine kept at a removal (departedFile) and those this
// machine applied (appliedFile) of each writer of cut, the chain's last
// index of each writer who left, up to it.
func (l Local) keptDeparted(id string, cut map[string]int64) (map[string][]loom.SyncRecord, error) {
	byIdx := map[string]map[int64]loom.SyncRecord{}
	if err := readKept(l.departedFile(id), byIdx, nil); err != nil {
		return nil, err
	}
	for host := range cut {
		if err := readKept(l.appliedFile(id, host), byIdx, cut); err != nil {
			return nil, err
		}
	}
	out := make(map[string][]loom.SyncRecord, len(byIdx))
	for h, m := range byIdx {
		for _, x := range m {
			out[h] = append(out[h], x)
		}
		sort.Slice(out[h], func(i, j int) bool { return out[h][i].Index < out[h][j].Index })
	}
	return out, nil
}

// relay audits the hub's copy of each writer's records this machine
// kept (one request a writer, the digest of its sums, as an author's
// audit does) and sends on each one the hub lost or holds altered. A
// refusal is logged, not the sync's failure: a hub before relays takes
// none.
func (e *Client) relay(ctx context.Context, v *Verified, out *Sync) error {
	s := v.Local
	kept, err := e.Local.keptDeparted(s.ID, v.State.Cut)
	if err != nil || len(kept) == 0 {
		return err
	}
	c := e.client(s.Hub)
	hosts := make([]string, 0, len(kept))
	for h := range kept {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, host := range hosts {
		recs := kept[host]
		mine := make([]loom.TeamSum, len(recs))
		for i, x := range recs {
			mine[i] = loom.TeamSum{Index: x.Index, Sum: loom.TeamRecordSum(x.Header, x.Body)}
		}
		held, err := c.TeamSums(ctx, s.ID, host, 0, false)
		if err != nil {
			return err
		}
		if held.Digest == loom.TeamSumsDigest(mine) {
			continue
		}
		if held, err = c.TeamSums(ctx, s.ID, host, 0, true); err != nil {
			return err
		}
		sums := make(map[int64]string, len(held.Sums))
		for _, x := range held.Sums {
			sums[x.Index] = x.Sum
		}
		for i, x := range recs {
			if sums[x.Index] == hex.EncodeToString(mine[i].Sum) {
				continue
			}
			if _, err := c.Team(s.ID).Put(ctx, []loom.SyncRecord{x}); err != nil {
				if ctx.Err() != nil {
					return err
				}
				slog.Warn("team sync: the hub refused a record of a writer who left, sent on", "team", s.Name, "writer", host, "index", x.Index, "err", err)
				continue
			}
			out.Relayed++
		}
	}
	return nil
}

// Records a machine applied of its teammates (docs/team.md, "Every
// machine keeps what it applied"): the operator can alter or drop a
// record on the hub after a teammate applied it and before its author's
// machine syncs again (whose audit would send it again); when the author
// is removed then, its author sends nothing again and the admin keeps
// only what the hub still held signed. So every machine keeps, byte for
// byte, the records of other writers it applied, a file a writer, and
// sends on those of writers who left (relay), as the admin's machine
// sends on what it kept at the removal. A writer's file holds what this
// machine applied of it, at most its log up to the index the chain
// named when it left: no more bytes than the hub served it, the team's
// store holds the same sessions opened.

// appliedDir holds the records this machine applied of other writers.
func (l Local) appliedDir(id string) string { return filepath.Join(l.Dir, id, "applied") }

// appliedFile is writer host's file in appliedDir: its name is the
// writer id in hex, as a hub names writers as it likes.
func (l Local) appliedFile(id, host string) string {
	return filepath.Join(l.appliedDir(id), hex.EncodeToString([]byte(host)))
}

// keepApplied appends recs, records of writer host this machine just
// applied, to the writer's file: before the index applied is saved, so a
// record is kept at least once (a record kept twice is read once).
func (l Local) keepApplied(id, host string, recs []loom.SyncRecord) error {
	if len(recs) == 0 {
		return nil
	}
	var b bytes.Buffer
	for _, x := range recs {
		line, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(l.appliedDir(id), 0o700); err != nil {
		return fmt.Errorf("keeping the records applied of writer %s: %w", host, err)
	}
	f, err := os.OpenFile(l.appliedFile(id, host), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("keeping the records applied of writer %s: %w", host, err)
	}
	_, err = f.Write(b.Bytes())
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("keeping the records applied of writer %s: %w", host, err)
	}
	return nil
}

// readKept reads a file of records a JSON line each into byIdx, by
// writer and index, those up to last when last is not nil.
func readKept(path string, byIdx map[string]map[int64]loom.SyncRecord, last map[string]int64) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var x loom.SyncRecord
		if json.Unmarshal(sc.Bytes(), &x) != nil {
			continue
		}
		if last != nil {
			if l, ok := last[x.Host]; !ok || x.Index < 1 || x.Index > l {
				continue
			}
		}
		if byIdx[x.Host] == nil {
			byIdx[x.Host] = map[int64]loom.SyncRecord{}
		}
		byIdx[x.Host][x.Index] = x
	}
	return sc.Err()
}
