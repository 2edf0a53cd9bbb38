package hub

import (
	"context"
	"net/http"

	"github.com/loomhq/loom"
)

// Record spaces. The hub keeps records in spaces: a user's own (the
// records of sync, of that user's machines) and each team's (the
// records its members' machines publish). Every space is served by the
// same code, below: its writers' last indexes (hosts), a page of a
// writer's records (records), and a push (push), with the same bounds
// on bodies and batches, the same page cut, the same idempotent put and
// the same answers. What a space brings is small: where its records are
// kept (records), who may use it (checked when it is opened), and what
// a push must satisfy beyond the common checks (valid, admit).

// spaceRecords is the one interface the hub reads and writes a space's
// records through; the store behind it keeps each kind in its own
// tables (docs/team.md, "Storage").
type spaceRecords interface {
	// put stores recs, skipping those held already, and returns how many
	// it had not held.
	put(ctx context.Context, recs []loom.SyncRecord) (int, error)
	// page returns up to limit of host's records after index after, in
	// order, cut at loom.MaxSyncPageBytes (always one at least).
	page(ctx context.Context, host string, after int64, limit int) ([]loom.SyncRecord, error)
	// hosts returns each writer's last index, and its records and bytes
	// when counts is set.
	hosts(ctx context.Context, counts bool) ([]loom.SyncHost, error)
	// lasts returns the last index held of each of hosts.
	lasts(ctx context.Context, hosts []string) (map[string]int64, error)
}

// space is one record space as a request names it, opened for the
// request's user.
type space struct {
	// scope names the kind of space to the push limits ("sync", "team").
	scope   string
	user    string
	records spaceRecords
	// counts reports whether a hosts answer to r counts each writer's
	// records and bytes.
	counts func(r *http.Request) bool
	// valid checks a batch to put beyond the common limits
	// (loom.SyncBatchOverLimit).
	valid func(recs []loom.SyncRecord) error
	// admit checks a batch against the space's rules once it is valid;
	// unlock is called once the batch is stored.
	admit func(ctx context.Context, recs []loom.SyncRecord) (unlock func(), err error)
	// describe completes a hosts answer, nil for none.
	describe func(ctx context.Context, out *Hosts) error
}

// opener opens the space a request names for its user, or refuses it.
type opener func(r *http.Request) (*space, error)

// serveHosts answers GET …/hosts: what the hub holds of each writer of
// the space.
func (h *Handler) serveHosts(open opener) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sp, err := open(r)
		if err != nil {
			h.edge.Error(w, r, err)
			return
		}
		hosts, err := sp.records.hosts(r.Context(), sp.counts(r))
		if err != nil {
			h.edge.Error(w, r, err)
			return
		}
		out := Hosts{Hosts: []Host{}}
		for _, x := range hosts {
			hx := Host{Host: x.Host, Last: x.Last, Records: x.Records, Bytes: x.Bytes}
			if !x.UpdatedAt.IsZero() {
				hx.UpdatedAt = loom.FormatTime(x.UpdatedAt)
			}
			out.Hosts = append(out.Hosts, hx)
		}
		if sp.describe != nil {
			if err := sp.describe(r.Context(), &out); err != nil {
				h.edge.Error(w, r, err)
				return
			}
		}
		h.writeJSON(w, r, out, false)
	}
}

// serveRecords answers GET …/records?host=H&after=N&limit=L: a page of
// host's records after index N, with more set when the hub holds
// records after the page.
func (h *Handler) serveRecords(open opener) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		host, after, limit, qerr := pageQuery(r)
		sp, err := open(r)
		if err == nil {
			err = qerr
		}
		if err != nil {
			h.edge.Error(w, r, err)
			return
		}
		recs, err := sp.records.page(r.Context(), host, after, limit)
		if err != nil {
			h.edge.Error(w, r, err)
			return
		}
		more := false
		if len(recs) > 0 {
			last, err := sp.records.lasts(r.Context(), []string{host})
			if err != nil {
				h.edge.Error(w, r, err)
				return
			}
			more = recs[len(recs)-1].Index < last[host]
		}
		out := Page{Records: make([]Record, len(recs)), More: more}
		for i, x := range recs {
			out.Records[i] = RecordOf(x)
		}
		h.writeJSON(w, r, out, true)
	}
}

// servePush answers POST …/records: it stores a batch of records,
// {"records": [...]}, and answers how many were new and the last index
// the hub now holds of each writer in the batch.
func (h *Handler) servePush(open opener) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The space is opened, and the push's place taken, before the
		// body is read: a refused push costs no read of its batch.
		ctx, cancel := h.edge.Bounded(r.Context())
		sp, err := open(r.WithContext(ctx))
		cancel()
		if err != nil {
			h.edge.Error(w, r, err)
			return
		}
		release, err := h.edge.Push(r.Context(), sp.scope, sp.user)
		if err != nil {
			h.edge.Error(w, r, err)
			return
		}
		defer release()
		// A push reads its body before the request timeout bounds its
		// store work: a large batch on a slow link takes the read
		// timeout's time.
		recs, err := h.readBatch(w, r)
		if err == nil {
			err = sp.valid(recs)
		}
		if err != nil {
			h.edge.Error(w, r, err)
			return
		}
		ctx, cancel = h.edge.Bounded(r.Context())
		defer cancel()
		r = r.WithContext(ctx)
		unlock, err := sp.admit(ctx, recs)
		if err != nil {
			h.edge.Error(w, r, err)
			return
		}
		defer unlock()
		stored, err := sp.records.put(ctx, recs)
		if err != nil {
			h.edge.Error(w, r, err)
			return
		}
		var hosts []string
		seen := map[string]bool{}
		for _, x := range recs {
			if !seen[x.Host] {
				seen[x.Host] = true
				hosts = append(hosts, x.Host)
			}
		}
		last, err := sp.records.lasts(ctx, hosts)
		if err != nil {
			h.edge.Error(w, r, err)
			return
		}
		out := Pushed{Stored: stored, Last: map[string]int64{}}
		for _, x := range hosts {
			out.Last[x] = last[x]
		}
		h.writeJSON(w, r, out, false)
	}
}

// ownRecords is a user's own space: their records of sync, in the
// store's loom.SyncStore.
type ownRecords struct {
	st   loom.SyncStore
	user string
}

func (o ownRecords) put(ctx context.Context, recs []loom.SyncRecord) (int, error) {
	return o.st.PutSyncRecords(ctx, o.user, recs)
}

func (o ownRecords) page(ctx context.Context, host string, after int64, limit int) ([]loom.SyncRecord, error) {
	return o.st.SyncRecords(ctx, o.user, host, after, limit)
}

// hosts counts always: the store keeps the counts beside each host.
func (o ownRecords) hosts(ctx context.Context, _ bool) ([]loom.SyncHost, error) {
	return o.st.SyncHosts(ctx, o.user)
}

func (o ownRecords) lasts(ctx context.Context, hosts []string) (map[string]int64, error) {
	all, err := o.st.SyncHosts(ctx, o.user)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(hosts))
	for _, x := range all {
		out[x.Host] = x.Last
	}
	return out, nil
}

// teamRecords is a team's space: the records its members publish, in
// the store's loom.TeamHub.
type teamRecords struct {
	st   loom.TeamHub
	team string
}

func (t teamRecords) put(ctx context.Context, recs []loom.SyncRecord) (int, error) {
	return t.st.PutTeamRecords(ctx, t.team, recs)
}

func (t teamRecords) page(ctx context.Context, host string, after int64, limit int) ([]loom.SyncRecord, error) {
	return t.st.TeamRecords(ctx, t.team, host, after, limit)
}

// hosts counts only when asked: a count scans the team's records, and a
// member's sync asks for the last indexes at every pull.
func (t teamRecords) hosts(ctx context.Context, counts bool) ([]loom.SyncHost, error) {
	if counts {
		return t.st.TeamHosts(ctx, t.team)
	}
	return t.st.TeamLasts(ctx, t.team)
}

func (t teamRecords) lasts(ctx context.Context, hosts []string) (map[string]int64, error) {
	out := make(map[string]int64, len(hosts))
	for _, x := range hosts {
		last, err := t.st.TeamLast(ctx, t.team, x)
		if err != nil {
			return nil, err
		}
		out[x] = last
	}
	return out, nil
}

var (
	_ spaceRecords = ownRecords{}
	_ spaceRecords = teamRecords{}
)

// validOwn checks a batch of a user's own records: as the store does
// (loom.ValidSyncBatch), and without a team's epoch.
func validOwn(recs []loom.SyncRecord) error {
	for _, r := range recs {
		if r.Epoch != 0 {
			return loom.Errorf(loom.EINVALID, "record %d of host %s names a team key's epoch: a record of sync has none", r.Index, r.Host)
		}
	}
	return loom.ValidSyncBatch(recs)
}

// validTeam checks a batch of a team's records: each names its writer,
// index, epoch, and has a header and a body.
func validTeam(recs []loom.SyncRecord) error {
	for i, x := range recs {
		if x.Host == "" || len(x.Host) > 64 || x.Index < 1 || x.Epoch < 1 || len(x.Header) == 0 || len(x.Body) == 0 {
			return loom.Errorf(loom.EINVALID, "record %d: a team record needs its host, index (1 or more), epoch, header and body", i+1)
		}
	}
	return nil
}

// own opens the request's user's own space.
func (h *Handler) own(r *http.Request) (*space, error) {
	if h.sync == nil {
		return nil, loom.Errorf(loom.ENOTFOUND, "this server's store keeps no sync records")
	}
	user := h.edge.User(r)
	return &space{
		scope:   "sync",
		user:    user,
		records: ownRecords{st: h.sync, user: user},
		counts:  func(*http.Request) bool { return true },
		valid:   validOwn,
		admit: func(ctx context.Context, recs []loom.SyncRecord) (func(), error) {
			return h.keys.check(ctx, h.sync, h.edge.Locks, user, recs)
		},
		describe: func(ctx context.Context, out *Hosts) error {
			key, err := h.keys.keyOf(ctx, h.sync, user)
			if err != nil {
				return err
			}
			out.KeyID, out.User = key, user
			return nil
		},
	}, nil
}
