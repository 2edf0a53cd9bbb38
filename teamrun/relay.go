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
// by writer, in index order (a record kept twice once).
func (l Local) keptDeparted(id string) (map[string][]loom.SyncRecord, error) {
	f, err := os.Open(l.departedFile(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	byIdx := map[string]map[int64]loom.SyncRecord{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var x loom.SyncRecord
		if json.Unmarshal(sc.Bytes(), &x) != nil {
			continue
		}
		if byIdx[x.Host] == nil {
			byIdx[x.Host] = map[int64]loom.SyncRecord{}
		}
		byIdx[x.Host][x.Index] = x
	}
	if err := sc.Err(); err != nil {
		return nil, err
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
	kept, err := e.Local.keptDeparted(s.ID)
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
