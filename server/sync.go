package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/syncwire"
)

// The hub side of sync: each user's hosts push the records of their logs
// and pull the others', through the store's loom.SyncStore. Records are
// JSON with their header and body in base64; the hub never decodes
// either beyond that.

// Limits of sync's requests.
const (
	// maxSyncRequestBytes bounds a push's body, after any decompression:
	// a batch of loom.MaxSyncBatchBytes in base64, and room for each
	// record's host, index and keys.
	maxSyncRequestBytes = (loom.MaxSyncBatchBytes+2)/3*4 + loom.MaxSyncBatch*1024
	// A push holds its batch in memory (up to loom.MaxSyncBatchBytes);
	// so few run at once, the more as SQLite writes one at a time.
	maxSyncPushesPerUser = 2
	maxSyncPushes        = 8
)

// syncHub serves the sync endpoints over st.
type syncHub struct {
	s      *Server
	st     loom.SyncStore
	pushes *limiter
	// zstd compresses every answer that may be: EncodeAll may be
	// called from several goroutines at once.
	zstd func() *zstd.Encoder
	// gzips are reused: each holds its compression state, some hundreds
	// of KiB.
	gzips sync.Pool
	keys  syncKeys
}

// syncRoutes adds the sync endpoints to mux. Their store is Config.Sync,
// else Store when it keeps sync records; without one they answer 404.
func (s *Server) syncRoutes(mux *http.ServeMux) {
	h := &syncHub{s: s, st: s.cfg.Sync, pushes: newLimiter("sync pushes running", maxSyncPushesPerUser, maxSyncPushes)}
	h.zstd = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic("server: zstd encoder: " + err.Error())
		}
		return e
	})
	h.gzips.New = func() any {
		w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
		return w
	}
	if h.st == nil {
		h.st, _ = s.st.(loom.SyncStore)
	}
	mux.HandleFunc("GET "+syncwire.HostsPath, s.api(h.hosts))
	mux.HandleFunc("GET "+syncwire.RecordsPath, s.api(h.records))
	// A push reads its body before the request timeout bounds its store
	// work: a large batch on a slow link takes the read timeout's time.
	mux.HandleFunc("POST "+syncwire.RecordsPath, s.authorized(h.push))
}

// store returns the hub's store, or the error of a server without one.
func (h *syncHub) store() (loom.SyncStore, error) {
	if h.st == nil {
		return nil, loom.Errorf(loom.ENOTFOUND, "this server's store keeps no sync records")
	}
	return h.st, nil
}

// hosts answers GET /api/v1/sync/hosts: the user's hosts, by id.
func (h *syncHub) hosts(w http.ResponseWriter, r *http.Request) {
	st, err := h.store()
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	hosts, err := st.SyncHosts(r.Context(), userOf(r))
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	key, err := h.keys.keyOf(r.Context(), st, userOf(r))
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	out := syncwire.Hosts{Hosts: []syncwire.Host{}, KeyID: key, User: userOf(r)}
	for _, x := range hosts {
		out.Hosts = append(out.Hosts, syncwire.Host{Host: x.Host, Last: x.Last, Records: x.Records, Bytes: x.Bytes, UpdatedAt: loom.FormatTime(x.UpdatedAt)})
	}
	writeJSON(w, http.StatusOK, out)
}

// records answers GET /api/v1/sync/records?host=H&after=N&limit=L: a
// page of host's records after index N, with more set when the hub
// holds records after the page.
func (h *syncHub) records(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	host := q.str("host")
	after := q.count("after", "a record index")
	limit := q.int("limit", loom.MaxSyncBatch, 1, loom.MaxSyncBatch)
	if q.err == nil && host == "" {
		q.fail("host is required: the id of the host whose records to read")
	}
	st, err := h.store()
	if err == nil {
		err = q.err
	}
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	user := userOf(r)
	recs, err := st.SyncRecords(r.Context(), user, host, after, limit)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	more := false
	if len(recs) > 0 {
		last, err := h.last(r, st, user)
		if err != nil {
			h.s.writeError(w, r, err)
			return
		}
		more = recs[len(recs)-1].Index < last[host]
	}
	out := syncwire.Page{Records: make([]syncwire.Record, len(recs)), More: more}
	for i, x := range recs {
		out.Records[i] = syncwire.FromStore(x)
	}
	h.writeEncoded(w, r, http.StatusOK, out)
}

// last returns the last index of each of user's hosts.
func (h *syncHub) last(r *http.Request, st loom.SyncStore, user string) (map[string]int64, error) {
	hosts, err := st.SyncHosts(r.Context(), user)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(hosts))
	for _, x := range hosts {
		out[x.Host] = x.Last
	}
	return out, nil
}

// push answers POST /api/v1/sync/records: it stores a batch of the
// user's records, {"records": [...]}, and answers how many were new and
// the last index the hub now holds of each host in the batch.
func (h *syncHub) push(w http.ResponseWriter, r *http.Request) {
	st, err := h.store()
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	user := userOf(r)
	release, err := h.pushes.acquire(user)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	defer release()
	recs, err := readSyncBatch(w, r)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	ctx, cancel := h.s.bounded(r.Context())
	defer cancel()
	r = r.WithContext(ctx)
	if err := h.keys.check(ctx, st, user, recs); err != nil {
		h.s.writeError(w, r, err)
		return
	}
	stored, err := st.PutSyncRecords(ctx, user, recs)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	last, err := h.last(r, st, user)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	out := syncwire.Pushed{Stored: stored, Last: map[string]int64{}}
	for _, x := range recs {
		out.Last[x.Host] = last[x.Host]
	}
	writeJSON(w, http.StatusOK, out)
}

// readSyncBatch reads a push's body, {"records": [...]}, one record at a
// time, so that no more than the records themselves is held. A body over
// maxSyncRequestBytes, or a batch over the store's limits, is too large
// (413); a malformed one is invalid.
func readSyncBatch(w http.ResponseWriter, r *http.Request) ([]loom.SyncRecord, error) {
	body, err := syncBody(w, r)
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
				return codedError(eTooLarge, "a batch holds at most %d records", loom.MaxSyncBatch)
			}
			var in syncwire.Record
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
		return nil, codedError(eTooLarge, "%s", loom.ErrorMessage(err))
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

// syncBody is a push's body, decompressed as its Content-Encoding says
// (gzip or zstd), and bounded by maxSyncRequestBytes both as sent and
// as decompressed.
func syncBody(w http.ResponseWriter, r *http.Request) (io.ReadCloser, error) {
	raw := http.MaxBytesReader(w, r.Body, maxSyncRequestBytes)
	var dec io.ReadCloser
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return raw, nil
	case "gzip":
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return nil, bodyError(err)
		}
		dec = zr
	case "zstd":
		zr, err := zstd.NewReader(raw, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxSyncRequestBytes))
		if err != nil {
			return nil, err
		}
		dec = zr.IOReadCloser()
	default:
		return nil, loom.Errorf(loom.EINVALID, "Content-Encoding %q is not one this server reads: send gzip, zstd or none", enc)
	}
	return http.MaxBytesReader(w, dec, maxSyncRequestBytes), nil
}

// writeEncoded is writeJSON, compressed with zstd or gzip when the
// client accepts either: a page of records is mostly base64 of
// ciphertext, which compression takes back to about the ciphertext's
// size.
func (h *syncHub) writeEncoded(w http.ResponseWriter, r *http.Request, status int, v any) {
	enc := acceptedEncoding(r.Header.Get("Accept-Encoding"))
	if enc == "" {
		writeJSON(w, status, v)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		writeJSON(w, status, v) // writes the internal error
		return
	}
	b = append(b, '\n')
	hd := w.Header()
	hd.Set("Content-Type", "application/json; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Encoding", enc)
	hd.Add("Vary", "Accept-Encoding")
	if enc == "zstd" {
		out := h.zstd().EncodeAll(b, nil)
		hd.Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(status)
		w.Write(out)
		return
	}
	w.WriteHeader(status)
	zw := h.gzips.Get().(*gzip.Writer)
	zw.Reset(w)
	zw.Write(b)
	zw.Close()
	h.gzips.Put(zw)
}

// acceptedEncoding picks zstd, else gzip, among the encodings an
// Accept-Encoding header accepts; "" for neither.
func acceptedEncoding(accept string) string {
	var gz bool
	for part := range strings.SplitSeq(accept, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				continue
			}
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "zstd":
			return "zstd"
		case "gzip":
			gz = true
		}
	}
	if gz {
		return "gzip"
	}
	return ""
}
