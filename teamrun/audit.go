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
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/syncpath"
	"github.com/loomhq/loom/team"
)

// Authors audit the hub (docs/team.md, "A dropped record is restored or
// every member is told"). A machine keeps, in the team's directory's
// file sent, a line for each record it put on the hub (its writer id,
// index, sum and the session it wrote), appended, so a team of many
// records does not rewrite it. At every sync it compares the digest of
// those sums with the digest of what the hub holds of its writer id (64
// bytes from the hub); only when they differ does it ask for each
// record's sum, and sends again, as its next records, each session a
// lost or altered record wrote, as it is now (whole, or its deletion),
// naming the indexes it stands for (Payload.Restores): a teammate who
// found them missing stops asking for them.

func (l Local) sentFile(id string) string { return filepath.Join(l.Dir, id, "sent") }

// sentLog is the file sent: lines "w HOST INDEX SUM SESSION PROJECT" for
// a record put on the hub, and "r HOST INDEX SUM" for a record restored
// (sent again as a later one), SUM being what the hub held at its index
// then ("-" for nothing).
type sentLog string

// sentRecord is what the file sent says of one of a writer's records.
type sentRecord struct {
	sum, session, project string
	// restored is set once the record was sent again as a later one;
	// held is then what the hub held at its index ("-" for nothing).
	restored bool
	held     string
}

func (l sentLog) append(line string) error {
	if l == "" {
		return nil
	}
	f, err := os.OpenFile(string(l), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	return errors.Join(err, f.Close())
}

func (l sentLog) wrote(rec team.Record, session, project string) error {
	return l.append(fmt.Sprintf("w %s %d %s %s %s", rec.Host, rec.Index, hex.EncodeToString(loom.TeamRecordSum(rec.Header, rec.Body)), session, orDash(project)))
}

func (l sentLog) restored(host string, index int64, held string) error {
	return l.append(fmt.Sprintf("r %s %d %s", host, index, orDash(held)))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// read returns what the file says of host's records, by index.
func (l sentLog) read(host string) (map[int64]*sentRecord, error) {
	out := map[int64]*sentRecord{}
	f, err := os.Open(string(l))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		if len(w) < 4 || w[1] != host {
			continue
		}
		idx, err := strconv.ParseInt(w[2], 10, 64)
		if err != nil {
			continue
		}
		switch {
		case w[0] == "w" && len(w) == 6:
			p := w[5]
			if p == "-" {
				p = ""
			}
			out[idx] = &sentRecord{sum: w[3], session: w[4], project: p}
		case w[0] == "r" && out[idx] != nil:
			out[idx].restored, out[idx].held = true, w[3]
		}
	}
	return out, sc.Err()
}

// expected is what the hub should hold of the records in sent: each
// one's sum as sent, or for one restored, what the hub held then.
func expected(sent map[int64]*sentRecord) []loom.TeamSum {
	var out []loom.TeamSum
	for idx, r := range sent {
		sum := r.sum
		if r.restored {
			sum = r.held
		}
		if sum == "-" {
			continue
		}
		b, err := hex.DecodeString(sum)
		if err != nil {
			continue
		}
		out = append(out, loom.TeamSum{Index: idx, Sum: b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// audit compares what the hub holds of this machine's writer id with
// what it sent, and when they differ marks each session a record the
// hub lost or altered wrote to be sent again by this sync's publish.
func (e *Client) audit(ctx context.Context, p *publisher) error {
	s := p.v.Local
	log := sentLog(e.Local.sentFile(s.ID))
	sent, err := log.read(s.Host)
	if err != nil || len(sent) == 0 || e.put != nil {
		return err
	}
	from := int64(-1)
	for idx := range sent {
		if from < 0 || idx-1 < from {
			from = idx - 1
		}
	}
	want := expected(sent)
	c := e.client(s.Hub)
	held, err := c.TeamSums(ctx, s.ID, s.Host, from, false)
	if loom.ErrorCode(err) == loom.ENOTFOUND {
		// A hub of before the audit (the team itself was read just
		// now): nothing to compare with.
		slog.Warn("team sync: the hub answers no sums of a writer's records: this machine's records are not audited", "team", s.Name, "err", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("team %s: auditing what the hub holds of this machine's records: %w", s.Name, err)
	}
	if held.Digest == loom.TeamSumsDigest(want) {
		return nil
	}
	held, err = c.TeamSums(ctx, s.ID, s.Host, from, true)
	if err != nil {
		return fmt.Errorf("team %s: auditing what the hub holds of this machine's records: %w", s.Name, err)
	}
	hub := make(map[int64]string, len(held.Sums))
	for _, x := range held.Sums {
		hub[x.Index] = x.Sum
		if sent[x.Index] != nil {
			continue
		}
		// Put on the hub, and this machine stopped before it noted it:
		// what the hub holds is taken as sent (the hub took it signed by
		// this machine's key, under its writer id). One at or past the
		// next index this machine would write is one it never sent (a
		// record replayed there by the hub's operator, or this
		// machine's team state restored from a copy): the hub refuses
		// another record at its index, so this machine writes its next
		// records after it, else it could send nothing more.
		if err := log.append(fmt.Sprintf("w %s %d %s - -", s.Host, x.Index, x.Sum)); err != nil {
			return err
		}
		if x.Index >= s.Next {
			slog.Warn("team sync: the hub holds a record of this machine's writer id past what it sent: its next records go after it", "team", s.Name, "index", x.Index)
			s.Next = x.Index + 1
		}
	}
	idxs := make([]int64, 0, len(sent))
	for idx := range sent {
		idxs = append(idxs, idx)
	}
	slices.Sort(idxs)
	for _, idx := range idxs {
		r := sent[idx]
		now, ok := hub[idx]
		if !ok {
			now = "-"
		}
		switch {
		case r.restored:
			// Sent again already: what the hub holds there now is what
			// the next audit expects.
			if now != r.held {
				if err := log.restored(s.Host, idx, now); err != nil {
					return err
				}
			}
			continue
		case now == r.sum:
			continue
		case r.session == "-":
			// Noted from the hub's sums: which session it wrote, this
			// machine does not know.
			slog.Warn("team sync: the hub lost or altered a record of this machine's that it cannot send again", "team", s.Name, "index", idx)
			continue
		}
		if p.restores == nil {
			p.restores, p.held = map[string][]int64{}, map[int64]string{}
		}
		p.restores[r.session] = append(p.restores[r.session], idx)
		p.held[idx] = now
		if old := s.Sent[r.session]; old != nil {
			old.Resend = true
		} else if s.Foreign[r.session] == "" {
			// Deleted since (or its deletion is what was lost): its
			// deletion is sent again, or the session whole if it is back.
			s.Sent[r.session] = &Sent{Project: r.project, Resend: true}
		}
	}
	return e.Local.Save(s)
}

// restoredBy notes, once rec is on the hub, the records of this
// machine it was sent again for.
func (p *publisher) restoredBy(pl *Payload) error {
	log := sentLog(p.e.Local.sentFile(p.v.Local.ID))
	for _, idx := range pl.Restores {
		held := p.held[idx]
		if err := log.restored(p.v.Local.Host, idx, held); err != nil {
			return err
		}
		if held == "-" {
			p.out.Restored = append(p.out.Restored, idx)
		} else {
			p.out.Altered = append(p.out.Altered, idx)
		}
	}
	delete(p.restores, pl.Session.ID)
	return nil
}

// RestoredLine says in one line what this sync sent again of what the
// hub lost or altered of this machine's records, "" for nothing.
func (out *Sync) RestoredLine() string {
	var parts []string
	if n := len(out.Restored); n > 0 {
		parts = append(parts, fmt.Sprintf("the hub had lost %d of this machine's records (%s)", n, indexList(out.Restored)))
	}
	if n := len(out.Altered); n > 0 {
		parts = append(parts, fmt.Sprintf("the hub held %d of this machine's records altered (%s)", n, indexList(out.Altered)))
	}
	line := ""
	if len(parts) > 0 {
		line = strings.Join(parts, ", and ") + "; sent again"
	}
	if out.Relayed > 0 {
		if line != "" {
			line += "; and "
		}
		line += fmt.Sprintf("the hub had lost or altered %d records of writers who left the team, kept by this machine; sent on", out.Relayed)
	}
	return line
}

func indexList(idxs []int64) string {
	var b strings.Builder
	for i, x := range idxs {
		if i == 10 {
			fmt.Fprintf(&b, ", … %d more", len(idxs)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	return b.String()
}

// A teammate's side: gaps in a writer's records.

// Gap is a run of a writer's records the hub does not hold, From to To,
// found by a pull: kept in the team's state and asked for again at every
// sync until the hub holds them or their author's machine sends them
// again (a later record of the writer whose Restores names them).
type Gap struct {
	Host   string `json:"host"`
	From   int64  `json:"from"`
	To     int64  `json:"to"`
	Member string `json:"member,omitempty"`
	// Left is set when the writer's key left the team: its author sends
	// nothing again, a teammate who kept its records does.
	Left bool `json:"left,omitempty"`
}

// Line is the gap in one line, naming its writer's member.
func (g Gap) Line() string {
	who := g.Member
	if who == "" {
		who = "a writer no member of the chain"
	}
	if g.Left {
		return fmt.Sprintf("writer %s (%s, who left the team): records %d to %d are missing on the hub: asked again at every sync until the hub holds them (the admin's machine kept them at the removal, and sends them on)", g.Host, who, g.From, g.To)
	}
	return fmt.Sprintf("writer %s (%s): records %d to %d are missing on the hub: asked again at every sync until the hub holds them or %s's machine sends them again", g.Host, who, g.From, g.To, who)
}

// GapLines says gaps a line each, the first syncpath.MaxLines, then
// one line for the rest.
func GapLines(gaps []Gap) []string {
	var out []string
	for i, g := range gaps {
		if i == syncpath.MaxLines {
			var n int64
			for _, r := range gaps[i:] {
				n += r.To - r.From + 1
			}
			out = append(out, fmt.Sprintf("and %d more runs of missing records (%d records), asked again at every sync", len(gaps)-i, n))
			break
		}
		out = append(out, g.Line())
	}
	return out
}

// addGap notes records from to to of host missing.
func addGap(s *State, host string, from, to int64) {
	if s.Gaps == nil {
		s.Gaps = map[string][][2]int64{}
	}
	s.Gaps[host] = append(s.Gaps[host], [2]int64{from, to})
}

// closeGap takes index idx of host out of its gaps.
func closeGap(s *State, host string, idx int64) {
	var out [][2]int64
	for _, g := range s.Gaps[host] {
		switch {
		case idx < g[0] || idx > g[1]:
			out = append(out, g)
		default:
			if g[0] < idx {
				out = append(out, [2]int64{g[0], idx - 1})
			}
			if idx < g[1] {
				out = append(out, [2]int64{idx + 1, g[1]})
			}
		}
	}
	if len(out) == 0 {
		delete(s.Gaps, host)
		return
	}
	s.Gaps[host] = out
}

// restoresOf is what a record's payload says it was sent again for.
func restoresOf(payload []byte) []int64 {
	if !bytes.Contains(payload, []byte(`"restores"`)) {
		return nil
	}
	var p struct {
		Restores []int64 `json:"restores"`
	}
	json.Unmarshal(payload, &p)
	return p.Restores
}

// writerMember names the member whose key writer id host is bound to,
// and reports whether that key is in the team now.
func writerMember(st *team.State, s *State, host string) (name string, in bool) {
	key := s.Writers[host]
	if key == "" {
		for fp := range st.Past {
			if team.OwnsWriter(fp, host) {
				key = fp
				break
			}
		}
	}
	if key == "" || st.IsInvite(key) {
		return "", false
	}
	if m := st.MemberOf(key); m != nil {
		return m.Name, st.In(key)
	}
	return "", false
}

// pruneGaps forgets the gaps of writers whose key left the team, but
// those up to the last index the chain named for the writer when it
// went (State.Cut): a teammate who kept those records sends them on
// (relay.go), and every member was told of the rest.
func pruneGaps(st *team.State, s *State) {
	for h, gs := range s.Gaps {
		if _, in := writerMember(st, s, h); in {
			continue
		}
		var keep [][2]int64
		for _, g := range gs {
			if departedBounds(st, h, g[0]) {
				keep = append(keep, [2]int64{g[0], min(g[1], st.Cut[h])})
			}
		}
		if len(keep) == 0 {
			delete(s.Gaps, h)
			continue
		}
		s.Gaps[h] = keep
	}
}

// departedBounds reports whether the chain named, when writer host's
// key left the team, a last index of it at or past idx: a record its
// author wrote before it went.
func departedBounds(st *team.State, host string, idx int64) bool {
	last, ok := st.Cut[host]
	return ok && idx >= 1 && idx <= last
}

// gaps lists the gaps still open after a sync, a line's worth each.
func gaps(st *team.State, s *State) []Gap {
	hosts := make([]string, 0, len(s.Gaps))
	for h := range s.Gaps {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	var out []Gap
	for _, h := range hosts {
		who, in := writerMember(st, s, h)
		for _, g := range s.Gaps[h] {
			out = append(out, Gap{Host: h, From: g[0], To: g[1], Member: who, Left: !in})
		}
	}
	return out
}
