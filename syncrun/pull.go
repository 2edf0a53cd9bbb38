package syncrun

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/synclog"
	"github.com/loomhq/loom/syncpath"
)

// Waiting is a host whose records wait: Index is the first that could
// not be applied yet, and Reason why.
type Waiting struct {
	Host   string `json:"host"`
	Index  int64  `json:"index"`
	Reason string `json:"reason"`
}

// PullResult is what a pull did: how many records it applied, and the
// hosts whose records still wait for records of others the hub does not
// hold yet (the next pull applies them once it does).
type PullResult struct {
	Applied int
	Waiting []Waiting
	// SetAside are the records passed over (see pull).
	SetAside []syncpath.SetAside
}

// Pull reads the records of every host but self that the hub holds
// after what applied says was applied of each, opens them with key and
// hands them to apply, each host's in index order. A record apply says
// waits (synclog.ErrWait in its error's chain) stops its host's records
// for the moment: Pull goes on with the other hosts', and comes back to
// it while any of them applies, so records that follow each other across
// hosts apply in any order the hub serves them. Pull stops at the first
// other error: of the hub, of a record that does not open (a wrong key
// is envelope.ErrWrongKey), or of apply, which says which record it
// could not apply.
func Pull(ctx context.Context, c *hub.Client, self synclog.HostID, applied synclog.Vector, key envelope.Key,
	apply func(synclog.Header, synclog.Payload) error) (PullResult, error) {
	hosts, err := c.Own().Hosts(ctx)
	if err != nil {
		return PullResult{}, err
	}
	return pull(ctx, c, self, applied, key, hosts, apply, nil, nil)
}

// pull is Pull where the hub holds hosts; keep, when not nil, is given
// each page's records that open, as the hub served them, before they
// are applied. With pass, a record that does not verify or open with
// key, or that breaks the rules, is set aside (syncpath.SetAside): pass
// records that it was passed over and the host's next records apply, as
// a team's sync does. A record this loom cannot read yet (sealed with
// another key, written by a newer loom, stamped ahead of this clock)
// still stops its host: it is good, and applies once this machine has
// the key, the newer loom or the time.
func pull(ctx context.Context, c *hub.Client, self synclog.HostID, applied synclog.Vector, key envelope.Key, hosts []loom.SyncHost,
	apply func(synclog.Header, synclog.Payload) error, keep func(context.Context, []loom.SyncRecord) error,
	pass func(host string, index int64) error) (PullResult, error) {
	var res PullResult
	after := map[string]int64{}
	for _, h := range hosts {
		after[h.Host] = applied[synclog.HostID(h.Host)]
	}
	// A host whose record does not open or apply stops there; the
	// others' records still apply (one machine's damaged or foreign
	// record must not hold back the rest), and the pull then fails
	// naming it.
	var stuck []error
	failed := map[string]bool{}
	for {
		res.Waiting = res.Waiting[:0]
		progress := false
		for _, h := range hosts {
			if h.Host == string(self) || after[h.Host] >= h.Last || failed[h.Host] {
				continue
			}
			n, w, err := pullHost(ctx, c, h, after, key, apply, keep, pass, &res.SetAside)
			res.Applied += n
			if err != nil {
				var rerr recordError
				if ctx.Err() != nil || !errors.As(err, &rerr) {
					return res, err
				}
				failed[h.Host] = true
				stuck = append(stuck, err)
				continue
			}
			progress = progress || n > 0
			if w != nil {
				res.Waiting = append(res.Waiting, *w)
			}
		}
		if !progress || len(res.Waiting) == 0 {
			break
		}
	}
	switch len(stuck) {
	case 0:
		return res, nil
	case 1:
		return res, fmt.Errorf("%w; that machine's later records wait behind it, the other machines' were applied%s", stuck[0], stuckHint(stuck[0]))
	default:
		return res, fmt.Errorf("%w; that machine's later records wait behind it, and %d more machines' stop too; the others' were applied%s", stuck[0], len(stuck)-1, stuckHint(stuck[0]))
	}
}

// stuckHint says what to do about a record that stops its host's log.
func stuckHint(err error) string {
	switch {
	case errors.Is(err, envelope.ErrWrongKey):
		return " (that machine syncs with another key: give it this one with loom sync key --set)"
	case errors.Is(err, synclog.ErrNewer):
		return ""
	case errors.Is(err, synclog.ErrClockAhead):
		return " (this machine's clock is behind that machine's: set it right, and the record applies)"
	default:
		return ""
	}
}

// pullHost applies host h's records after after[h.Host] until they end
// or one waits, moving after[h.Host] on with each applied or set aside
// (see pull, and aside, which gets those set aside); keep (see pull) is
// given those of each page that open before they apply.
func pullHost(ctx context.Context, c *hub.Client, h loom.SyncHost, after map[string]int64, key envelope.Key,
	apply func(synclog.Header, synclog.Payload) error, keep func(context.Context, []loom.SyncRecord) error,
	pass func(string, int64) error, aside *[]syncpath.SetAside) (int, *Waiting, error) {
	n := 0
	var wait *Waiting
	reached, err := syncpath.Writer(ctx, c.Own(), h.Host, after[h.Host], h.Last, batch, func(recs []loom.SyncRecord) (int64, bool, error) {
		type opened struct {
			index int64
			h     synclog.Header
			p     synclog.Payload
			bad   error // the record does not verify, open or decode
		}
		var all []opened
		var good []loom.SyncRecord // those that open with key, kept also when a newer loom wrote them
		var stop error
		for _, r := range recs {
			o := opened{index: r.Index}
			hd, err := headerOf(h.Host, r)
			if err != nil {
				o.bad = err
				all = append(all, o)
				continue
			}
			body, err := synclog.OpenEncoded(key, hd, r.Body)
			if errors.Is(err, envelope.ErrWrongKey) {
				stop = recordError{r.Host, r.Index, err}
				break
			}
			if err != nil {
				o.bad = recordError{r.Host, r.Index, err}
				all = append(all, o)
				continue
			}
			good = append(good, r)
			p, err := synclog.Decode(body)
			if errors.Is(err, synclog.ErrNewer) {
				stop = recordError{r.Host, r.Index, fmt.Errorf("record %d of host %s: %w", hd.Index, hd.Host, err)}
				break
			}
			if err != nil {
				o.bad = recordError{r.Host, r.Index, fmt.Errorf("record %d of host %s: %w", hd.Index, hd.Host, err)}
			}
			o.h, o.p = hd, p
			all = append(all, o)
		}
		if keep != nil && len(good) > 0 {
			if err := keep(ctx, good); err != nil {
				return after[h.Host], false, err
			}
		}
		for _, o := range all {
			err := o.bad
			if err == nil {
				err = apply(o.h, o.p)
				if errors.Is(err, synclog.ErrWait) {
					wait = &Waiting{Host: h.Host, Index: o.index, Reason: err.Error()}
					return after[h.Host], true, nil
				}
				if errors.Is(err, synclog.ErrNewer) || errors.Is(err, synclog.ErrClockAhead) {
					// Good, and not readable here yet: it stops its host.
					return after[h.Host], false, recordError{h.Host, o.index, err}
				}
				if err != nil && !errors.Is(err, synclog.ErrInvalid) && !errors.Is(err, synclog.ErrCorrupt) {
					// Not the record's fault: the store's, everyone's.
					return after[h.Host], false, err
				}
			}
			if err != nil {
				if pass == nil {
					if _, ok := err.(recordError); !ok {
						err = recordError{h.Host, o.index, err}
					}
					return after[h.Host], false, err
				}
				// The record's own fault: passed over, once, and the
				// host's next records apply.
				if perr := pass(h.Host, o.index); perr != nil {
					return after[h.Host], false, perr
				}
				who := ""
				if o.bad == nil {
					who = yours
				}
				*aside = append(*aside, syncpath.Aside(h.Host, o.index, who, err))
			} else {
				n++
			}
			after[h.Host] = o.index
		}
		return after[h.Host], stop != nil, stop
	})
	after[h.Host] = max(after[h.Host], reached)
	if err == nil && wait == nil && after[h.Host] < h.Last {
		err = fmt.Errorf("hub %s: host %s's records after %d are missing", c.URL, h.Host, after[h.Host])
	}
	return n, wait, err
}

// yours is the author of a record of the user's own that verified and
// opened with their key and was set aside all the same; Nobody stands
// for that of one that did not.
const (
	yours = "yours"
	// Nobody is who wrote a record set aside that did not verify or
	// open with the user's key: someone with a token and not the key,
	// or the hub.
	Nobody = "not written with your sync key"
)

// headerOf reads the header of r, a record the hub served as host's,
// and checks that it names r's host and index.
func headerOf(host string, r loom.SyncRecord) (synclog.Header, error) {
	var hd synclog.Header
	if err := hd.UnmarshalBinary(r.Header); err != nil {
		return hd, recordError{r.Host, r.Index, fmt.Errorf("record %d of host %s: %w", r.Index, r.Host, err)}
	}
	if r.Host != host || string(hd.Host) != r.Host || hd.Index != r.Index {
		return hd, recordError{r.Host, r.Index, fmt.Errorf("record %d of host %s: its header says record %d of host %s", r.Index, r.Host, hd.Index, hd.Host)}
	}
	return hd, nil
}

// stopRetired returns hosts with the logs that retired says stop ending
// there.
func stopRetired(hosts []loom.SyncHost, retired map[synclog.HostID]int64) []loom.SyncHost {
	if len(retired) == 0 {
		return hosts
	}
	out := slices.Clone(hosts)
	for i, h := range out {
		if after, ok := retired[synclog.HostID(h.Host)]; ok && after < h.Last {
			out[i].Last = after
		}
	}
	return out
}

// recordError is a record of one host that does not open or apply: it
// stops that host's records only.
type recordError struct {
	host  string
	index int64
	err   error
}

func (e recordError) Error() string { return e.err.Error() }
func (e recordError) Unwrap() error { return e.err }
