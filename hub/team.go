package hub

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/team"
)

// Teams on the hub (docs/team.md): each team's signed membership chain,
// and the team's part of its record space. The hub verifies an entry
// against the chain before it appends it (so that junk cannot stop a
// team), and lets only the hub users the chain names read and write the
// team's records; clients verify the chain again themselves and never
// take the hub's word for who is a member. The hub checks each new entry
// against its checkpoint of the chain (verifiedChain), and each member's
// entries and records against the team's budget (team.Budget). The records themselves
// travel as a user's own do, through the same handlers (space.go): what
// is the team's here is who may open its space (open) and what a push
// to it must satisfy (checkPut).

// TeamPath is the root of a team's endpoints: TeamPath(id)+"/chain",
// and the team's space's "/hosts" and "/records".
func TeamPath(id string) string { return "/api/v1/teams/" + url.PathEscape(id) }

// teamRoot is TeamPath as a pattern of the mux.
const teamRoot = "/api/v1/teams/{team}"

// Entry is one entry of a team's chain on the wire.
type Entry struct {
	Seq   int64  `json:"seq"`
	Entry []byte `json:"entry"`
}

// Chain answers GET TeamPath/chain?after=N.
type Chain struct {
	Entries []Entry `json:"entries"`
}

// Limits of the team endpoints.
const (
	// MaxTeamEntry bounds one chain entry: a rotation wraps the keyring
	// for every member.
	MaxTeamEntry = 4 << 20
	// maxTeamChain bounds the entries one page of the chain answers.
	maxTeamChain = 10000
	// MaxTeamSmallEntry bounds an entry that wraps no key for the team
	// (share, unshare, leave, revoke, budget) or for one key pair
	// (invite, join).
	MaxTeamSmallEntry = 64 << 10
)

// RaiseBudget is in every refusal for a budget: who may raise it, how.
const RaiseBudget = "the team's admin raises it with loom team budget"

// boundEntry refuses an entry e of size bytes that is larger than its
// kind needs (413), or that takes its signer's member past the team's
// budget of entries (st.Budgets(): by bytes 413, by count 429). st is
// the chain with e taken in; every client reads the whole chain at
// every command.
func (h *teamHandler) boundEntry(st *team.State, e *team.Entry, size int) error {
	switch e.Kind {
	case team.KindCreate, team.KindRemove, team.KindRotate:
	default:
		if size > MaxTeamSmallEntry {
			return h.edge.TooLarge(fmt.Sprintf("a %s entry is at most %d bytes, and this one is %d", e.Kind, MaxTeamSmallEntry, size))
		}
	}
	m := st.MemberOf(e.By)
	if m == nil || e.By == st.Admin || e.Kind == team.KindJoin {
		return nil
	}
	u, ok := st.Signed[m.Fingerprint()]
	if !ok {
		return nil
	}
	b := st.Budgets()
	if u.Entries > b.Entries {
		return h.edge.TooMany(fmt.Sprintf("over the team's budget of entries: %s has signed %d of its chain's entries, and a member signs at most %d (%s --entries N)", m.Name, u.Entries-1, b.Entries, RaiseBudget))
	}
	if u.Bytes > b.EntryBytes {
		return h.edge.TooLarge(fmt.Sprintf("over the team's budget of entry bytes: %s's entries of its chain would take %d bytes, and a member's take at most %d (%s --entry-bytes N)", m.Name, u.Bytes, b.EntryBytes, RaiseBudget))
	}
	return nil
}

// teamHandler serves the teams' chains, and opens a team's record
// space, over a store of teams.
type teamHandler struct {
	st   loom.TeamHub
	edge Edge

	mu     sync.Mutex
	chains map[string]*verifiedChain
}

// verifiedChain is a team's chain as this hub process verified it last,
// its checkpoint: a push checks its records against it, and an append
// its entry, after taking in the entries appended since (through any
// process). With a checkpoint key, the process's first use of the team
// takes in the checkpoint kept in the store (checkpoint.go), and keeps
// it there again every CheckpointEvery entries.
type verifiedChain struct {
	mu      sync.Mutex
	st      *team.State
	writers map[string]bool
	// loaded is set once the kept checkpoint was looked for; saved is
	// the entry of the one this process kept or took, saving set while
	// it keeps one.
	loaded bool
	saved  int64
	saving bool
}

// newTeamHandler returns the team endpoints over st; with st nil, every
// endpoint answers that teams need a hub on PostgreSQL.
func newTeamHandler(st loom.TeamHub, edge Edge) *teamHandler {
	return &teamHandler{st: st, edge: edge, chains: map[string]*verifiedChain{}}
}

// withChain runs fn with team id's chain as it is now, verified (the
// entries appended since this process verified it last, through any
// process, taken in first), and the writer ids the hub holds records of.
func (h *teamHandler) withChain(ctx context.Context, id string, fn func(st *team.State, writers map[string]bool) error) error {
	return h.withCheckpoint(ctx, id, func(c *verifiedChain) error {
		if c.st == nil {
			return loom.Errorf(loom.ENOTFOUND, "team %s: no such team of yours on this hub", id)
		}
		return fn(c.st, c.writers)
	})
}

// withCheckpoint runs fn with team id's checkpoint brought up to the
// chain as it is now: the entries appended since this process verified
// it last (through any process) taken in, each against the state after
// the one before; c.st is nil for a team with no chain. Only the first
// use in a process verifies the chain from its genesis, or from the
// checkpoint kept in the store (loadCheckpoint). A state c.st was once
// is never changed after: entries are taken into a copy.
func (h *teamHandler) withCheckpoint(ctx context.Context, id string, fn func(c *verifiedChain) error) error {
	h.mu.Lock()
	c := h.chains[id]
	if c == nil {
		c = &verifiedChain{}
		h.chains[id] = c
	}
	h.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	var es []loom.TeamEntry
	if !c.loaded {
		st, rest, err := h.loadCheckpoint(ctx, id)
		if err != nil {
			return err
		}
		c.loaded = true
		if st != nil {
			c.st, c.saved, es = st, st.Seq, rest
		}
	}
	if es == nil {
		after := int64(0)
		if c.st != nil {
			after = c.st.Seq
		}
		var err error
		if es, err = h.st.TeamChain(ctx, id, after); err != nil {
			return err
		}
	}
	if len(es) > 0 {
		var st *team.State
		if c.st == nil {
			st = &team.State{Team: id}
		} else {
			n, err := c.st.Next("", es[0].Entry)
			if err != nil {
				c.st = nil
				return fmt.Errorf("team %s: the hub's own chain does not verify: %w", id, err)
			}
			st, es = n, es[1:]
		}
		for _, e := range es {
			if err := st.Apply("", e.Entry); err != nil {
				c.st = nil
				return fmt.Errorf("team %s: the hub's own chain does not verify: %w", id, err)
			}
		}
		c.st = st
	}
	if c.writers == nil {
		c.writers = map[string]bool{}
	}
	err := fn(c)
	h.saveCheckpoint(id, c)
	return err
}

// MaxTeamWriters bounds the writer ids of one member's key: a machine
// starts a new one only when it lost its state.
const MaxTeamWriters = 64

// checkPut checks recs against team id's chain as it is now (see
// team.CheckPut), beyond the checks every push passes (sizes, counts):
// every record must be user's own, under a writer id of its author's,
// and a member's key writes under MaxTeamWriters writer ids at most.
func (h *teamHandler) checkPut(ctx context.Context, id, user string, recs []loom.SyncRecord) error {
	return h.withChain(ctx, id, func(st *team.State, writers map[string]bool) error {
		claims := make([]loom.TeamClaim, 0, len(recs))
		own := make([]loom.SyncRecord, 0, len(recs))
		for _, x := range recs {
			r := team.RecordOf(x)
			if err := team.CheckPut(st, user, r); err != nil {
				if team.CheckRelay(st, r) == nil {
					// A record of a writer who left, sent on by a
					// teammate who kept it: it restores what the hub lost
					// or holds altered, and claims nothing new.
					if err := h.restore(ctx, st, id, x); err != nil {
						return err
					}
					continue
				}
				return h.edge.Forbidden(err.Error())
			}
			own = append(own, x)
			var hd team.Header
			json.Unmarshal(r.Header, &hd) // CheckPut read it
			claims = append(claims, loom.TeamClaim{Index: r.Index, Session: hd.Session, Owner: st.MemberOf(hd.Author).Fingerprint(), Author: hd.Author, Seq: hd.ChainSeq})
			if writers[r.Host] {
				continue
			}
			hs, err := h.st.TeamLasts(ctx, id)
			if err != nil {
				return err
			}
			clear(writers)
			for _, x := range hs {
				writers[x.Host] = true
			}
			if writers[r.Host] {
				continue
			}
			prefix, _, _ := strings.Cut(r.Host, "-")
			n := 0
			for w := range writers {
				if strings.HasPrefix(w, prefix+"-") {
					n++
				}
			}
			if n >= MaxTeamWriters {
				return h.edge.TooMany(fmt.Sprintf("this key writes under %d writer ids already, and a member's machine writes under at most %d: a new writer id is made only when a machine loses its state", n, MaxTeamWriters))
			}
			writers[r.Host] = true
		}
		if err := h.budget(ctx, st, id, own, claims); err != nil {
			return err
		}
		return h.claim(ctx, st, id, claims)
	})
}

// restore files x, a record of a writer who left (team.CheckRelay), over
// the row the hub holds at its index when that row is not the record
// its author signed there (the operator altered it); a row the hub no
// longer holds is filed by the push as any record is.
func (h *teamHandler) restore(ctx context.Context, st *team.State, id string, x loom.SyncRecord) error {
	held, err := h.st.TeamRecords(ctx, id, x.Host, x.Index-1, 1)
	if err != nil {
		return err
	}
	if len(held) == 0 || held[0].Index != x.Index {
		return nil
	}
	if team.CheckRelay(st, team.RecordOf(held[0])) == nil {
		// Its author signed the row the hub holds: it is the record.
		return nil
	}
	return h.st.RestoreTeamRecord(ctx, id, x)
}

// budget refuses recs (their claims in claims) when they take a member
// past the team's budget of records (st.Budgets()): by count 429, by
// bytes 413. A record the hub holds already (its index no later than
// its writer's last) is not counted again. Two pushes of one member at
// once may each pass: a member goes past the budget by one batch at
// most.
func (h *teamHandler) budget(ctx context.Context, st *team.State, id string, recs []loom.SyncRecord, claims []loom.TeamClaim) error {
	type more struct{ records, bytes int64 }
	add := map[string]*more{}
	last := map[string]int64{}
	for i, r := range recs {
		l, ok := last[r.Host]
		if !ok {
			var err error
			if l, err = h.st.TeamLast(ctx, id, r.Host); err != nil {
				return err
			}
			last[r.Host] = l
		}
		if r.Index <= l {
			continue
		}
		m := add[claims[i].Owner]
		if m == nil {
			m = &more{}
			add[claims[i].Owner] = m
		}
		m.records++
		m.bytes += int64(len(r.Header) + len(r.Body))
	}
	b := st.Budgets()
	for owner, m := range add {
		n, size, err := h.st.TeamUsage(ctx, id, st.WriterKeys(owner))
		if err != nil {
			return err
		}
		name := st.Past[owner].Name
		if n+m.records > b.Records {
			return h.edge.TooMany(fmt.Sprintf("over the team's budget of records: %s has %d records on the hub, and a member has at most %d (%s --records N)", name, n+m.records, b.Records, RaiseBudget))
		}
		if size+m.bytes > b.RecordBytes {
			return h.edge.TooLarge(fmt.Sprintf("over the team's budget of record bytes: %s's records on the hub would take %d bytes, and a member's take at most %d (%s --record-bytes N)", name, size+m.bytes, b.RecordBytes, RaiseBudget))
		}
	}
	return nil
}

// ForeignSession is in the refusal of a record of a session another
// member wrote first.
const ForeignSession = "who wrote it first"

// claim files what recs claim (loom.TeamHub.ClaimTeamRecords): a session
// another member first wrote is refused with 409, naming its owner, and
// so is a head older than one the record's key named before.
func (h *teamHandler) claim(ctx context.Context, st *team.State, id string, claims []loom.TeamClaim) error {
	err := h.prove(ctx, st, id, claims)
	if err == nil {
		err = h.st.ClaimTeamRecords(ctx, id, claims)
	}
	var ce *loom.TeamClaimError
	if !errors.As(err, &ce) {
		return err
	}
	who := st.MemberOf(ce.Claim.Author)
	if ce.Owner != "" {
		owner := "another member"
		if m := st.Past[ce.Owner]; m != nil {
			owner = m.Name
		}
		return loom.Errorf(loom.ECONFLICT, "record %d: session %s is %s's, %s: a record of %s's cannot change it", ce.Claim.Index, ce.Claim.Session, owner, ForeignSession, who.Name)
	}
	return loom.Errorf(loom.ECONFLICT, "record %d: it names entry %d of the chain, and a record of this key (%s's) named entry %d before: heads only move forward", ce.Claim.Index, ce.Claim.Seq, who.Name, ce.Prior)
}

// firstRecords bounds the records of a session the hub reads to find
// its first one its author signed: those before it are the operator's
// edits (a byte altered), a few at most.
const firstRecords = 8

// prove checks each claim against its session's first record the hub
// holds, signed by its author (team.SignedRecord), rather than trusting the
// hub's table of claims alone, whose rows its operator can give to
// another member or delete: a claim of another member's than that
// record's is refused (a *loom.TeamClaimError naming the record's
// member), and one of the same member's is marked Proven, filed over
// the row whatever it says. A session of which the hub holds no record
// (a new one, or one whose records the operator dropped) is filed by
// the table as before; one whose records the hub holds, none signed by
// its author, is the member's whose key the first one's writer id is
// bound to, else this claim's. One read of an index per session a push
// writes.
func (h *teamHandler) prove(ctx context.Context, st *team.State, id string, claims []loom.TeamClaim) error {
	owners := map[string]string{}
	for i := range claims {
		c := &claims[i]
		o, ok := owners[c.Session]
		if !ok {
			// The first record alone (a record's body is up to 4 MiB),
			// then the few after it when the operator altered it.
			held, altered := false, ""
			for _, n := range []int{1, firstRecords} {
				recs, err := h.st.TeamSessionRecords(ctx, id, c.Session, n)
				if err != nil {
					return err
				}
				held = held || len(recs) > 0
				for _, r := range recs {
					if hd, err := team.SignedRecord(st, team.RecordOf(r)); err == nil && hd.Session == c.Session {
						o = st.MemberOf(hd.Author).Fingerprint()
						break
					}
					if altered == "" {
						altered = writerMember(st, r.Host)
					}
				}
				if o != "" || len(recs) < n {
					break
				}
			}
			if o == "" && held {
				// The hub holds records of the session, none of them
				// signed by its author (the operator altered them): the
				// first one's writer id, bound to its key, says whose
				// it was (its author's audit sends it again); else no
				// row says more than they do, and this record is the
				// first signed one.
				o = cmp.Or(altered, c.Owner)
			}
			owners[c.Session] = o
		}
		switch o {
		case "":
		case c.Owner:
			c.Proven = true
		default:
			return &loom.TeamClaimError{Claim: *c, Owner: o}
		}
	}
	return nil
}

// writerMember is the fingerprint of the member whose key the writer id
// host is bound to (team.OwnsWriter), "" for none of the chain's: what
// a record the hub holds says of its author when its signature does not
// verify (the operator altered its bytes, not the row's writer id).
func writerMember(st *team.State, host string) string {
	for fp := range st.Past {
		if team.OwnsWriter(fp, host) && !st.IsInvite(fp) {
			if m := st.MemberOf(fp); m != nil {
				return m.Fingerprint()
			}
		}
	}
	return ""
}

// mount adds the chain's endpoints to mux, each through api (the
// handler's authorization and request timeout).
func (h *teamHandler) mount(mux Mux, api func(http.HandlerFunc) http.HandlerFunc) {
	mux.HandleFunc("GET "+teamRoot+"/chain", api(h.teamAPI(h.chain)))
	mux.HandleFunc("POST "+teamRoot+"/chain", api(h.teamAPI(h.appendEntry)))
}

// teamAPI answers a request of a hub without teams, or naming no valid
// team id, with its error.
func (h *teamHandler) teamAPI(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h.valid(r); err != nil {
			h.edge.Error(w, r, err)
			return
		}
		next(w, r)
	}
}

// valid is the error of a request to a hub without teams, or of one
// naming no valid team id.
func (h *teamHandler) valid(r *http.Request) error {
	if h.st == nil {
		return loom.Errorf(loom.ENOTFOUND, "this hub keeps no teams: teams need a hub whose store is PostgreSQL (loom serve --db postgres://…)")
	}
	return team.ValidTeamID(r.PathValue("team"))
}

// open opens the record space of the team the request names, to the hub
// users its chain names; any other gets 404, as for a team the hub does
// not hold. A push to it must pass checkPut.
func (h *teamHandler) open(r *http.Request) (*space, error) {
	if err := h.valid(r); err != nil {
		return nil, err
	}
	id, user := r.PathValue("team"), h.edge.User(r)
	ok, err := h.st.TeamAccess(r.Context(), id, user)
	if err == nil && !ok {
		err = loom.Errorf(loom.ENOTFOUND, "team %s: no such team of yours on this hub", id)
	}
	if err != nil {
		return nil, err
	}
	return &space{
		scope:   "team",
		user:    user,
		records: teamRecords{st: h.st, team: id},
		counts:  func(r *http.Request) bool { return r.URL.Query().Get("counts") == "1" },
		valid:   validTeam,
		admit: func(ctx context.Context, recs []loom.SyncRecord) (func(), error) {
			return func() {}, h.checkPut(ctx, id, user, recs)
		},
	}, nil
}

// chain answers the team's entries after ?after=N to the hub users of
// its members, and to a user who shows an open invite's proof
// (?invite=FINGERPRINT&proof=BASE64, team.ReadProof: an invitee reads
// the chain before joining); anyone else gets 404, as for a team the hub
// does not hold.
func (h *teamHandler) chain(w http.ResponseWriter, r *http.Request) {
	after, err := intParam(r, "after")
	if err != nil {
		h.edge.Error(w, r, err)
		return
	}
	id, user := r.PathValue("team"), h.edge.User(r)
	ok, err := h.st.TeamAccess(r.Context(), id, user)
	if err == nil && !ok {
		err = loom.Errorf(loom.ENOTFOUND, "team %s: no such team of yours on this hub", id)
		if fp, proof := r.URL.Query().Get("invite"), r.URL.Query().Get("proof"); fp != "" {
			sig, _ := base64.RawURLEncoding.DecodeString(proof)
			if cerr := h.withChain(r.Context(), id, func(st *team.State, _ map[string]bool) error {
				if ok, ierr := st.CheckReadProof(user, fp, sig, time.Now()); ok {
					err = ierr
				}
				return nil
			}); cerr != nil && loom.ErrorCode(cerr) != loom.ENOTFOUND {
				err = cerr
			}
		}
	}
	if err != nil {
		h.edge.Error(w, r, err)
		return
	}
	es, err := h.st.TeamChain(r.Context(), r.PathValue("team"), after)
	if err != nil {
		h.edge.Error(w, r, err)
		return
	}
	if len(es) > maxTeamChain {
		es = es[:maxTeamChain]
	}
	out := Chain{Entries: make([]Entry, len(es))}
	for i, e := range es {
		out.Entries[i] = Entry{Seq: e.Seq, Entry: e.Entry}
	}
	writeJSON(h.edge, w, r, out, true)
}

// appendEntry takes the chain's next entry, {"seq": N, "entry": …}: the
// hub verifies it against its checkpoint of the chain (the state after
// the last entry it verified, withChain: members, keys, epoch, head),
// not the whole chain again, and refuses it unless it is valid, names
// the token's user when it makes a member (create, join), is signed by
// a member whose hub user the token is of otherwise, and keeps its
// signer within the team's budget of entries.
func (h *teamHandler) appendEntry(w http.ResponseWriter, r *http.Request) {
	var in Entry
	body, err := readBody(w, r)
	if err != nil {
		h.edge.Error(w, r, err)
		return
	}
	defer body.Close()
	// The client compresses a large entry (zstd) as it does a push.
	if err := json.NewDecoder(http.MaxBytesReader(w, body, MaxTeamEntry*2)).Decode(&in); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.edge.Error(w, r, h.edge.TooLarge(fmt.Sprintf("a chain entry is at most %d bytes", MaxTeamEntry)))
			return
		}
		h.edge.Error(w, r, loom.Errorf(loom.EINVALID, "a chain entry is {\"seq\": N, \"entry\": base64}: %v", err))
		return
	}
	id, user := r.PathValue("team"), h.edge.User(r)
	err = h.withCheckpoint(r.Context(), id, func(c *verifiedChain) error {
		seq := int64(0)
		if c.st != nil {
			seq = c.st.Seq
		}
		if in.Seq != seq+1 {
			return loom.Errorf(loom.ECONFLICT, "team %s's chain has %d entries: entry %d does not come next", id, seq, in.Seq)
		}
		from := c.st
		if from == nil {
			from = &team.State{Team: id}
		}
		st, err := from.Next("", in.Entry)
		if err != nil {
			return loom.Errorf(loom.EINVALID, "%s", err.Error())
		}
		e := st.Entries[len(st.Entries)-1]
		if err := h.boundEntry(st, e, len(in.Entry)); err != nil {
			return err
		}
		switch e.Kind {
		case team.KindCreate, team.KindJoin:
			if e.Member.User != user {
				return loom.Errorf(loom.EINVALID, "the entry names hub user %s, and this token is %s's", e.Member.User, user)
			}
		default:
			if m := st.Past[e.By]; m == nil || m.User != user {
				return loom.Errorf(loom.EINVALID, "the entry's signer is not this token's user %s", user)
			}
		}
		members := make([]loom.TeamMember, 0, len(st.Members)+len(st.Machines))
		for fp, m := range st.Members {
			members = append(members, loom.TeamMember{Member: fp, User: m.User})
		}
		for fp := range st.Machines {
			members = append(members, loom.TeamMember{Member: fp, User: st.Past[fp].User})
		}
		if err := h.st.AppendTeamEntry(r.Context(), id, in.Seq, in.Entry, members); err != nil {
			return err
		}
		c.st = st
		return nil
	})
	if err != nil {
		h.edge.Error(w, r, err)
		return
	}
	writeJSON(h.edge, w, r, Entry{Seq: in.Seq}, false)
}

func intParam(r *http.Request, name string) (int64, error) {
	s := strings.TrimSpace(r.URL.Query().Get(name))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, loom.Errorf(loom.EINVALID, "%s must be a whole number, 0 or more", name)
	}
	return n, nil
}

// writeJSON answers v as the sync handler does.
func writeJSON(edge Edge, w http.ResponseWriter, r *http.Request, v any, compress bool) {
	(&Handler{edge: edge}).writeJSON(w, r, v, compress)
}

// The client's side.

// TeamChain returns the team's entries after seq after (the hub serves
// them to its members' hub users).
func (c *Client) TeamChain(ctx context.Context, id string, after int64) ([][]byte, error) {
	return c.teamChain(ctx, id, after, "")
}

// TeamChainInvite returns the team's whole chain to the holder of an
// open invite inv, who is no member yet.
func (c *Client) TeamChainInvite(ctx context.Context, id, user string, inv *team.Identity) ([][]byte, error) {
	q := url.Values{"invite": {inv.Fingerprint()}, "proof": {base64.RawURLEncoding.EncodeToString(team.ReadProof(id, user, inv))}}
	return c.teamChain(ctx, id, 0, "&"+q.Encode())
}

func (c *Client) teamChain(ctx context.Context, id string, after int64, query string) ([][]byte, error) {
	var out [][]byte
	for {
		var page Chain
		if err := c.call(ctx, http.MethodGet, TeamPath(id)+"/chain?after="+strconv.FormatInt(after, 10)+query, nil, &page); err != nil {
			return nil, err
		}
		for _, e := range page.Entries {
			if e.Seq != after+1 {
				return nil, fmt.Errorf("hub %s: team %s: entry %d came after %d", c.URL, id, e.Seq, after)
			}
			out = append(out, e.Entry)
			after = e.Seq
		}
		if len(page.Entries) < maxTeamChain {
			return out, nil
		}
	}
}

// AppendTeamEntry puts the team's entry seq on the hub.
func (c *Client) AppendTeamEntry(ctx context.Context, id string, seq int64, entry []byte) error {
	b, err := json.Marshal(Entry{Seq: seq, Entry: entry})
	if err != nil {
		return err
	}
	var out Entry
	return c.call(ctx, http.MethodPost, TeamPath(id)+"/chain", b, &out)
}
