package importer_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// racedStore is a store on which another importer writes the same
// sessions just before the first write of an import. It takes no
// source locks, so that the other importer, on the same store, is not
// kept waiting for the import it races with.
type racedStore struct {
	loom.Engine
	other func()
	raced bool
}

// LockSource takes no lock.
func (s *racedStore) LockSource(context.Context, string, string) (loom.Lease, error) {
	return noLease{}, nil
}

func (s *racedStore) ApplyImport(ctx context.Context, w *loom.ImportWrite) error {
	if !s.raced {
		s.raced = true
		s.other()
	}
	return s.Engine.ApplyImport(ctx, w)
}

// noLease is the lease of a lock not taken.
type noLease struct{}

func (noLease) Lock() loom.Lock               { return loom.Lock{} }
func (noLease) Err() error                    { return nil }
func (noLease) Release(context.Context) error { return nil }

// A run of --watch that loses a race (another importer stored the
// session first) reports the problem with its file and runs again by
// itself soon, which completes the session: it does not wait for the
// next change or rescan, nor fail the same way for ever.
func TestWatchRetriesALostRace(t *testing.T) {
	fx := newFixture(t)
	fx.write("s1.toy", `{"id":"u1","role":"user","text":"list the files"}`, `{"id":"a1","role":"assistant","text":"two"}`)
	targets := []importer.Target{{Format: fx.f, Roots: []string{fx.dir}, Explicit: true}}
	st := &racedStore{Engine: fx.st}
	st.other = func() {
		if _, err := (&importer.Importer{Store: fx.st, UserID: "alice"}).Run(context.Background(), targets); err != nil {
			t.Error(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	reports := make(chan *importer.Report, 10)
	done := make(chan error, 1)
	go func() {
		im := &importer.Importer{Store: st, UserID: "alice"}
		done <- im.Watch(ctx, targets, importer.WatchOptions{Rescan: time.Hour}, func(r *importer.Report) { reports <- r })
	}()
	first := <-reports
	var p importer.Problem
	for _, tr := range first.Tools {
		if tr.Tool == "watch" && len(tr.Problems) == 1 {
			p = tr.Problems[0]
		}
	}
	if p.File != filepath.Join(fx.dir, "s1.toy") || p.Reason == "" {
		t.Fatalf("the lost race is reported as %+v, want a problem naming %s", p, filepath.Join(fx.dir, "s1.toy"))
	}
	select {
	case r := <-reports:
		if r.Changed() && r.Tools[0].ProblemCount > 0 {
			t.Errorf("the run after the lost race: %+v", r.Tools[0])
		}
	case <-ctx.Done():
		t.Fatal("no run after the lost race")
	}
	cancel()
	<-done
	_, msgs := fx.session("toy:s1")
	if len(msgs) != 2 {
		t.Errorf("%d messages stored, want 2", len(msgs))
	}
}
