package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/loomhq/loom"
	sec "github.com/loomhq/loom/secrets"
)

// memo is what scans remember of one store, so that the next scan reads
// only what was written since: for each session, the last message read
// (its seq and id) and the places found up to it. It lives in loom's
// state directory, one file for all stores, keyed by store and user;
// rules that changed (another fingerprint) make it start over.
type memo struct {
	mu    sync.Mutex // guards store.Sessions while workers scan
	path  string
	all   map[string]*storeMemo
	key   string
	store *storeMemo
}

type storeMemo struct {
	Rules    string                  `json:"rules"`
	Sessions map[string]*sessionMemo `json:"sessions"`
}

type sessionMemo struct {
	Seq       int64       `json:"seq"`
	MessageID string      `json:"message_id"`
	Places    []sec.Place `json:"places"`
}

// memoFile is the name of the memo in the state directory.
const memoFile = "secrets-scan.json"

func openMemo(c *Common, d *sec.Detector) (*memo, error) {
	dirs, err := c.Dirs()
	if err != nil {
		return nil, err
	}
	url, err := c.DBURL()
	if err != nil {
		return nil, err
	}
	m := &memo{path: filepath.Join(dirs.State, memoFile), all: map[string]*storeMemo{}, key: url + "\x00" + c.User}
	b, err := os.ReadFile(m.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read scan memo: %w", err)
	default:
		// A memo that does not parse is only forgotten: the scan reads
		// everything again.
		_ = json.Unmarshal(b, &m.all)
	}
	m.store = m.all[m.key]
	if m.store == nil || m.store.Rules != d.Fingerprint() || m.store.Sessions == nil {
		m.store = &storeMemo{Rules: d.Fingerprint(), Sessions: map[string]*sessionMemo{}}
		m.all[m.key] = m.store
	}
	return m, nil
}

// scan returns the places of the secrets of session s and how many
// messages it read: those after the last one read before (read again,
// as its tool parts may have finished since), or all with full, or when
// that message is not what it was (the session was rewound).
func (m *memo) scan(ctx context.Context, st loom.Store, d *sec.Detector, s *loom.Session, full bool) ([]sec.Place, int, error) {
	m.mu.Lock()
	prev := m.store.Sessions[s.ID]
	m.mu.Unlock()
	q := loom.MessageQuery{Oldest: true}
	if prev != nil && !full {
		q.After = prev.Seq - 1
	}
	msgs, err := st.Messages(ctx, s.ID, q)
	if err != nil {
		return nil, 0, err
	}
	var places []sec.Place
	if prev != nil && !full && len(msgs) > 0 && msgs[0].Seq == prev.Seq && msgs[0].ID == prev.MessageID {
		places = slices.DeleteFunc(slices.Clone(prev.Places), func(p sec.Place) bool { return p.Seq >= prev.Seq })
	} else if q.After > 0 {
		// Rewound, or changed beyond what can be followed: all again.
		if msgs, err = st.Messages(ctx, s.ID, loom.MessageQuery{}); err != nil {
			return nil, 0, err
		}
	}
	for _, msg := range msgs {
		places = append(places, d.ScanMessage(msg)...)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(msgs) > 0 {
		last := msgs[len(msgs)-1]
		m.store.Sessions[s.ID] = &sessionMemo{Seq: last.Seq, MessageID: last.ID, Places: places}
	} else if prev != nil && q.After == 0 {
		delete(m.store.Sessions, s.ID)
	}
	return places, len(msgs), nil
}

func (m *memo) forget(id string) { delete(m.store.Sessions, id) }

func (m *memo) save() error {
	b, err := json.Marshal(m.all)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(m.path), 0o700); err != nil {
		return fmt.Errorf("save scan memo: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(m.path), memoFile+".*")
	if err == nil {
		_, err = tmp.Write(b)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), m.path)
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
	}
	if err != nil {
		return fmt.Errorf("save scan memo: %w", err)
	}
	return nil
}
