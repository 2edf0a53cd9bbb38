package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/team"
)

// hubShape is the load -hub runs: a team of Members members with
// Machines machines each, whose history of Records records is on the hub
// before the rounds; each round, Active of every hundred machines push
// PerPush new records and every machine pulls what is new.
type hubShape struct {
	Members, Machines int
	Records           int
	Rounds            int
	Active            int
	PerPush           int
	BodyBytes         int
}

// hubMachine is one simulated machine: its writer log on the team and
// what it has pulled of every other writer.
type hubMachine struct {
	host string
	// id and ring are the member's key pair and the team's keys: the
	// hub takes a record only under a writer id of the key that signs it.
	id     *team.Identity
	ring   team.Keyring
	c      *hub.Client
	pushed int64
	// pending is a push not answered yet: sent again, the same bytes,
	// until it is, as a member's client does.
	pending []loom.SyncRecord
	// applied is the last index applied of each writer; bad counts
	// records that came out of order (a gap or a second copy).
	applied map[string]int64
	bad     int
}

// hubFigures is what -hub measured.
type hubFigures struct {
	mu       sync.Mutex
	push     []time.Duration
	pull     []time.Duration
	syncs    int
	pulled   int64
	errs     int
	firstErr string
}

func (f *hubFigures) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs++
	if f.firstErr == "" {
		f.firstErr = err.Error()
	}
}

// record makes machine m's record index as a member's client does:
// random bytes about the size of a session record, sealed and signed
// (the hub checks the signature and reads nothing).
func (m *hubMachine) record(teamID string, index int64, size int) loom.SyncRecord {
	payload := make([]byte, size)
	rand.Read(payload)
	// A session of its own per record, tagged as a client tags it (the
	// hub files each tag's owner).
	tag, err := team.SessionTag(m.ring, teamID, fmt.Sprintf("%s-%d", m.host, index))
	if err != nil {
		panic(err) // epoch 1 is in the ring: SessionTag cannot fail
	}
	r, err := team.SealRecord(team.Header{Team: teamID, Host: m.host, Index: index, Epoch: 1, Author: m.id.Fingerprint(), Session: tag}, m.ring, m.id, payload)
	if err != nil {
		panic(err) // epoch 1 is in the ring: SealRecord cannot fail
	}
	return r.Sync()
}

// push puts n new records of m on the hub in one request; a push not
// answered before is sent again first, as it was.
func (m *hubMachine) push(ctx context.Context, teamID string, n, size int) error {
	if len(m.pending) == 0 {
		for i := range n {
			m.pending = append(m.pending, m.record(teamID, m.pushed+int64(i)+1, size))
		}
	}
	if _, err := m.c.Team(teamID).Put(ctx, m.pending); err != nil {
		return err
	}
	m.pushed += int64(len(m.pending))
	m.pending = nil
	return nil
}

// pull reads every writer's records after those applied, as loom team
// sync does, and returns how many it read.
func (m *hubMachine) pull(ctx context.Context, teamID string) (int64, error) {
	hosts, err := m.c.Team(teamID).Hosts(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, h := range hosts {
		if h.Host == m.host {
			continue
		}
		for m.applied[h.Host] < h.Last {
			recs, more, err := m.c.Team(teamID).Records(ctx, h.Host, m.applied[h.Host], 200)
			if err != nil {
				return n, err
			}
			for _, r := range recs {
				if r.Index != m.applied[h.Host]+1 {
					m.bad++
					continue
				}
				m.applied[h.Host] = r.Index
				n++
			}
			if !more || len(recs) == 0 {
				break
			}
		}
	}
	return n, nil
}

// hubLoadMain runs the load of a team on a hub of two loom serve
// processes on a fresh schema of the PostgreSQL server pg: the team's
// chain (a member joining at a time), its history (sh.Records records
// from every machine), then sh.Rounds rounds of sync by every machine at
// once, one of the processes killed (SIGKILL) in the middle of the
// second round and started again at the third. Then it counts what the
// hub holds and what every machine pulled.
func hubLoadMain(ctx context.Context, out io.Writer, dir, bin, pg string, sh hubShape) error {
	work, bin, err := workDir(ctx, dir, "hub-", bin)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	db, drop, err := postgresSchema(ctx, pg, "loombench_hub_")
	if err != nil {
		return err
	}
	defer drop()
	st, err := postgres.Open(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()

	procs := make([]*hubProc, 2)
	for i := range procs {
		if procs[i], err = startHubProc(ctx, bin, db, filepath.Join(work, "home"), filepath.Join(work, fmt.Sprintf("serve%d.log", i))); err != nil {
			return err
		}
	}
	defer func() {
		for _, p := range procs {
			p.cmd.Process.Signal(os.Interrupt)
			p.cmd.Wait()
		}
	}()
	rr := &roundRobin{next: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 512}}
	rr.set([]string{procs[0].base, procs[1].base})
	hc := &http.Client{Transport: rr}

	// Members, their tokens and the chain.
	fmt.Fprintf(os.Stderr, "hub: %d members join the team\n", sh.Members)
	teamID, err := team.NewTeamID()
	if err != nil {
		return err
	}
	clients := make([]*hub.Client, sh.Members)
	users := make([]string, sh.Members)
	for i := range clients {
		users[i] = fmt.Sprintf("m%03d", i)
		_, secret, err := st.CreateToken(ctx, users[i], "bench", 0)
		if err != nil {
			return err
		}
		clients[i] = &hub.Client{URL: "http://hub", Token: secret, HTTP: hc}
	}
	chainStart := time.Now()
	ids, ring, err := benchChain(ctx, teamID, users, clients)
	if err != nil {
		return fmt.Errorf("the team's chain: %w", err)
	}
	chainTime := time.Since(chainStart)

	var machines []*hubMachine
	for i := range sh.Members {
		for range sh.Machines {
			machines = append(machines, &hubMachine{host: team.NewWriter(ids[i].Fingerprint()), id: ids[i], ring: ring, c: clients[i], applied: map[string]int64{}})
		}
	}

	// The team's history, loaded by a few machines at a time in batches
	// of 500 records.
	fmt.Fprintf(os.Stderr, "hub: loading %d records\n", sh.Records)
	fillStart := time.Now()
	per := sh.Records / len(machines)
	work2 := make(chan *hubMachine)
	var fillErr atomic.Value
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for m := range work2 {
				for left := per; left > 0; left -= min(left, 500) {
					if err := m.push(ctx, teamID, min(left, 500), sh.BodyBytes); err != nil {
						fillErr.CompareAndSwap(nil, err)
						return
					}
				}
			}
		})
	}
	for i, m := range machines {
		work2 <- m
		if i%40 == 39 {
			fmt.Fprintf(os.Stderr, "hub: %d of %d machines loaded\n", i+1, len(machines))
		}
	}
	close(work2)
	wg.Wait()
	if err, _ := fillErr.Load().(error); err != nil {
		return fmt.Errorf("load the history: %w", err)
	}
	fillTime := time.Since(fillStart)
	total := int64(per * len(machines))

	// One new machine pulls the whole team.
	fmt.Fprintf(os.Stderr, "hub: one machine pulls the whole team\n")
	newcomer := &hubMachine{host: team.NewWriter(ids[0].Fingerprint()), id: ids[0], ring: ring, c: clients[0], applied: map[string]int64{}}
	fullStart := time.Now()
	fullN, err := newcomer.pull(ctx, teamID)
	if err != nil {
		return fmt.Errorf("the full pull: %w", err)
	}
	fullTime := time.Since(fullStart)
	if fullN != total || newcomer.bad > 0 {
		return fmt.Errorf("the full pull read %d records (%d out of order), want %d", fullN, newcomer.bad, total)
	}
	// The others have pulled it before the rounds.
	for _, m := range machines {
		for _, o := range machines {
			if o != m {
				m.applied[o.host] = o.pushed
			}
		}
	}

	// The rounds: every machine at once.
	f := &hubFigures{}
	var rss [2]int64
	sample := func() {
		for i, p := range procs {
			if kb, err := vmRSS(p.pid); err == nil && kb > rss[i] {
				rss[i] = kb
			}
		}
	}
	stopSampling := every(500*time.Millisecond, sample)
	cpu0 := cpuTicks(procs[0].pid) + cpuTicks(procs[1].pid)
	var deadTicks int64
	killed, restarted := false, false
	roundsStart := time.Now()
	for round := range sh.Rounds {
		fmt.Fprintf(os.Stderr, "hub: round %d of %d\n", round+1, sh.Rounds)
		if round == 2 && killed {
			p, err := startHubProc(ctx, bin, db, filepath.Join(work, "home"), filepath.Join(work, "serve0.log"))
			if err != nil {
				return err
			}
			procs[0] = p
			rr.set([]string{procs[0].base, procs[1].base})
			restarted = true
		}
		var done atomic.Int64
		var wg sync.WaitGroup
		for i, m := range machines {
			active := i%100 < sh.Active
			wg.Go(func() {
				t0 := time.Now()
				if active {
					err := m.push(ctx, teamID, sh.PerPush, sh.BodyBytes)
					if err != nil {
						f.fail(fmt.Errorf("push: %w", err))
						return
					}
					f.mu.Lock()
					f.push = append(f.push, time.Since(t0))
					f.mu.Unlock()
				}
				t1 := time.Now()
				n, err := m.pull(ctx, teamID)
				if err != nil {
					f.fail(fmt.Errorf("pull: %w", err))
					return
				}
				f.mu.Lock()
				f.pull = append(f.pull, time.Since(t1))
				f.syncs++
				f.pulled += n
				f.mu.Unlock()
				done.Add(1)
			})
		}
		if round == 1 {
			// Kill one process halfway through the round.
			for done.Load() < int64(len(machines)/2) {
				time.Sleep(10 * time.Millisecond)
			}
			deadTicks = cpuTicks(procs[0].pid)
			procs[0].cmd.Process.Kill()
			procs[0].cmd.Wait()
			rr.set([]string{procs[1].base})
			killed = true
			fmt.Fprintf(os.Stderr, "hub: killed process %d (SIGKILL) with %d of %d machines synced\n", procs[0].pid, done.Load(), len(machines))
		}
		wg.Wait()
	}
	roundsTime := time.Since(roundsStart)
	sample()
	stopSampling()
	cpu1 := cpuTicks(procs[0].pid) + cpuTicks(procs[1].pid) + deadTicks

	// A last pull by every machine, then the counts.
	fmt.Fprintf(os.Stderr, "hub: counting\n")
	var wg2 sync.WaitGroup
	for _, m := range machines {
		wg2.Go(func() {
			for try := 0; len(m.pending) > 0 && try < 5; try++ {
				if err := m.push(ctx, teamID, 0, sh.BodyBytes); err != nil {
					f.fail(fmt.Errorf("the last push: %w", err))
				}
			}
			if _, err := m.pull(ctx, teamID); err != nil {
				f.fail(fmt.Errorf("the last pull: %w", err))
			}
		})
	}
	wg2.Wait()
	check := checkHub(ctx, st, teamID, machines)

	slices.Sort(f.push)
	slices.Sort(f.pull)
	fmt.Fprintf(out, "A team of %d members × %d machines (%d writers) on a hub of two loom serve processes on one PostgreSQL database, each request to the other process (no sticky sessions); the clients, in one process, speak the hub's HTTP protocol.\n\n",
		sh.Members, sh.Machines, len(machines))
	fmt.Fprintf(out, "- chain: %d entries (an invite and a join a member), each verified by the hub against the whole chain: %.1f s\n", 2*sh.Members-1, chainTime.Seconds())
	fmt.Fprintf(out, "- history: %d records of %d bytes loaded in batches of 500, 16 machines at a time: %.1f s (%.0f records/s)\n", total, sh.BodyBytes, fillTime.Seconds(), float64(total)/fillTime.Seconds())
	fmt.Fprintf(out, "- a new machine pulls the whole team (%d records, pages of 200): %.1f s (%.0f records/s)\n", fullN, fullTime.Seconds(), float64(fullN)/fullTime.Seconds())
	fmt.Fprintf(out, "- %d rounds, all %d machines at once; each round %d in every 100 push %d records and every machine pulls what is new: %.1f s, %d syncs, %d records pulled\n",
		sh.Rounds, len(machines), sh.Active, sh.PerPush, roundsTime.Seconds(), f.syncs, f.pulled)
	fmt.Fprintf(out, "- hub process 1 killed (SIGKILL) halfway through round 2, started again for round 3; requests sent again to the other process: %d\n\n", rr.retried.Load())
	fmt.Fprintln(out, "| push p50 | push p99 | pull p50 | pull p99 | hub CPU per sync | hub RSS max (each process) | errors | check |")
	fmt.Fprintln(out, "|---:|---:|---:|---:|---:|---:|---:|---|")
	perSync := 0.0
	if f.syncs > 0 {
		perSync = float64(cpu1-cpu0) * 10 / float64(f.syncs)
	}
	checkText := "nothing lost or duplicated"
	if check != nil {
		checkText = "FAILED: " + check.Error()
	}
	if f.errs > 0 {
		checkText += fmt.Sprintf("; %d syncs failed and were sent again at the next, the first: %s", f.errs, f.firstErr)
	}
	fmt.Fprintf(out, "| %s | %s | %s | %s | %.1f ms | %d MB, %d MB | %d | %s |\n", fmtDur(pct(f.push, 0.5)), fmtDur(pct(f.push, 0.99)), fmtDur(pct(f.pull, 0.5)), fmtDur(pct(f.pull, 0.99)),
		perSync, rss[0]>>10, rss[1]>>10, f.errs, checkText)
	if !killed || !restarted {
		return errors.New("the run ended before a hub process was killed and started again: run at least 3 rounds")
	}
	if check != nil {
		return errors.New("the hub lost or duplicated records")
	}
	return nil
}

// benchChain makes the team's chain on the hub: member 0 creates it,
// then invites each other member, who joins with their own token.
func benchChain(ctx context.Context, teamID string, users []string, clients []*hub.Client) ([]*team.Identity, team.Keyring, error) {
	now := time.Now()
	admin, err := team.NewIdentity()
	if err != nil {
		return nil, nil, err
	}
	entry, ring, err := team.Create(teamID, "bench", users[0], users[0], admin, now)
	if err != nil {
		return nil, nil, err
	}
	st := &team.State{Team: teamID}
	add := func(c *hub.Client, entry []byte) error {
		if err := c.AppendTeamEntry(ctx, teamID, st.Seq+1, entry); err != nil {
			return err
		}
		return st.Apply("", entry)
	}
	if err := add(clients[0], entry); err != nil {
		return nil, nil, err
	}
	ids := []*team.Identity{admin}
	for i := 1; i < len(users); i++ {
		inv, invID, err := team.Invite(st, admin, ring, "invite"+users[i], nil, false, now)
		if err != nil {
			return nil, nil, err
		}
		if err := add(clients[0], inv); err != nil {
			return nil, nil, err
		}
		me, err := team.NewIdentity()
		if err != nil {
			return nil, nil, err
		}
		join, _, err := team.Join(st, invID, me, users[i], users[i], now)
		if err != nil {
			return nil, nil, err
		}
		if err := add(clients[i], join); err != nil {
			return nil, nil, err
		}
		ids = append(ids, me)
	}
	return ids, ring, nil
}

// checkHub counts what the hub holds of each machine's log (all its
// records, once each, from 1 to the last it pushed) and what each
// machine pulled of every other's (the same, in order).
func checkHub(ctx context.Context, st *postgres.Store, teamID string, machines []*hubMachine) error {
	rows, err := st.Pool().Query(ctx, `SELECT host_id, count(*), count(DISTINCT idx), min(idx), max(idx) FROM team_records WHERE team_id = $1 GROUP BY host_id`, teamID)
	if err != nil {
		return err
	}
	type held struct{ n, distinct, lo, hi int64 }
	onHub := map[string]held{}
	for rows.Next() {
		var h string
		var x held
		if err := rows.Scan(&h, &x.n, &x.distinct, &x.lo, &x.hi); err != nil {
			return err
		}
		onHub[h] = x
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range machines {
		x := onHub[m.host]
		if x.n != m.pushed || x.distinct != m.pushed || x.lo != 1 || x.hi != m.pushed {
			return fmt.Errorf("writer %s pushed %d records; the hub holds %d (%d distinct, %d to %d)", m.host, m.pushed, x.n, x.distinct, x.lo, x.hi)
		}
		if m.bad > 0 {
			return fmt.Errorf("writer %s pulled %d records out of order", m.host, m.bad)
		}
		for _, o := range machines {
			if o != m && m.applied[o.host] != o.pushed {
				return fmt.Errorf("writer %s pulled %d of writer %s's %d records", m.host, m.applied[o.host], o.host, o.pushed)
			}
		}
	}
	return nil
}
