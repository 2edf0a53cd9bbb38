package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
)

// The hub side of sync: each user's hosts push the records of their logs
// and pull the others', and each team's members' machines theirs, one
// implementation for both (space.go). Records are JSON with their header
// and body in base64; the hub never decodes either beyond that.

// Limits of sync's requests.
const (
	// maxRequestBytes bounds a push's body, after any decompression: a
	// batch of loom.MaxSyncBatchBytes in base64, and room for each
	// record's host, index and keys.
	maxRequestBytes = (loom.MaxSyncBatchBytes+2)/3*4 + loom.MaxSyncBatch*1024
	// A push holds its batch in memory (up to loom.MaxSyncBatchBytes);
	// so few run at once, the more as SQLite writes one at a time.
	MaxPushesPerUser = 2
	MaxPushes        = 8
)

// Edge is what the handler takes from the server that mounts it, in the
// server's own terms: how a request is authenticated and bounded, how an
// error is answered, and how many pushes run at once.
type Edge struct {
	// Authorized runs next for a request with a valid token, whose
	// user User then returns, and answers any other with Error's 401.
	Authorized func(next http.HandlerFunc) http.HandlerFunc
	// User returns the user of a request Authorized let through.
	User func(r *http.Request) string
	// Bounded bounds ctx by the server's request timeout: the store
	// work of one request.
	Bounded func(ctx context.Context) (context.Context, context.CancelFunc)
	// Error answers err with its status and the API's JSON error.
	Error func(w http.ResponseWriter, r *http.Request, err error)
	// TooLarge is the error of a request too large to take (413), with
	// msg.
	TooLarge func(msg string) error
	// Forbidden is the error of a request its token may not make (403),
	// with msg; TooMany that of a user past a limit of theirs (429).
	Forbidden, TooMany func(msg string) error
	// Push takes a place for one of user's pushes to a space of scope
	// ("sync": their own; "team": a team's), given back by release, or
	// refuses it past the limits (MaxPushesPerUser, MaxPushes).
	// A hub of several processes on one store counts a user's pushes
	// over all of them (loom.HubLocks).
	Push func(ctx context.Context, scope, user string) (release func(), err error)
	// Locks, when the store is shared by several hub processes, holds
	// what must hold over all of them (a user's first push); nil for a
	// store of one process.
	Locks loom.HubLocks
	// CheckpointKey, when set, seals the checkpoints of teams' chains
	// the hub keeps in its store (loom.TeamCheckpoints): a process that
	// starts takes one in, if its MAC verifies, rather than verifying
	// the chain from its genesis. It must be kept outside the store (an
	// operator who edits the store's rows and holds it could have the
	// hub take a forged entry). Nil: checkpoints live in each process's
	// memory only.
	CheckpointKey []byte
	// Checkpoints is the store's keeping of those checkpoints, handed in
	// by the code that opened the engine (loom.Optional); nil: none.
	Checkpoints loom.TeamCheckpoints
	// Logger receives what the handler does in the background (nil:
	// slog.Default()).
	Logger *slog.Logger
}

// Handler serves the hub's records, a user's own (HostsPath and
// RecordsPath) and each team's (TeamPath(id)+"/hosts" and "/records"),
// through one implementation (space.go), and the teams' chains
// (team.go).
type Handler struct {
	sync  loom.SyncStore
	teams *teamHandler
	edge  Edge
	keys  keys
}

// NewHandler returns the hub's handler over sync, the store of users'
// own records, and teams, the store of teams; with sync nil, a user's
// own endpoints answer 404, and with teams nil, a team's answer that
// teams need a hub on PostgreSQL.
func NewHandler(sync loom.SyncStore, teams loom.TeamHub, edge Edge) *Handler {
	return &Handler{sync: sync, teams: newTeamHandler(teams, edge), edge: edge}
}

// Mux is what Mount registers the endpoints on: an *http.ServeMux, or
// one that keeps the patterns it is given.
type Mux interface {
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}

// Mount adds the endpoints to mux, each under its method, so that mux
// answers another method on their paths as it does on its own. A user's
// own records and a team's are served by the same handlers, each over
// its space.
func (h *Handler) Mount(mux Mux) {
	for _, s := range []struct {
		root string
		open opener
	}{{OwnRoot, h.own}, {teamRoot, h.teams.open}} {
		mux.HandleFunc("GET "+s.root+"/hosts", h.api(h.serveHosts(s.open)))
		mux.HandleFunc("GET "+s.root+"/records", h.api(h.serveRecords(s.open)))
		// A push bounds its store work itself, after reading its body.
		mux.HandleFunc("POST "+s.root+"/records", h.edge.Authorized(h.servePush(s.open)))
	}
	h.teams.mount(mux, h.api)
	h.teams.mountAudit(mux, h.api)
}

// api authorizes a request and bounds it by the request timeout.
func (h *Handler) api(next http.HandlerFunc) http.HandlerFunc {
	return h.edge.Authorized(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := h.edge.Bounded(r.Context())
		defer cancel()
		next(w, r.WithContext(ctx))
	})
}

// pageQuery reads a page's query, ?host=H&after=N&limit=L; the first
// value that does not read is the error.
func pageQuery(r *http.Request) (host string, after int64, limit int, err error) {
	q := r.URL.Query()
	host, limit = strings.TrimSpace(q.Get("host")), loom.MaxSyncBatch
	if s := strings.TrimSpace(q.Get("after")); s != "" {
		if after, err = strconv.ParseInt(s, 10, 64); err != nil || after < 0 {
			return "", 0, 0, loom.Errorf(loom.EINVALID, "after must be a record index (a whole number, 0 or more)")
		}
	}
	if s := strings.TrimSpace(q.Get("limit")); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > loom.MaxSyncBatch {
			return "", 0, 0, loom.Errorf(loom.EINVALID, "limit must be a whole number from 1 to %d", loom.MaxSyncBatch)
		}
	}
	if host == "" {
		return "", 0, 0, loom.Errorf(loom.EINVALID, "host is required: the id of the host whose records to read")
	}
	return host, after, limit, nil
}

// readBatch reads a push's body, {"records": [...]}, one record at a
// time, so that no more than the records themselves is held. A body over
// maxRequestBytes, or a batch over the store's limits, is too large
// (413); a malformed one is invalid.
func (h *Handler) readBatch(w http.ResponseWriter, r *http.Request) ([]loom.SyncRecord, error) {
	body, err := readBody(w, r)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	dec := json.NewDecoder(&compactJSON{r: body})
	dec.DisallowUnknownFields()
	var recs []loom.SyncRecord
	seen := false
	err = readObject(dec, func(key string) error {
		if key != "records" || seen {
			return loom.Errorf(loom.EINVALID, "a push is {\"records\": [...]}, without other fields")
		}
		seen = true
		return readArray(dec, func() error {
			if len(recs) == loom.MaxSyncBatch {
				return h.edge.TooLarge(fmt.Sprintf("a batch holds at most %d records", loom.MaxSyncBatch))
			}
			var in Record
			if err := dec.Decode(&in); err != nil {
				return err
			}
			if in.ReceivedAt != "" {
				return loom.Errorf(loom.EINVALID, "received_at is the hub's to set")
			}
			recs = append(recs, in.Store())
			return nil
		})
	})
	if err == nil {
		if _, err2 := dec.Token(); !errors.Is(err2, io.EOF) {
			err = loom.Errorf(loom.EINVALID, "request body must hold one JSON object")
		}
	}
	if err != nil {
		return nil, bodyError(err)
	}
	if err := loom.SyncBatchOverLimit(recs); err != nil {
		return nil, h.edge.TooLarge(loom.ErrorMessage(err))
	}
	return recs, nil
}

// compactJSON reads JSON without the whitespace between its tokens.
// json.Decoder's Token and More keep the whitespace they skip in their
// buffer and scan it again at each read: a push padded with megabytes of
// it would cost time quadratic in its length.
type compactJSON struct {
	r        io.Reader
	inString bool
	escaped  bool
}

func (c *compactJSON) Read(p []byte) (int, error) {
	for {
		n, err := c.r.Read(p)
		k := 0
		for _, b := range p[:n] {
			switch {
			case c.escaped:
				c.escaped = false
			case c.inString && b == '\\':
				c.escaped = true
			case b == '"':
				c.inString = !c.inString
			case !c.inString && (b == ' ' || b == '\t' || b == '\n' || b == '\r'):
				continue
			}
			p[k] = b
			k++
		}
		if k > 0 || err != nil {
			return k, err
		}
	}
}

// bodyError is the error of a body that did not decode: a body over its
// limit and a coded error as they are, anything else invalid JSON.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	var coded *loom.Error
	switch {
	case errors.As(err, &mbe), errors.As(err, &coded):
		return err
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The connection's read deadline passed: a slow link or a busy
		// hub, not a bad body. The server answers it as one to retry.
		return fmt.Errorf("read the push: %w", err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return loom.Errorf(loom.EINVALID, "request body ends before its JSON does")
	}
	return loom.Errorf(loom.EINVALID, "invalid JSON body: %s", err)
}

// readObject reads a JSON object from dec, calling field for each key
// with dec at its value, which field reads.
func readObject(dec *json.Decoder, field func(key string) error) error {
	if err := readDelim(dec, '{', "request body must be a JSON object"); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if err := field(key); err != nil {
			return err
		}
	}
	return readDelim(dec, '}', "")
}

// readArray reads a JSON array from dec, calling elem with dec at each
// element, which elem reads.
func readArray(dec *json.Decoder, elem func() error) error {
	if err := readDelim(dec, '[', "records must be an array"); err != nil {
		return err
	}
	for dec.More() {
		if err := elem(); err != nil {
			return err
		}
	}
	return readDelim(dec, ']', "")
}

// readDelim reads delimiter d from dec; what is there instead is invalid,
// with message when one is given.
func readDelim(dec *json.Decoder, d json.Delim, message string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		if message == "" {
			message = fmt.Sprintf("invalid JSON body: %v where %v belongs", tok, d)
		}
		return loom.Errorf(loom.EINVALID, "%s", message)
	}
	return nil
}

// readBody is a push's body, decompressed when its Content-Encoding is
// zstd (what Client sends), and bounded by maxRequestBytes both as sent
// and as decompressed.
func readBody(w http.ResponseWriter, r *http.Request) (io.ReadCloser, error) {
	raw := http.MaxBytesReader(w, r.Body, maxRequestBytes)
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return raw, nil
	case "zstd":
		zr, err := newDecoder(raw)
		if err != nil {
			return nil, err
		}
		return http.MaxBytesReader(w, zr, maxRequestBytes), nil
	default:
		return nil, loom.Errorf(loom.EINVALID, "Content-Encoding %q is not one this server reads: send zstd or none", enc)
	}
}

// writeJSON answers v as JSON, 200; when compress is set, compressed
// with zstd if the client accepts it (Client asks for it): a page of
// records is mostly base64 of ciphertext, which compression takes back
// to about the ciphertext's size.
func (h *Handler) writeJSON(w http.ResponseWriter, r *http.Request, v any, compress bool) {
	b, err := json.Marshal(v)
	if err != nil {
		h.edge.Error(w, r, err)
		return
	}
	b = append(b, '\n')
	hd := w.Header()
	if compress && acceptsZstd(r.Header.Get("Accept-Encoding")) {
		enc, err := encoder()
		if err != nil {
			h.edge.Error(w, r, err)
			return
		}
		b = enc.EncodeAll(b, nil)
		hd.Set("Content-Encoding", "zstd")
		hd.Add("Vary", "Accept-Encoding")
		hd.Set("Content-Length", strconv.Itoa(len(b)))
	}
	hd.Set("Content-Type", "application/json; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}
