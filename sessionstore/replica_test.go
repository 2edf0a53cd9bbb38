package sessionstore

import (
	"context"
	"errors"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// fakeReplica is a ReplicaEngine without a database, for the Replica's
// own steps: its transaction answers the host, its keeping and the
// store's (empty) history; any other step panics.
type fakeReplica struct {
	tx *fakeApply
}

func (e *fakeReplica) Begin(context.Context) (Tx, error) {
	e.tx.ended = append(e.tx.ended, errOpen)
	return Tx{SyncSteps: e.tx, Ender: e.tx}, nil
}

type fakeApply struct {
	SyncSteps // nil: any step not below panics
	host      synclog.HostID
	setErr    error
	set       []synclog.HostID
	ended     []error
}

func (w *fakeApply) Host(context.Context) (synclog.HostID, error) { return w.host, nil }

func (w *fakeApply) SetHost(_ context.Context, h synclog.HostID) error {
	w.set = append(w.set, h)
	return w.setErr
}

func (w *fakeApply) AllSessions(context.Context) ([]*loom.Session, error) { return nil, nil }

func (w *fakeApply) End(err error) error {
	w.ended[len(w.ended)-1] = err
	return err
}

func TestReplicaEnablesSyncOnce(t *testing.T) {
	tx := &fakeApply{}
	r := NewReplica(&fakeReplica{tx})
	host, err := r.EnableSync(t.Context())
	if err != nil || host == "" || len(tx.set) != 1 || tx.set[0] != host {
		t.Fatalf("enable = %q, %v; kept %v", host, err, tx.set)
	}
	if tx.ended[0] != nil {
		t.Fatalf("the set-up ended with %v, want committed", tx.ended[0])
	}
	// Set up already: the host it has, nothing kept again.
	tx.host = host
	again, err := r.EnableSync(t.Context())
	if err != nil || again != host || len(tx.set) != 1 {
		t.Fatalf("enable again = %q, %v; kept %v", again, err, tx.set)
	}
	// A failed set-up names no host and rolls back.
	failing := &fakeApply{setErr: errors.New("disk full")}
	host, err = NewReplica(&fakeReplica{failing}).EnableSync(t.Context())
	if host != "" || !errors.Is(err, failing.setErr) || !errors.Is(failing.ended[0], failing.setErr) {
		t.Fatalf("failed enable = %q, %v; ended %v", host, err, failing.ended)
	}
}

func TestReplicaEndsATransactionAPanicLeaves(t *testing.T) {
	tx := &fakeApply{host: synclog.NewHostID()}
	r := NewReplica(&fakeReplica{tx})
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic: the fake transaction applies nothing")
			}
		}()
		r.ApplySync(t.Context(), synclog.Header{Host: synclog.NewHostID(), Index: 1}, &synclog.Purged{SessionIDs: []string{"s"}})
	}()
	if len(tx.ended) != 1 || !errors.Is(tx.ended[0], errAborted) {
		t.Fatalf("transactions ended with %v, want the one rolled back", tx.ended)
	}
}
