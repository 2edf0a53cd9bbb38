package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// Host implements sessionstore.ApplySteps.
func (t *tx) Host(ctx context.Context) (synclog.HostID, error) { return t.st.host, nil }

// SetHost implements sessionstore.ApplySteps.
func (t *tx) SetHost(ctx context.Context, host synclog.HostID) error {
	if t.st.host != "" {
		return fmt.Errorf("the store is host %s already", t.st.host)
	}
	t.st.host = host
	return nil
}

// Owner implements sessionstore.ApplySteps.
func (t *tx) Owner() string { return t.s.holder.Owner }

// Applied implements sessionstore.ApplySteps.
func (t *tx) Applied(ctx context.Context, host synclog.HostID) (int64, error) {
	return t.st.applied[host], nil
}

// SetApplied implements sessionstore.ApplySteps.
func (t *tx) SetApplied(ctx context.Context, host synclog.HostID, idx int64) error {
	t.st.applied[host] = idx
	return nil
}

// Observe implements sessionstore.ApplySteps.
func (t *tx) Observe(ctx context.Context, hlc synclog.HLC) error {
	if err := t.s.clock.Observe(hlc); err != nil {
		return err
	}
	t.st.appliedHLC = max(t.st.appliedHLC, hlc)
	return nil
}

// Replaced implements sessionstore.ApplySteps: a store in memory has
// no files for replaced text to stay readable in.
func (t *tx) Replaced(ctx context.Context) error { return nil }

// states returns the map that keeps state kind.
func (st *state) states(kind sessionstore.State) map[string]string {
	switch kind {
	case sessionstore.LifeState:
		return st.life
	case sessionstore.PurgeKeptState:
		return st.purgeKept
	}
	return st.meta
}

// LoadState implements sessionstore.StampSteps.
func (t *tx) LoadState(ctx context.Context, kind sessionstore.State, id string) (string, error) {
	return t.st.states(kind)[id], nil
}

// SaveState implements sessionstore.StampSteps.
func (t *tx) SaveState(ctx context.Context, kind sessionstore.State, id, value string) error {
	t.st.states(kind)[id] = value
	return nil
}

// States implements sessionstore.StampSteps, by session id.
func (t *tx) States(ctx context.Context, kind sessionstore.State) ([]sessionstore.StateRow, error) {
	var out []sessionstore.StateRow
	for id, v := range t.st.states(kind) {
		out = append(out, sessionstore.StateRow{ID: id, Value: v})
	}
	slices.SortFunc(out, func(a, b sessionstore.StateRow) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// MessageStamp implements sessionstore.StampSteps.
func (t *tx) MessageStamp(ctx context.Context, id string, usage bool) (synclog.Stamp, error) {
	s, ok := t.st.stamps[id]
	if !ok {
		return synclog.Stamp{}, nil
	}
	if usage && s.usage != nil {
		return *s.usage, nil
	}
	return s.st, nil
}

// PartStamp implements sessionstore.StampSteps.
func (t *tx) PartStamp(ctx context.Context, mid, pid string) (synclog.Stamp, bool, error) {
	st, ok := t.st.partStamps[[2]string{mid, pid}]
	return st, ok, nil
}

// StampMessage implements sessionstore.StampSteps.
func (t *tx) StampMessage(ctx context.Context, id string, st synclog.Stamp) error {
	if _, ok := t.st.stamps[id]; !ok {
		t.st.stamps[id] = msgStamp{st: st}
	}
	return nil
}

// StampPart implements sessionstore.StampSteps.
func (t *tx) StampPart(ctx context.Context, mid, pid string, st synclog.Stamp) error {
	t.st.partStamps[[2]string{mid, pid}] = st
	return nil
}

// StampUsage implements sessionstore.StampSteps: a message without a stamp
// of its append gets a zero one.
func (t *tx) StampUsage(ctx context.Context, mid string, st synclog.Stamp) error {
	s := t.st.stamps[mid]
	s.usage = &st
	t.st.stamps[mid] = s
	return nil
}

// Purged implements sessionstore.LineageSteps.
func (t *tx) Purged(ctx context.Context, id string) (bool, error) { return t.st.purged[id], nil }

// MarkPurged implements sessionstore.LineageSteps.
func (t *tx) MarkPurged(ctx context.Context, id string) error {
	t.st.purged[id] = true
	return nil
}

// DeleteRow implements sessionstore.MergeSteps.
func (t *tx) DeleteRow(ctx context.Context, id string) error {
	t.st.deleteSession(id)
	return nil
}

// SaveFork implements sessionstore.LineageSteps.
func (t *tx) SaveFork(ctx context.Context, id, parent string, base int64, kind sessionstore.ForkKind) error {
	t.st.forks[id] = fork{parent: parent, base: base, kind: kind}
	return nil
}

// ForksOf implements sessionstore.LineageSteps.
func (t *tx) ForksOf(ctx context.Context, parent string, kinds ...sessionstore.ForkKind) ([]string, error) {
	var out []string
	for id, f := range t.st.forks {
		if f.parent == parent && slices.Contains(kinds, f.kind) {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if c := t.st.forks[a].base - t.st.forks[b].base; c != 0 {
			return int(max(-1, min(1, c)))
		}
		return strings.Compare(a, b)
	})
	return out, nil
}

// MoveForks implements sessionstore.LineageSteps.
func (t *tx) MoveForks(ctx context.Context, parent, to string, from int64) error {
	for id, f := range t.st.forks {
		if f.parent != parent || f.base < from {
			continue
		}
		if x, ok := t.st.sessions[id]; ok {
			x.ParentID = to
			t.st.sessions[id] = x
		}
		f.parent = to
		t.st.forks[id] = f
	}
	return nil
}

// TwinFork implements sessionstore.LineageSteps.
func (t *tx) TwinFork(ctx context.Context, of, parent, id, title string, turn int) error {
	if src, ok := t.st.sessions[of]; ok {
		x := forkRow(src, id, "", title, parent, turn)
		x.MessageCount, x.TurnCount, x.SummarySeq, x.LastPrompt = src.MessageCount, src.TurnCount, src.SummarySeq, src.LastPrompt
		x.Usage, x.CreatedAt, x.UpdatedAt = src.Usage, src.CreatedAt, src.UpdatedAt
		if err := t.st.insertSession(x); err != nil {
			return err
		}
	}
	spans := t.st.spans[of]
	var last int64
	if len(spans) > 0 {
		last = spans[len(spans)-1].Last
	}
	t.st.spans[id] = span.Inherit(spans, last, id)
	return nil
}

// Messages implements sessionstore.MergeSteps.
func (t *tx) Messages(ctx context.Context, id string, from, to int64) ([]*loom.Message, error) {
	return t.st.messages(id, from, to)
}

// MessagesFrom implements sessionstore.HistorySteps.
func (t *tx) MessagesFrom(ctx context.Context, id string, from int64, limit int) ([]*loom.Message, error) {
	msgs, err := t.st.messages(id, from, span.OpenSeq)
	if len(msgs) > limit {
		msgs = msgs[:limit]
	}
	return msgs, err
}

// AllSessions implements sessionstore.HistorySteps.
func (t *tx) AllSessions(ctx context.Context) ([]*loom.Session, error) {
	var out []*loom.Session
	for _, x := range t.st.sessions {
		out = append(out, t.s.session(t.st, x))
	}
	oldestFirst(out, func(x *loom.Session) time.Time { return x.CreatedAt })
	return out, nil
}

// MessageID implements sessionstore.MergeSteps.
func (t *tx) MessageID(ctx context.Context, id string, seq int64) (string, error) {
	if seq < 1 {
		return "", nil
	}
	if l := t.st.through(id, seq, seq); len(l) > 0 {
		return l[0].r.id, nil
	}
	return "", nil
}

// StoreOf implements sessionstore.MergeSteps.
func (t *tx) StoreOf(ctx context.Context, id string, seq int64) (string, error) {
	if sp, ok := span.Of(t.st.spans[id], seq); ok {
		return sp.RowsOf, nil
	}
	return "", fmt.Errorf("session %s reads no message %d", id, seq)
}

// Touch implements sessionstore.MergeSteps.
func (t *tx) Touch(ctx context.Context, id string, at time.Time) error {
	if x, ok := t.st.sessions[id]; ok && x.Source == nil && stored(at).After(x.UpdatedAt) {
		x.UpdatedAt = at
		return t.st.put(x)
	}
	return nil
}

// SetColumns implements sessionstore.MergeSteps.
func (t *tx) SetColumns(ctx context.Context, id string, c sessionstore.Columns) error {
	x, ok := t.st.sessions[id]
	if !ok {
		return nil
	}
	for _, f := range []struct {
		dst *string
		v   *string
	}{{&x.Title, c.Title}, {&x.Description, c.Description}, {&x.Cwd, c.Cwd}, {&x.Model, c.Model},
		{&x.Provider, c.Provider}, {&x.Profile, c.Profile}, {&x.GitBranch, c.GitBranch}, {&x.Surface, c.Surface}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if c.ClearKey {
		x.Key = ""
	}
	if c.Project != nil {
		x.Project = *c.Project
	}
	if c.Archive {
		x.ArchivedAt = c.Archived
	}
	if c.UpdatedAt != nil && stored(*c.UpdatedAt).After(x.UpdatedAt) {
		x.UpdatedAt = *c.UpdatedAt
	}
	return t.st.put(x)
}

// SetWriterRow implements sessionstore.MergeSteps.
func (t *tx) SetWriterRow(ctx context.Context, row *loom.Session) error {
	x, ok := t.st.sessions[row.ID]
	if !ok {
		return nil
	}
	x.Surface, x.Description, x.Project, x.Cwd, x.Model = row.Surface, row.Description, row.Project, row.Cwd, row.Model
	x.Provider, x.Profile, x.GitBranch, x.CreatedAt, x.UpdatedAt = row.Provider, row.Profile, row.GitBranch, row.CreatedAt, row.UpdatedAt
	return t.st.put(x)
}

// SetConflictRow implements sessionstore.MergeSteps.
func (t *tx) SetConflictRow(ctx context.Context, parent, id string, created time.Time) error {
	x, ok := t.st.sessions[id]
	if !ok {
		return nil
	}
	x.CreatedAt, x.UpdatedAt, x.Key, x.ArchivedAt = created, created, "", nil
	if p, ok := t.st.sessions[parent]; ok {
		x.ArchivedAt = p.ArchivedAt
	}
	return t.st.put(x)
}

// SetDeleted implements sessionstore.MergeSteps.
func (t *tx) SetDeleted(ctx context.Context, id string, at *time.Time) (bool, error) {
	x, ok := t.st.sessions[id]
	if !ok || sameTime(x.DeletedAt, at) {
		return false, nil
	}
	x.DeletedAt = at
	if at == nil {
		x.Key = ""
	}
	return true, t.st.put(x)
}

// KeyOf implements sessionstore.KeySteps.
func (t *tx) KeyOf(ctx context.Context, id string) (sessionstore.KeyScope, bool, error) {
	x, ok := t.st.sessions[id]
	if !ok {
		return sessionstore.KeyScope{}, false, nil
	}
	return sessionstore.KeyScope{User: x.UserID, Project: x.Project.ID, Key: x.Key}, true, nil
}

// Claimants implements sessionstore.KeySteps, by id.
func (t *tx) Claimants(ctx context.Context, k sessionstore.KeyScope) ([]string, error) {
	var out []string
	for id, x := range t.st.sessions {
		if x.UserID != k.User || x.Project.ID != k.Project || !live(x) {
			continue
		}
		claims := x.Key != "" && x.Key == k.Key
		if !claims && t.st.meta[id] != "" {
			var m sessionstore.Meta
			if err := json.Unmarshal([]byte(t.st.meta[id]), &m); err != nil {
				return nil, fmt.Errorf("read the metadata of %s: %w", id, err)
			}
			claims = m.Key.Value != "" && m.Key.Value == k.Key
		}
		if claims {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

// GiveKey implements sessionstore.KeySteps.
func (t *tx) GiveKey(ctx context.Context, k sessionstore.KeyScope, holder string) error {
	for id, x := range t.st.sessions {
		if id != holder && live(x) && x.UserID == k.User && x.Project.ID == k.Project && x.Key != "" && x.Key == k.Key {
			x.Key = ""
			t.st.sessions[id] = x
		}
	}
	if holder == "" {
		return nil
	}
	x, ok := t.st.sessions[holder]
	if !ok {
		return nil
	}
	x.Key, x.Surface = k.Key, loom.SurfaceOf(k.Key)
	return t.st.put(x)
}

// KeyTaken implements sessionstore.KeySteps.
func (t *tx) KeyTaken(ctx context.Context, k sessionstore.KeyScope, id string) (bool, error) {
	for oid, x := range t.st.sessions {
		if oid != id && live(x) && x.UserID == k.User && x.Project.ID == k.Project && x.Key != "" && x.Key == k.Key {
			return true, nil
		}
	}
	return false, nil
}
