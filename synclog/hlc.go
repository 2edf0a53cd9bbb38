package synclog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
)

// HLC is a reading of a hybrid logical clock (Kulkarni et al., "Logical
// Physical Clocks", 2014): milliseconds of wall time since the Unix epoch
// in the high 48 bits and a logical counter in the low 16. Readings
// compare as integers, and a reading is never far from the wall time it
// was taken at, so it orders changes as the people who made them would
// while agreeing with causality: a record written after another was read
// has a greater HLC, whatever the machines' clocks say.
type HLC uint64

// logicalBits is the width of an HLC's counter.
const logicalBits = 16

// maxWallMS is the latest wall time an HLC holds: the year 10889.
const maxWallMS = 1<<(64-logicalBits) - 1

// MaxAhead is how far ahead of this machine's clock a reading from
// another machine may be. A clock set wrong by more would otherwise drag
// every HLC written after it forward with it, for good.
const MaxAhead = time.Hour

// ErrClockAhead reports a reading from another machine more than MaxAhead
// ahead of this machine's clock: one of the two clocks is wrong.
var ErrClockAhead = errors.New("clock ahead")

// NewHLC returns the reading of wall time t with counter logical. Times
// before 1970 read as 1970, times after the year 10889 as then.
func NewHLC(t time.Time, logical uint16) HLC {
	return HLC(wallMS(t))<<logicalBits | HLC(logical)
}

// wallMS returns t in milliseconds since the epoch, within what an HLC
// holds.
func wallMS(t time.Time) int64 {
	return min(max(t.UnixMilli(), 0), maxWallMS)
}

// WallMS returns the reading's wall time, in milliseconds since the Unix
// epoch.
func (h HLC) WallMS() int64 { return int64(h >> logicalBits) }

// Wall returns the reading's wall time, in UTC.
func (h HLC) Wall() time.Time { return time.UnixMilli(h.WallMS()).UTC() }

// Logical returns the reading's counter: how many readings before it had
// the same wall time.
func (h HLC) Logical() uint16 { return uint16(h) }

// String returns the reading as loom writes times, a slash and the
// counter in five digits: 2026-05-01T10:00:00.123Z/00003. The text sorts
// as the readings do.
func (h HLC) String() string {
	return loom.FormatTime(h.Wall()) + "/" + fmt.Sprintf("%05d", h.Logical())
}

// ParseHLC reads what HLC.String writes.
func ParseHLC(s string) (HLC, error) {
	wall, counter, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("hybrid clock reading %q: want TIME/COUNTER, e.g. 2026-05-01T10:00:00.123Z/00003", s)
	}
	t, err := time.Parse(time.RFC3339Nano, wall)
	if err != nil {
		return 0, fmt.Errorf("hybrid clock reading %q: %w", s, err)
	}
	n, err := strconv.ParseUint(counter, 10, logicalBits)
	if err != nil {
		return 0, fmt.Errorf("hybrid clock reading %q: counter: %w", s, err)
	}
	h := NewHLC(t, uint16(n))
	if h.Wall().Compare(t.Truncate(time.Millisecond)) != 0 {
		return 0, fmt.Errorf("hybrid clock reading %q: time out of range", s)
	}
	return h, nil
}

// Clock gives this host's HLC readings. Its readings only grow, even when
// the wall clock steps back; readings from other hosts move it forward
// (Observe), so that what a host writes after reading another host's
// records is stamped after them. It is safe for concurrent use.
type Clock struct {
	now func() time.Time

	mu   sync.Mutex
	last HLC
}

// NewClock returns a clock that reads wall time from now (time.Now when
// nil) and never returns a reading at or below last. A host starts it at
// the greatest HLC in its log, so that its readings stay unique across
// restarts even if the wall clock went back in between.
func NewClock(now func() time.Time, last HLC) *Clock {
	if now == nil {
		now = time.Now
	}
	return &Clock{now: now, last: last}
}

// Now returns a reading greater than every reading before it and every
// reading observed: the wall time when that is greater, else the last
// reading with its counter advanced (65,536 readings in one millisecond
// carry into the next, so the wall time stays within a few milliseconds
// of the true one).
func (c *Clock) Now() HLC {
	pt := NewHLC(c.now(), 0)
	c.mu.Lock()
	defer c.mu.Unlock()
	if pt > c.last {
		c.last = pt
	} else {
		c.last++
	}
	return c.last
}

// Observe takes in a reading from another host's record, so that the next
// Now is greater. A reading more than MaxAhead ahead of this machine's
// clock is refused with ErrClockAhead and leaves the clock as it was: one
// of the two machines' clocks is wrong, and following it would stamp
// every change from here on in the future.
//
// The paper ticks the clock on receipt as well; here the tick is the next
// Now, which gives the same order, since nothing is stamped in between.
func (c *Clock) Observe(remote HLC) error {
	now := c.now()
	if remote.WallMS() > wallMS(now)+MaxAhead.Milliseconds() {
		return fmt.Errorf("%w: a record is stamped %s, %s ahead of this machine's clock (%s); check the clocks of both machines",
			ErrClockAhead, loom.FormatTime(remote.Wall()), remote.Wall().Sub(now).Round(time.Second), loom.FormatTime(now))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = max(c.last, remote)
	return nil
}

// Last returns the greatest reading the clock has given or observed.
func (c *Clock) Last() HLC {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}
