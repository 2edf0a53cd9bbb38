// Package hub is the wire protocol of sync between a user's machines
// and a hub, both sides of it: the client (Client), which puts records on
// the hub and reads them back page by page, as one user, in the user's
// own record space or a team's (Space); the hub's handler (Handler),
// which loom serve mounts at /api/v1/sync and /api/v1/teams, one
// implementation for every space (space.go) beside the teams' chains
// (team.go); and the wire format between them (wire.go). The hub sees headers and
// ciphertext only (see docs/sync.md). What a sync does with the client,
// sealing, pushing, pulling and applying a store's records, is package
// syncrun's.
package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// Client calls one hub as one user.
type Client struct {
	// URL is the hub's base URL, as `loom serve` listens
	// (http://host:port).
	URL string
	// Token is the user's loom token on the hub (loom serve token).
	Token string
	// HTTP is the client of the calls (http.DefaultClient when nil).
	HTTP *http.Client

	// after is the clock a refused request waits on before it is sent
	// again (nil: time.After); tests take the clock out.
	after func(d time.Duration) <-chan time.Time
}

// ErrUnreachable is in the chain of the error of a call that reached no
// hub: none listens at the URL, or the network is down.
var ErrUnreachable = errors.New("hub unreachable")

// State is what the hub holds of a user: each of their hosts, the id of
// the sync key their records are sealed with ("" before the first), and
// the user the token is of.
type State struct {
	Hosts []loom.SyncHost
	KeyID string
	User  string
}

// State returns what the hub holds of the token's user.
func (c *Client) State(ctx context.Context) (State, error) {
	var out Hosts
	if err := c.call(ctx, http.MethodGet, HostsPath, nil, &out); err != nil {
		return State{}, err
	}
	st := State{Hosts: make([]loom.SyncHost, len(out.Hosts)), KeyID: out.KeyID, User: out.User}
	for i, h := range out.Hosts {
		st.Hosts[i] = loom.SyncHost{Host: h.Host, Last: h.Last, Records: h.Records, Bytes: h.Bytes}
	}
	return st, nil
}

// Space is one record space on the hub as the client reaches it: the
// user's own (Own) or a team's (Team). Listing a space's writers,
// reading a page of a writer's records and pushing records are the same
// calls in every space, as the hub serves them with one implementation.
type Space struct {
	c    *Client
	root string
}

// Own is the user's own space: the records of their machines' sync.
func (c *Client) Own() Space { return Space{c: c, root: OwnRoot} }

// Team is team id's space: the records its members' machines publish,
// which the hub lets its members read and write.
func (c *Client) Team(id string) Space { return Space{c: c, root: TeamPath(id)} }

// Hosts returns what the hub holds of each writer of the space: its
// last index, and in a user's own space its records and bytes (a
// team's counts only its last indexes at every pull).
func (s Space) Hosts(ctx context.Context) ([]loom.SyncHost, error) {
	var out Hosts
	if err := s.c.call(ctx, http.MethodGet, s.root+"/hosts", nil, &out); err != nil {
		return nil, err
	}
	hs := make([]loom.SyncHost, len(out.Hosts))
	for i, h := range out.Hosts {
		hs[i] = loom.SyncHost{Host: h.Host, Last: h.Last, Records: h.Records, Bytes: h.Bytes}
	}
	return hs, nil
}

// Put stores recs in the space and returns how many the hub had not
// stored before: in a user's own space, all or none.
func (s Space) Put(ctx context.Context, recs []loom.SyncRecord) (int, error) {
	in := Push{Records: make([]Record, len(recs))}
	for i, r := range recs {
		in.Records[i] = RecordOf(r)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return 0, err
	}
	var out Pushed
	if err := s.c.call(ctx, http.MethodPost, s.root+"/records", b, &out); err != nil {
		return 0, err
	}
	return out.Stored, nil
}

// Records returns up to limit of host's records after index after, in
// order, and whether the hub holds more.
func (s Space) Records(ctx context.Context, host string, after int64, limit int) ([]loom.SyncRecord, bool, error) {
	q := url.Values{"host": {host}, "after": {strconv.FormatInt(after, 10)}, "limit": {strconv.Itoa(limit)}}
	var out Page
	if err := s.c.call(ctx, http.MethodGet, s.root+"/records?"+q.Encode(), nil, &out); err != nil {
		return nil, false, err
	}
	recs := make([]loom.SyncRecord, len(out.Records))
	for i, r := range out.Records {
		recs[i] = r.Store()
	}
	return recs, out.More, nil
}

// call sends a request with body (JSON, nil for none) and decodes the
// answer into out. The hub's errors come back as loom errors with their
// code, so that the caller tells a conflict from a refusal. A refusal
// that passes (429 or 503 with Retry-After) is sent again after the wait
// it asks for, within bounds (retry.go); still refused, it is the error.
func (c *Client) call(ctx context.Context, method, path string, body []byte, out any) error {
	zstd := false
	if len(body) >= compressFrom {
		// A push is mostly base64 of ciphertext: zstd takes it back to
		// about the ciphertext's size, a quarter less.
		enc, err := encoder()
		if err != nil {
			return err
		}
		body, zstd = enc.EncodeAll(body, nil), true
	}
	after := c.after
	if after == nil {
		after = time.After
	}
	var tried retries
	var resp *http.Response
	note := ""
	for {
		var err error
		if resp, err = c.send(ctx, method, path, body, zstd); err != nil {
			return err
		}
		ask, ok := retryAfter(resp)
		if !ok {
			break
		}
		d, ok := tried.next(ask)
		if !ok {
			note = tried.spent()
			break
		}
		// The refusal's body is small: read to its end, it leaves the
		// connection open for the next request.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return fmt.Errorf("hub %s: %w", c.URL, ctx.Err())
		case <-after(d):
		}
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		code, msg, ok := ErrorOf(resp)
		if !ok {
			return fmt.Errorf("hub %s: %s%s", c.URL, resp.Status, note)
		}
		if resp.StatusCode == http.StatusUnauthorized {
			code = loom.EINVALID
			// The token was most likely made in another store than the
			// one the hub serves (loom token create without the hub's
			// --db).
			note += "; make one on the hub with loom token create, with the store loom serve uses there (its --db, or LOOM_DB)"
		}
		return loom.Errorf(code, "hub %s: %s%s", c.URL, msg, note)
	}
	var answer io.Reader = resp.Body
	if strings.EqualFold(resp.Header.Get("Content-Encoding"), "zstd") {
		zr, err := newDecoder(resp.Body)
		if err != nil {
			return fmt.Errorf("hub %s: read the answer: %w", c.URL, err)
		}
		defer zr.Close()
		answer = zr
	}
	if err := json.NewDecoder(answer).Decode(out); err != nil {
		return fmt.Errorf("hub %s: read the answer: %w", c.URL, err)
	}
	return nil
}

// ErrorOf reads the JSON error of a loom server's answer: its code and
// message, ok false when the body is not one.
func ErrorOf(resp *http.Response) (code, msg string, ok bool) {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &e) != nil || e.Error.Message == "" {
		return "", "", false
	}
	return e.Error.Code, e.Error.Message, true
}

// send sends one request with body (JSON, compressed with zstd when
// zstd is set; nil for none) and returns the hub's answer, whatever its
// status.
func (c *Client) send(ctx context.Context, method, path string, body []byte, zstd bool) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.URL, "/")+path, rd)
	if err != nil {
		return nil, fmt.Errorf("hub %s: %w", c.URL, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	// Pages come compressed as pushes go, with zstd; asking for it
	// leaves the transport's gzip out.
	req.Header.Set("Accept-Encoding", "zstd")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		if zstd {
			req.Header.Set("Content-Encoding", "zstd")
		}
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("hub %s: %w", c.URL, ctx.Err())
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrUnreachable, c.URL, err)
	}
	return resp, nil
}
