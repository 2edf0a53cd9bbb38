package synclog

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// wall is a wall clock a test sets, safe for concurrent use.
type wall struct {
	mu sync.Mutex
	t  time.Time
}

func (w *wall) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.t
}

// wallAt returns a settable wall clock at t0, and how to set it. (A
// clock of its own: package conformance, which has one, imports synclog
// itself.)
func wallAt() (*wall, func(time.Time)) {
	w := &wall{t: t0}
	return w, func(t time.Time) {
		w.mu.Lock()
		w.t = t
		w.mu.Unlock()
	}
}

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func TestClockFollowsWallTime(t *testing.T) {
	w, set := wallAt()
	c := NewClock(w.Now, 0)
	if got := c.Now(); got != NewHLC(t0, 0) {
		t.Fatalf("first reading %s, want %s", got, NewHLC(t0, 0))
	}
	if got := c.Now(); got != NewHLC(t0, 1) {
		t.Fatalf("second reading in the same millisecond %s, want counter 1", got)
	}
	set(t0.Add(5 * time.Millisecond))
	if got := c.Now(); got != NewHLC(t0.Add(5*time.Millisecond), 0) {
		t.Fatalf("reading after the wall clock moved %s, want its time with counter 0", got)
	}
}

// A wall clock that steps back (NTP, a user fixing it, a VM restored)
// never makes a reading repeat or go back: two changes keep their order.
func TestClockMonotonicWhenWallGoesBack(t *testing.T) {
	w, set := wallAt()
	c := NewClock(w.Now, 0)
	var readings []HLC
	for _, d := range []time.Duration{0, time.Second, -time.Hour, -time.Hour, 2 * time.Millisecond, time.Second + time.Millisecond} {
		set(t0.Add(d))
		readings = append(readings, c.Now(), c.Now())
	}
	for i := 1; i < len(readings); i++ {
		if readings[i] <= readings[i-1] {
			t.Fatalf("reading %d (%s) not after reading %d (%s)", i, readings[i], i-1, readings[i-1])
		}
	}
	// While the wall clock is behind, the readings stay at the latest
	// wall time seen, not at the wrong one.
	if got := readings[4].Wall(); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("reading while the clock is an hour back has wall time %s, want %s", got, t0.Add(time.Second))
	}
	if got := readings[len(readings)-1].Wall(); !got.Equal(t0.Add(time.Second + time.Millisecond)) {
		t.Errorf("once the wall clock passes the readings again they follow it: %s", got)
	}
}

// A clock started from the greatest HLC in the host's log never stamps
// below it, even if the machine's clock went back while loom was not
// running.
func TestClockStartsAfterLast(t *testing.T) {
	last := NewHLC(t0.Add(time.Minute), 7)
	c := NewClock(func() time.Time { return t0 }, last)
	if got := c.Now(); got != last+1 {
		t.Fatalf("first reading %s, want %s", got, last+1)
	}
}

func TestClockCounterCarries(t *testing.T) {
	c := NewClock(func() time.Time { return t0 }, NewHLC(t0, 0xffff))
	if got := c.Now(); got != NewHLC(t0.Add(time.Millisecond), 0) {
		t.Fatalf("reading after counter 65535: %s", got)
	}
}

func TestClockObserve(t *testing.T) {
	w, _ := wallAt()
	c := NewClock(w.Now, 0)
	local := c.Now()

	// A record from a machine whose clock is 10 minutes ahead: what this
	// host writes next is stamped after it.
	remote := NewHLC(t0.Add(10*time.Minute), 3)
	if err := c.Observe(remote); err != nil {
		t.Fatal(err)
	}
	if got := c.Now(); got <= remote {
		t.Fatalf("reading after observing %s is %s", remote, got)
	}
	// An older reading changes nothing.
	before := c.Last()
	if err := c.Observe(local); err != nil || c.Last() != before {
		t.Fatalf("observing an older reading: %v, last %s, want %s", err, c.Last(), before)
	}
}

// A machine whose clock is set a day ahead cannot drag every other
// machine's stamps into the future.
func TestClockRefusesFarFuture(t *testing.T) {
	w, _ := wallAt()
	c := NewClock(w.Now, 0)
	c.Now()
	before := c.Last()
	remote := NewHLC(t0.Add(24*time.Hour), 0)
	err := c.Observe(remote)
	if !errors.Is(err, ErrClockAhead) {
		t.Fatalf("observing a reading a day ahead: %v, want ErrClockAhead", err)
	}
	for _, want := range []string{"2026-05-02T10:00:00.000Z", "24h0m0s ahead", "check the clocks"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if c.Last() != before {
		t.Fatalf("a refused reading moved the clock to %s", c.Last())
	}
	// Just within the bound is taken.
	if err := c.Observe(NewHLC(t0.Add(MaxAhead), 0)); err != nil {
		t.Fatalf("observing a reading MaxAhead ahead: %v", err)
	}
}

// Readings taken at once from many goroutines are all different, and each
// goroutine's are in order.
func TestClockConcurrent(t *testing.T) {
	w, set := wallAt()
	c := NewClock(w.Now, 0)
	const goroutines, each = 8, 500
	got := make([][]HLC, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				if i%50 == 0 {
					set(t0.Add(time.Duration(i-g*100) * time.Millisecond)) // forwards and back
				}
				if i%7 == 0 {
					if err := c.Observe(NewHLC(t0.Add(time.Duration(i)*time.Millisecond), uint16(g))); err != nil {
						t.Error(err)
					}
				}
				got[g] = append(got[g], c.Now())
			}
		})
	}
	wg.Wait()
	var all []HLC
	for g, hs := range got {
		if !slices.IsSorted(hs) {
			t.Fatalf("goroutine %d's readings are out of order", g)
		}
		all = append(all, hs...)
	}
	slices.Sort(all)
	if n := len(slices.Compact(all)); n != goroutines*each {
		t.Fatalf("%d different readings of %d", n, goroutines*each)
	}
}

func TestHLCText(t *testing.T) {
	h := NewHLC(t0.Add(123*time.Millisecond), 3)
	if got, want := h.String(), "2026-05-01T10:00:00.123Z/00003"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	back, err := ParseHLC(h.String())
	if err != nil || back != h {
		t.Fatalf("ParseHLC(%q) = %s, %v", h.String(), back, err)
	}
	// The text sorts as the readings do.
	a, b := NewHLC(t0, 65535).String(), NewHLC(t0.Add(time.Millisecond), 0).String()
	if a >= b {
		t.Errorf("%q sorts after %q", a, b)
	}
	for _, bad := range []string{"", "2026-05-01T10:00:00.123Z", "2026-05-01T10:00:00.123Z/x", "2026-05-01T10:00:00.123Z/65536", "yesterday/00001", "1969-12-31T23:59:59.000Z/00000"} {
		if _, err := ParseHLC(bad); err == nil {
			t.Errorf("ParseHLC(%q) accepted", bad)
		}
	}
}

func TestHLCClamps(t *testing.T) {
	if got := NewHLC(time.Unix(-5, 0), 1); got != 1 {
		t.Errorf("a time before 1970 reads %d, want the epoch", got)
	}
	if got := NewHLC(time.Date(20000, 1, 1, 0, 0, 0, 0, time.UTC), 0).WallMS(); got != maxWallMS {
		t.Errorf("a time after the year 10889 reads %d ms", got)
	}
}

// Stamps order by HLC, then host: two hosts that wrote at the same
// reading still agree which came last.
func TestStampOrder(t *testing.T) {
	a, b := HostID("00000000-0000-4000-8000-00000000000a"), HostID("00000000-0000-4000-8000-00000000000b")
	h := NewHLC(t0, 0)
	stamps := []Stamp{{h + 1, a}, {h, b}, {}, {h, a}, {h + 1, b}}
	slices.SortFunc(stamps, Stamp.Compare)
	want := []Stamp{{}, {h, a}, {h, b}, {h + 1, a}, {h + 1, b}}
	if !slices.Equal(stamps, want) {
		t.Fatalf("sorted %v, want %v", stamps, want)
	}
	if !(Stamp{}).IsZero() || want[1].IsZero() {
		t.Error("IsZero")
	}
	if (Stamp{h, a}).Less(Stamp{h, a}) {
		t.Error("a stamp is before itself")
	}
}

func TestHostID(t *testing.T) {
	h := NewHostID()
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []HostID{"", "laptop", "00000000-0000-4000-8000-00000000000A", "{00000000-0000-4000-8000-00000000000a}"} {
		if bad.Validate() == nil {
			t.Errorf("host id %q accepted", bad)
		}
	}
}
