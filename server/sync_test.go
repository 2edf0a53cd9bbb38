package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/synclog"
)

// The wire's shapes, as the sync API writes and reads them.
type (
	wireRecord  = hub.Record
	pushAnswer  = hub.Pushed
	pageAnswer  = hub.Page
	hostsAnswer = hub.Hosts
)

func wireRecs(host string, from, to int64) []wireRecord {
	var out []wireRecord
	for i := from; i <= to; i++ {
		out = append(out, wireRecord{Host: host, Index: i, Header: []byte(fmt.Sprintf(`{"i":%d}`, i)), Body: []byte(fmt.Sprintf("sealed %d \x00\xff", i))})
	}
	return out
}

func batch(recs []wireRecord) map[string]any { return map[string]any{"records": recs} }

// push posts recs as token and decodes a 200 answer.
func (e *env) push(token string, recs []wireRecord) pushAnswer {
	e.t.Helper()
	resp, b := e.request("POST", "/api/v1/sync/records", token, batch(recs))
	if resp.StatusCode != 200 {
		e.t.Fatalf("push %d records: %d %s", len(recs), resp.StatusCode, b)
	}
	var out pushAnswer
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatalf("push answer %s: %v", b, err)
	}
	return out
}

func (e *env) page(token, host string, after int64, limit int) pageAnswer {
	e.t.Helper()
	var out pageAnswer
	e.getJSON(fmt.Sprintf("/api/v1/sync/records?host=%s&after=%d&limit=%d", host, after, limit), token, &out)
	return out
}

// Every sync endpoint needs a token, as the rest of the API does.
func TestSyncNeedsToken(t *testing.T) {
	e := newEnv(t)
	host := loom.NewID()
	for _, tc := range []struct{ method, path, token string }{
		{"GET", "/api/v1/sync/hosts", ""},
		{"GET", "/api/v1/sync/records?host=" + host, ""},
		{"POST", "/api/v1/sync/records", ""},
		{"GET", "/api/v1/sync/hosts", "loom_nope"},
		{"POST", "/api/v1/sync/records", "loom_nope"},
	} {
		var body any
		if tc.method == "POST" {
			body = batch(wireRecs(host, 1, 1))
		}
		resp, b := e.request(tc.method, tc.path, tc.token, body)
		wantError(t, tc.method+" "+tc.path, resp, b, 401, "unauthorized")
		if resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s: 401 without WWW-Authenticate", tc.method, tc.path)
		}
	}
	if hosts, err := e.st.SyncHosts(context.Background(), "alice"); err != nil || len(hosts) != 0 {
		t.Fatalf("a push without a token stored %+v, %v", hosts, err)
	}
	resp, b := e.request("PUT", "/api/v1/sync/records", e.alice, "{}")
	wantError(t, "PUT", resp, b, 405, "method_not_allowed")
	if allow := resp.Header.Get("Allow"); allow != "GET, POST" {
		t.Errorf("Allow: %q", allow)
	}
}

// A push and a pull round trip records byte for byte; pushing again
// stores nothing; a different record is 409 and a gap 400, both storing
// nothing of their batch; another user sees none of it.
func TestSyncRoundTrip(t *testing.T) {
	e := newEnv(t)
	h1, h2 := loom.NewID(), loom.NewID()
	recs := append(wireRecs(h1, 1, 30), wireRecs(h2, 1, 2)...)
	recs[3].Header = nil
	got := e.push(e.alice, recs)
	if got.Stored != 32 || got.Last[h1] != 30 || got.Last[h2] != 2 || len(got.Last) != 2 {
		t.Fatalf("push answered %+v", got)
	}

	var pulled []wireRecord
	for after := int64(0); ; {
		p := e.page(e.alice, h1, after, 12)
		pulled = append(pulled, p.Records...)
		if !p.More {
			break
		}
		if len(p.Records) != 12 {
			t.Fatalf("a page before the last holds %d records", len(p.Records))
		}
		after = p.Records[len(p.Records)-1].Index
	}
	if len(pulled) != 30 {
		t.Fatalf("pulled %d records of h1, want 30", len(pulled))
	}
	for i, r := range pulled {
		w := recs[i]
		if r.Host != h1 || r.Index != w.Index || !bytes.Equal(r.Header, w.Header) || !bytes.Equal(r.Body, w.Body) || r.ReceivedAt == "" {
			t.Fatalf("record %d pulled as %+v, pushed as %+v", i+1, r, w)
		}
	}
	if p := e.page(e.alice, h1, 30, 10); len(p.Records) != 0 || p.More {
		t.Errorf("after the last record: %+v", p)
	}

	var hosts hostsAnswer
	e.getJSON("/api/v1/sync/hosts", e.alice, &hosts)
	if len(hosts.Hosts) != 2 || hosts.Hosts[0].Host != h1 || hosts.Hosts[0].Last != 30 || hosts.Hosts[0].Records != 30 || hosts.Hosts[0].UpdatedAt == "" || hosts.Hosts[1].Last != 2 {
		t.Fatalf("hosts: %+v", hosts)
	}

	// Idempotent: the same batch again, and a resumed push that overlaps.
	if got := e.push(e.alice, recs); got.Stored != 0 || got.Last[h1] != 30 {
		t.Errorf("the same push again answered %+v", got)
	}
	if got := e.push(e.alice, wireRecs(h2, 2, 4)); got.Stored != 2 || got.Last[h2] != 4 || len(got.Last) != 1 {
		t.Errorf("an overlapping push answered %+v", got)
	}

	other := wireRecs(h1, 5, 5)
	other[0].Header = append([]byte(nil), other[0].Header...)
	other[0].Header[len(other[0].Header)-1] ^= 1
	resp, b := e.request("POST", "/api/v1/sync/records", e.alice, batch(append(wireRecs(h2, 5, 5), other...)))
	wantError(t, "conflict", resp, b, 409, "conflict")
	if !strings.Contains(string(b), h1) {
		t.Errorf("conflict does not name the host: %s", b)
	}
	resp, b = e.request("POST", "/api/v1/sync/records", e.alice, batch(wireRecs(h2, 5, 5)))
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"stored":1`) {
		t.Errorf("record 5 of h2 after the refused batch: %d %s", resp.StatusCode, b)
	}
	// A gap refuses the whole batch: h2's record 6, which follows its
	// last, is not stored either.
	resp, b = e.request("POST", "/api/v1/sync/records", e.alice, batch(append(wireRecs(h2, 6, 6), wireRecs(h1, 32, 33)...)))
	wantError(t, "gap", resp, b, 400, "invalid")
	if !strings.Contains(string(b), "has records up to 30; record 32 would leave a gap") {
		t.Errorf("gap refused with %s", b)
	}
	held, err := e.st.SyncHosts(context.Background(), "alice")
	if i := slices.IndexFunc(held, func(x loom.SyncHost) bool { return x.Host == h2 }); err != nil || i < 0 || held[i].Last != 5 {
		t.Errorf("after the refused gap, hosts = %+v, %v; want h2 at 5", held, err)
	}

	// Bob sees none of alice's records, and his own log of the same
	// host id is his.
	e.getJSON("/api/v1/sync/hosts", e.bob, &hosts)
	if len(hosts.Hosts) != 0 {
		t.Fatalf("bob's hosts: %+v", hosts)
	}
	if p := e.page(e.bob, h1, 0, 10); len(p.Records) != 0 || p.More {
		t.Fatalf("bob reads alice's records: %+v", p)
	}
	if got := e.push(e.bob, []wireRecord{{Host: h1, Index: 1, Body: []byte("bob's")}}); got.Stored != 1 || got.Last[h1] != 1 {
		t.Fatalf("bob's push answered %+v", got)
	}
	if p := e.page(e.alice, h1, 0, 1); string(p.Records[0].Body) != string(recs[0].Body) || !p.More {
		t.Fatalf("alice's record 1 after bob's push: %+v", p)
	}
}

// Malformed requests are 400, oversized ones 413, and nothing of them is
// stored.
func TestSyncRefusals(t *testing.T) {
	e := newEnv(t)
	host := loom.NewID()
	good := `{"host":"` + host + `","index":1,"body":"eA=="}`
	for _, tc := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"not JSON", `{"records":[`, 400, "invalid"},
		{"empty", ``, 400, "invalid"},
		{"an array", `[]`, 400, "invalid"},
		{"records not an array", `{"records":{}}`, 400, "invalid"},
		{"unknown field", `{"records":[],"hosts":[]}`, 400, "invalid"},
		{"records twice", `{"records":[],"records":[]}`, 400, "invalid"},
		{"unknown record field", `{"records":[{"host":"` + host + `","index":1,"body":"eA==","type":"m"}]}`, 400, "invalid"},
		{"received_at", `{"records":[{"host":"` + host + `","index":1,"body":"eA==","received_at":"2026-01-01T00:00:00Z"}]}`, 400, "invalid"},
		{"not base64", `{"records":[{"host":"` + host + `","index":1,"body":"not base64!"}]}`, 400, "invalid"},
		{"two objects", `{"records":[` + good + `]} {}`, 400, "invalid"},
		{"host not a UUID", `{"records":[{"host":"laptop","index":1,"body":"eA=="}]}`, 400, "invalid"},
		{"index 0", `{"records":[{"host":"` + host + `","index":0,"body":"eA=="}]}`, 400, "invalid"},
		{"no body", `{"records":[{"host":"` + host + `","index":1}]}`, 400, "invalid"},
		{"1001 records", `{"records":[` + strings.Repeat(good+",", loom.MaxSyncBatch) + good + `]}`, 413, "too_large"},
		{"large header", `{"records":[{"host":"` + host + `","index":1,"body":"eA==","header":"` + base64.StdEncoding.EncodeToString(make([]byte, loom.MaxSyncHeader+1)) + `"}]}`, 413, "too_large"},
		{"large body", `{"records":[{"host":"` + host + `","index":1,"body":"` + base64.StdEncoding.EncodeToString(make([]byte, loom.MaxSyncBody+1)) + `"}]}`, 413, "too_large"},
	} {
		resp, b := e.request("POST", "/api/v1/sync/records", e.alice, tc.body)
		wantError(t, tc.name, resp, b, tc.status, tc.code)
	}
	for _, q := range []string{"", "host=laptop", "host=" + host + "&after=-1", "host=" + host + "&after=x", "host=" + host + "&limit=0", "host=" + host + "&limit=1001"} {
		resp, b := e.request("GET", "/api/v1/sync/records?"+q, e.alice, nil)
		wantError(t, "GET ?"+q, resp, b, 400, "invalid")
	}

	// A batch over the store's bytes, in a body within the request's
	// limit: four records of 16 MiB and one of 512 KiB.
	var big []wireRecord
	for i := range int64(5) {
		big = append(big, wireRecord{Host: host, Index: i + 1, Body: make([]byte, loom.MaxSyncBody)})
	}
	big[4].Body = big[4].Body[:512<<10]
	resp, b := e.request("POST", "/api/v1/sync/records", e.alice, batch(big))
	wantError(t, "a batch of 64.5 MiB", resp, b, 413, "too_large")
	if !strings.Contains(string(b), "a batch holds at most 67108864 bytes") {
		t.Errorf("a batch of 64.5 MiB refused with %s", b)
	}

	// A body over the request limit, as sent and as decompressed.
	huge := `{"records":[{"host":"` + host + `","index":1,"body":"` + strings.Repeat("A", 90<<20) + `"}]}`
	resp, b = e.request("POST", "/api/v1/sync/records", e.alice, huge)
	wantError(t, "a body of 90 MiB", resp, b, 413, "too_large")
	if !strings.Contains(string(b), "request body is too large") {
		t.Errorf("a body of 90 MiB refused with %s", b)
	}
	enc, _ := zstd.NewWriter(nil)
	resp = e.send("POST", "/api/v1/sync/records", e.alice, enc.EncodeAll([]byte(huge), nil), http.Header{"Content-Encoding": {"zstd"}})
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	wantError(t, "a zstd body of 90 MiB", resp, b, 413, "too_large")
	// zstd is the one encoding a push may be in: what loom sync sends.
	for _, enc := range []string{"br", "gzip"} {
		resp = e.send("POST", "/api/v1/sync/records", e.alice, good, http.Header{"Content-Encoding": {enc}})
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		wantError(t, enc, resp, b, 400, "invalid")
		if !strings.Contains(string(b), "send zstd or none") {
			t.Errorf("Content-Encoding %s refused with %s", enc, b)
		}
	}

	if hosts, err := e.st.SyncHosts(context.Background(), "alice"); err != nil || len(hosts) != 0 {
		t.Fatalf("refused pushes stored %+v, %v", hosts, err)
	}
}

// Pushes and pages travel compressed with zstd when the client asks, as
// loom sync does: a push's body as Content-Encoding says, a page as
// Accept-Encoding allows; a client that does not accept zstd gets JSON
// as it is.
func TestSyncCompression(t *testing.T) {
	e := newEnv(t)
	host := loom.NewID()
	recs := wireRecs(host, 1, 50)
	j, _ := json.Marshal(batch(recs[:25]))
	enc, _ := zstd.NewWriter(nil)
	resp := e.send("POST", "/api/v1/sync/records", e.alice, enc.EncodeAll(j, nil), http.Header{"Content-Encoding": {"zstd"}})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"stored":25`) {
		t.Fatalf("zstd push: %d %s", resp.StatusCode, b)
	}
	j, _ = json.Marshal(batch(recs[25:]))
	resp = e.send("POST", "/api/v1/sync/records", e.alice, j, http.Header{"Content-Encoding": {"identity"}})
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"stored":25`) {
		t.Fatalf("identity push: %d %s", resp.StatusCode, b)
	}

	path := "/api/v1/sync/records?host=" + host
	for _, tc := range []struct{ accept, want string }{
		{"zstd", "zstd"}, {"gzip, zstd;q=0.5", "zstd"}, {"ZSTD", "zstd"}, {"gzip", ""}, {"br, gzip;q=1.0", ""},
		{"zstd;q=0, gzip", ""}, {"identity", ""}, {"", ""},
	} {
		resp := e.send("GET", path, e.alice, nil, http.Header{"Accept-Encoding": {tc.accept}})
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get("Content-Encoding"); resp.StatusCode != 200 || got != tc.want {
			t.Fatalf("Accept-Encoding %q: %d, Content-Encoding %q, want %q", tc.accept, resp.StatusCode, got, tc.want)
		}
		var plain []byte
		switch tc.want {
		case "zstd":
			dec, _ := zstd.NewReader(nil)
			plain, _ = dec.DecodeAll(raw, nil)
			dec.Close()
		default:
			plain = raw
		}
		var p pageAnswer
		if err := json.Unmarshal(plain, &p); err != nil || len(p.Records) != 50 || !bytes.Equal(p.Records[49].Body, recs[49].Body) {
			t.Fatalf("Accept-Encoding %q: %d records, %v", tc.accept, len(p.Records), err)
		}
	}
}

// The hub's database holds records sealed on the client: a word of a
// payload is nowhere in its files, while the header, which the client
// keeps in the clear, is.
func TestSyncHubSeesCiphertextOnly(t *testing.T) {
	e := newEnv(t)
	key, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	host := loom.NewID()
	var recs []wireRecord
	for i := int64(1); i <= 20; i++ {
		header := []byte(fmt.Sprintf(`{"type":"message","marker":"openheader%d"}`, i))
		body, err := envelope.Seal(key, header, []byte(fmt.Sprintf("the assistant said: lighthousekeeper%d is the secret word, lighthousekeeper%d", i, i)))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, wireRecord{Host: host, Index: i, Header: header, Body: body})
	}
	if got := e.push(e.alice, recs); got.Stored != 20 {
		t.Fatalf("push answered %+v", got)
	}
	// The pulled record opens with the key on another machine.
	p := e.page(e.alice, host, 0, 1)
	plain, err := envelope.Open(key, p.Records[0].Header, p.Records[0].Body)
	if err != nil || !strings.Contains(string(plain), "lighthousekeeper1 ") {
		t.Fatalf("the pulled record opens to %q, %v", plain, err)
	}

	// Every file of the database: the main file and its WAL.
	files, _ := filepath.Glob(e.dbPath + "*")
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if !bytes.Contains(all, []byte("openheader20")) {
		t.Fatalf("the header is not in %v: the check reads nothing the hub wrote", files)
	}
	if bytes.Contains(all, []byte("lighthousekeeper")) {
		t.Fatalf("a payload's plaintext is in the hub's database %v", files)
	}
}

// A user runs at most two pushes at once: a third is 429 with
// Retry-After while the two are reading their bodies.
func TestSyncPushLimit(t *testing.T) {
	e := newEnv(t)
	host := loom.NewID()
	type held struct {
		w    *io.PipeWriter
		done chan *http.Response
	}
	var open []held
	for range 2 {
		pr, pw := io.Pipe()
		req, _ := http.NewRequest("POST", e.ts.URL+"/api/v1/sync/records", pr)
		req.Header.Set("Authorization", "Bearer "+e.alice)
		h := held{w: pw, done: make(chan *http.Response, 1)}
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
			}
			h.done <- resp
		}()
		// The server reads a body only once the push has its place: when
		// more whitespace than the connection buffers is taken, the push
		// holds it.
		io.WriteString(pw, `{"records":[`)
		pw.Write(bytes.Repeat([]byte{' '}, 32<<20))
		open = append(open, h)
	}
	// A third from alice is refused; bob's goes through.
	resp, b := e.request("POST", "/api/v1/sync/records", e.alice, batch(wireRecs(loom.NewID(), 1, 1)))
	wantError(t, "a third push", resp, b, 429, "too_many_requests")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	e.push(e.bob, wireRecs(host, 1, 1))
	for i, h := range open {
		fmt.Fprintf(h.w, `{"host":%q,"index":%d,"body":"eA=="}]}`, host, i+1)
		h.w.Close()
		r := <-h.done
		if r == nil || r.StatusCode != 200 {
			t.Fatalf("held push %d: %v", i, r)
		}
		r.Body.Close()
	}
	if got := e.push(e.alice, wireRecs(host, 3, 3)); got.Stored != 1 {
		t.Fatalf("a push after the held ones answered %+v", got)
	}
}

// The hub knows the key a user's records are sealed with (the first it
// received) and says so; a record sealed with another is refused (409)
// with what to run, and nothing of its batch is stored. Another user
// has a key of their own.
func TestSyncOneKeyPerUser(t *testing.T) {
	e := newEnv(t)
	sealed := func(host string, i int64, key string) wireRecord {
		h := synclog.Header{Host: synclog.HostID(host), Index: i, HLC: synclog.HLC(i << 16), KeyID: key}
		b, err := h.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return wireRecord{Host: host, Index: i, Header: b, Body: []byte("sealed")}
	}
	keyOf := func(token string) string {
		var out hostsAnswer
		e.getJSON("/api/v1/sync/hosts", token, &out)
		return out.KeyID
	}
	if k := keyOf(e.alice); k != "" {
		t.Fatalf("key before any record = %q", k)
	}
	h1, h2 := loom.NewID(), loom.NewID()
	e.push(e.alice, []wireRecord{sealed(h1, 1, "00000000000000a1"), sealed(h1, 2, "00000000000000a1")})
	if k := keyOf(e.alice); k != "00000000000000a1" {
		t.Fatalf("alice's key = %q", k)
	}
	resp, b := e.request("POST", "/api/v1/sync/records", e.alice, batch([]wireRecord{sealed(h2, 1, "00000000000000a1"), sealed(h2, 2, "00000000000000b2")}))
	wantError(t, "another key", resp, b, 409, "conflict")
	if !strings.Contains(string(b), "loom sync key --set") || !strings.Contains(string(b), "00000000000000b2") {
		t.Errorf("the refusal does not say what to run: %s", b)
	}
	if got := e.push(e.alice, []wireRecord{sealed(h2, 1, "00000000000000a1")}); got.Stored != 1 {
		t.Errorf("h2's first record after the refusal: %+v", got)
	}
	e.push(e.bob, []wireRecord{sealed(h2, 1, "00000000000000b2")})
	if k := keyOf(e.bob); k != "00000000000000b2" {
		t.Errorf("bob's key = %q", k)
	}
}
