package capture

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/loomhq/loom/importer"
)

// Options say how Run captures.
type Options struct {
	// State is the state file's path (StatePath).
	State string
	// Interval is how often the heartbeat is written; default
	// DefaultInterval.
	Interval time.Duration
	// Rescan is how often every agent's files are imported again
	// whatever the file notifications said (importer.WatchOptions).
	Rescan time.Duration
	// Version is loom's, for the state file.
	Version string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Report is given the report of every import, after the state file
	// says what it did; may be nil.
	Report func(*importer.Report)
	// Waiting is told once that another capture runs on this state
	// file, and that this one waits for it to end before it starts.
	Waiting func(pid int)
}

// Run captures targets until ctx ends: it imports everything they hold,
// then follows their files (importer.Watch: file notifications, and an
// import of everything again every Rescan for what a notification
// missed), writing the state file after every import and its heartbeat
// every Interval, an import under way or not. Where another capture
// runs on the same state file (a service and one started by hand), it
// waits for that one to end first: two would import the same files
// twice over, to no harm but no use. A capture killed mid-import loses
// nothing: what an import writes goes in whole transactions, and the
// next run reads again what was not written.
func Run(ctx context.Context, im *importer.Importer, targets []importer.Target, o Options) error {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	if err := waitForOther(ctx, o, now); err != nil {
		return err
	}
	host, _ := os.Hostname()
	st := &State{PID: os.Getpid(), Host: host, Version: o.Version, StartedAt: now().UTC(), IntervalMS: o.Interval.Milliseconds()}
	for _, t := range targets {
		st.Agents = append(st.Agents, &AgentState{Agent: t.Format.Tool(), Roots: slices.Clone(t.Roots)})
	}
	var mu sync.Mutex
	write := func() error {
		st.Heartbeat = now().UTC()
		return WriteState(o.State, st)
	}
	mu.Lock()
	err := write()
	mu.Unlock()
	if err != nil {
		return err
	}
	beat := time.NewTicker(o.Interval)
	defer beat.Stop()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-beat.C:
				mu.Lock()
				write()
				mu.Unlock()
			}
		}
	}()
	err = im.Watch(ctx, targets, importer.WatchOptions{Rescan: o.Rescan}, func(rep *importer.Report) {
		mu.Lock()
		st.record(rep, now().UTC())
		write()
		mu.Unlock()
		if o.Report != nil {
			o.Report(rep)
		}
	})
	close(done)
	wg.Wait()
	stopped := now().UTC()
	st.Stopped = &stopped
	if werr := write(); werr != nil && (err == nil || errors.Is(err, context.Canceled)) {
		return werr
	}
	return err
}

// record takes in what one import did.
func (s *State) record(rep *importer.Report, at time.Time) {
	s.Runs++
	for _, t := range rep.Tools {
		a := s.Agent(t.Tool)
		if a == nil {
			continue // the watch's own problems, reported as tool "watch"
		}
		a.Found = t.RootsFound > 0
		a.LastRun = &at
		if t.SessionsNew+t.SessionsGrown+t.MessagesAdded+t.ToolsUpdated > 0 {
			a.LastCapture = &at
		}
		a.Sessions += t.SessionsNew
		a.Messages += t.MessagesAdded
		a.Problems += t.ProblemCount
		if len(t.Problems) > 0 {
			a.LastProblem = t.Problems[len(t.Problems)-1].String()
		}
	}
}

// waitForOther waits while another capture runs on o.State.
func waitForOther(ctx context.Context, o Options, now func() time.Time) error {
	told := false
	for {
		s, err := ReadState(o.State)
		if err != nil {
			// A state file that cannot be read is replaced.
			return nil
		}
		if s == nil || s.PID == os.Getpid() || !Live(s, now()).Running {
			return nil
		}
		if !told && o.Waiting != nil {
			o.Waiting(s.PID)
			told = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.Interval()):
		}
	}
}
