// Package teamrun is what a member's machine does with a team (see
// docs/team.md): it keeps the member's key pair and each team's keys and
// state under loom's data directory, makes and verifies the changes of
// the membership chain on the hub (create, invite, join, remove, leave,
// share), publishes the sessions of the projects the member shares,
// through the secret gate, sealed and signed, and pulls the team's
// records into the team's own store on this machine, apart from the
// member's own sessions.
package teamrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/team"
)

// Local is where a machine keeps its teams: Dir (the data directory's
// teams/) holds the member's key pair (member.key, mode 0600) and a
// directory per team, named by its id, with the team's state
// (team.json, mode 0600: the team's keys are in it) and its store
// (sessions.db: the teammates' shared sessions, apart from one's own).
type Local struct {
	Dir string
}

// IdentityFile is the member's key pair.
func (l Local) IdentityFile() string { return filepath.Join(l.Dir, "member.key") }

// Identity returns the member's key pair, made on first use.
func (l Local) Identity() (*team.Identity, bool, error) {
	return team.LoadIdentity(l.IdentityFile())
}

// StoreFile is the path of team id's store.
func (l Local) StoreFile(id string) string { return filepath.Join(l.Dir, id, "sessions.db") }

func (l Local) stateFile(id string) string { return filepath.Join(l.Dir, id, "team.json") }

func (l Local) claimsFile(id string) string { return filepath.Join(l.Dir, id, "claims") }

func (l Local) deletedFile(id string) string { return filepath.Join(l.Dir, id, "deleted") }

// checkpointFile keeps the state of the team's chain this machine
// verified last (team.State.MarshalCheckpoint).
func (l Local) checkpointFile(id string) string { return filepath.Join(l.Dir, id, "chain.checkpoint") }

// headFile keeps the head of the checkpoint (Head): what loom team head
// prints, read without the checkpoint, whose size grows with the chain.
func (l Local) headFile(id string) string { return filepath.Join(l.Dir, id, "chain.head") }

// Head is the head of the chain this machine verified last, as its
// checkpoint holds it: kept beside the checkpoint (chain.head), written
// after it, and taken only while it names the checkpoint's size and the
// seq and head team.json holds.
type Head struct {
	Team  string `json:"team"`
	Admin string `json:"admin"`
	Name  string `json:"name"`
	Seq   int64  `json:"seq"`
	Head  string `json:"head"`
	Epoch int    `json:"epoch"`
	// Checkpoint is the size of the checkpoint file it heads.
	Checkpoint int64 `json:"checkpoint"`
}

// keepHead writes the head of the checkpoint st, of size n, beside it.
func (l Local) keepHead(st *team.State, n int64) error {
	b, err := json.Marshal(Head{Team: st.Team, Admin: st.Admin, Name: st.Name, Seq: st.Seq, Head: st.Head, Epoch: st.Epoch, Checkpoint: n})
	if err != nil {
		return err
	}
	return team.WriteSecret(l.headFile(st.Team), b)
}

// keptHead returns the head of the checkpoint kept for s, or nil when it
// is missing, unreadable, or not that of the checkpoint or of s.
func (l Local) keptHead(s *State) *Head {
	b, err := os.ReadFile(l.headFile(s.ID))
	if err != nil {
		return nil
	}
	var h Head
	if json.Unmarshal(b, &h) != nil || h.Team != s.ID || h.Admin != s.Admin || h.Seq != s.Seq || h.Head != s.Head || h.Seq == 0 {
		return nil
	}
	fi, err := os.Stat(l.checkpointFile(s.ID))
	if err != nil || fi.Size() != h.Checkpoint {
		return nil
	}
	return &h
}

// State is what a machine keeps of one team.
type State struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Hub  string `json:"hub"`
	// Token is this machine's token on the team's hub when one was
	// given for the team (create or join --token, set-hub --token): the
	// team's commands use it before [sync] token, which may be a
	// personal hub's.
	Token string `json:"token,omitempty"`
	// Admin is the admin's fingerprint, pinned at create or join: every
	// chain this machine reads must start with that admin's genesis.
	Admin string `json:"admin"`
	// Me is this member's name in the team; Machine this machine's name
	// when it joined as another machine of that member.
	Me      string `json:"me"`
	Machine string `json:"machine,omitempty"`
	// Seq and Head are the last entry this machine verified: a chain
	// that does not hold it at Seq is refused (a hub that rolled back or
	// rewrote the chain).
	Seq  int64  `json:"seq"`
	Head string `json:"head"`
	// Keys are the team's keys this member has held, by epoch: a
	// removed member keeps those of before the removal, and nothing
	// after it opens with them.
	Keys team.Keyring `json:"keys"`
	// Gone is set once this member left or was removed.
	Gone bool `json:"gone,omitempty"`
	// KeysMoved is set once the team's store holds no session applied
	// by a loom that packed its member into its key (MigrateKeys).
	KeysMoved bool `json:"keys_moved,omitempty"`
	// Host is this machine's writer id in the team, Next the index of
	// its next record.
	Host string `json:"host"`
	Next int64  `json:"next"`
	// Published is the last seq published of each session (as kept
	// before Sent; read into Sent once).
	Published map[string]int64 `json:"published,omitempty"`
	// Sent is what was published of each session, by id: what the next
	// sync compares the session with to send what changed since.
	Sent map[string]*Sent `json:"sent,omitempty"`
	// Applied is the last index applied of each writer.
	Applied map[string]int64 `json:"applied"`
	// Shares are the projects this member shares, by project id.
	Shares map[string]team.Project `json:"shares"`
	// SetAside are the teammates' records set aside, not applied (the
	// first maxSetAside of them), and SetAsideTotal how many there were.
	SetAside      []SetAside `json:"set_aside,omitempty"`
	SetAsideTotal int        `json:"set_aside_total,omitempty"`
	// Writers are the author each writer id's records were first applied
	// from (or, on the admin's machine, its first record's header
	// names), by writer id: what a removal or a rotation names of the
	// members who left (team.Entry.Writers).
	Writers map[string]string `json:"writers,omitempty"`
	// Newer is a teammate's record that names a newer chain than this
	// machine verified: until the chain shows it, nothing is published.
	Newer *Evidence `json:"newer,omitempty"`
	// Heads are the chain head the last record applied of each writer
	// named, by writer id: a writer's heads only move forward.
	Heads map[string]int64 `json:"heads,omitempty"`
	// Foreign are this member's sessions another member wrote first
	// (the hub refused them, 409), by id, with the hub's word: they are
	// not sent again.
	Foreign map[string]string `json:"foreign,omitempty"`
	// Gaps are the runs of each writer's records (first and last index)
	// the hub did not hold when a pull read past them, by writer id:
	// asked for again at every sync until the hub holds them or a later
	// record of the writer names them in its Restores.
	Gaps map[string][][2]int64 `json:"gaps,omitempty"`
}

// Sent is what a machine published of one of its sessions: the
// project it was shared in, the last message sent, a digest of the
// session's own fields and one of each block of BlockMessages messages
// as they were in the store when sent. A later sync sends again the
// blocks whose digest changed (a part or usage updated, a secret
// redacted), the session's fields when theirs did (a rename), and a
// deletion when the session left the project.
type Sent struct {
	Project string   `json:"project,omitempty"`
	Seq     int64    `json:"seq"`
	Meta    string   `json:"meta,omitempty"`
	Blocks  []string `json:"blocks,omitempty"`
	// Resend is set when the hub lost or altered a record of the
	// session (audit): the next publish sends it whole again, or its
	// deletion.
	Resend bool `json:"resend,omitempty"`
}

// BlockMessages is how many messages one digest of Sent covers.
const BlockMessages = 50

// Save writes s (mode 0600).
func (l Local) Save(s *State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return team.WriteSecret(l.stateFile(s.ID), b)
}

func (l Local) load(id string) (*State, error) {
	b, err := os.ReadFile(l.stateFile(id))
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", l.stateFile(id), err)
	}
	if s.Keys == nil {
		s.Keys = team.Keyring{}
	}
	for _, m := range []*map[string]int64{&s.Published, &s.Applied} {
		if *m == nil {
			*m = map[string]int64{}
		}
	}
	if s.Shares == nil {
		s.Shares = map[string]team.Project{}
	}
	if s.Sent == nil {
		s.Sent = map[string]*Sent{}
	}
	for id, n := range s.Published {
		if s.Sent[id] == nil {
			// What was sent of it is not known but its count: every
			// message is compared (and sent again) once.
			s.Sent[id] = &Sent{Seq: n}
		}
	}
	s.Published = nil
	return &s, nil
}

// Teams returns every team this machine is in or was, by name.
func (l Local) Teams() ([]*State, error) {
	ents, err := os.ReadDir(l.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*State
	for _, e := range ents {
		if !e.IsDir() || team.ValidTeamID(e.Name()) != nil {
			continue
		}
		s, err := l.load(e.Name())
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Name < out[j].Name || out[i].Name == out[j].Name && out[i].ID < out[j].ID
	})
	return out, nil
}

// Find returns the team ref names (its name or id, or a prefix of its
// id of 4 characters or more); "" names the only team.
func (l Local) Find(ref string) (*State, error) {
	all, err := l.Teams()
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, loom.Errorf(loom.ENOTFOUND, "this machine is in no team: loom team create NAME, or loom team join CODE")
	}
	if ref == "" {
		if len(all) == 1 {
			return all[0], nil
		}
		return nil, loom.Errorf(loom.EAMBIGUOUS, "this machine is in %d teams: name one with --team (%s)", len(all), names(all))
	}
	var found []*State
	for _, s := range all {
		if s.ID == ref || strings.EqualFold(s.Name, ref) || len(ref) >= 4 && strings.HasPrefix(s.ID, ref) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return nil, loom.Errorf(loom.ENOTFOUND, "no team %q on this machine (%s)", ref, names(all))
	case 1:
		return found[0], nil
	}
	return nil, loom.Errorf(loom.EAMBIGUOUS, "%q names %d teams: give the id (%s)", ref, len(found), names(found))
}

func names(all []*State) string {
	var ns []string
	for _, s := range all {
		ns = append(ns, s.Name+" "+s.ID[:8])
	}
	return strings.Join(ns, ", ")
}
