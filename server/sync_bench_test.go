package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/sqlite"
)

// BenchmarkSyncInitial is the hub's side of an initial sync of 100,000
// messages: one host pushes its log in batches of 1,000 records, then
// another pulls it page by page, over a real listener into a SQLite
// store. Records are messages of 50 to 800 bytes of text in about as
// much JSON, sealed, with a small header. Each encoding is how the
// pushes' bodies and the pages travel.
func BenchmarkSyncInitial(b *testing.B) {
	const records, perBatch = 100_000, 1000
	key, err := envelope.NewKey()
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	host := loom.NewID()
	var batches [][]byte
	var size int64
	for from := 1; from <= records; from += perBatch {
		var recs []wireRecord
		for i := from; i < from+perBatch; i++ {
			header := []byte(fmt.Sprintf(`{"t":"message","s":"%s","hlc":%d}`, host, i))
			body, err := envelope.Seal(key, header, bytes.Repeat([]byte("x"), 150+rng.IntN(1500)))
			if err != nil {
				b.Fatal(err)
			}
			size += int64(len(header) + len(body))
			recs = append(recs, wireRecord{Host: host, Index: int64(i), Header: header, Body: body})
		}
		j, _ := json.Marshal(batch(recs))
		batches = append(batches, j)
	}
	for _, enc := range []string{"identity", "zstd"} {
		b.Run(enc, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				b.StopTimer()
				url, token := newHub(b)
				b.StartTimer()
				syncRun(b, url, token, batches, enc, records)
			}
		})
	}
}

// newHub starts a server on a fresh SQLite store and returns its URL and
// a token.
func newHub(b *testing.B) (string, string) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "hub.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ts := httptest.NewServer(server.New(server.Config{Store: st, Tokens: st}))
	b.Cleanup(ts.Close)
	_, token, err := st.CreateToken(context.Background(), "alice", "bench", 0)
	if err != nil {
		b.Fatal(err)
	}
	return ts.URL, token
}

// syncRun pushes batches and pulls them back, checking the count.
func syncRun(b *testing.B, url, token string, batches [][]byte, enc string, records int) {
	start := time.Now()
	zenc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	// do sends a request as the token's user, with enc in header when
	// it is not identity.
	do := func(method, url string, body []byte, header string) *http.Response {
		req, _ := http.NewRequest(method, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if header != "" && enc != "identity" {
			req.Header.Set(header, enc)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
	for _, j := range batches {
		body := j
		switch enc {
		case "zstd":
			body = zenc.EncodeAll(j, nil)
		}
		resp := do("POST", url+"/api/v1/sync/records", body, "Content-Encoding")
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("push: %d", resp.StatusCode)
		}
	}
	pushed := time.Now()
	var hosts hostsAnswer
	resp := do("GET", url+"/api/v1/sync/hosts", nil, "")
	err := json.NewDecoder(resp.Body).Decode(&hosts)
	resp.Body.Close()
	if err != nil || len(hosts.Hosts) != 1 {
		b.Fatalf("hosts: %+v, %v", hosts, err)
	}
	host := hosts.Hosts[0].Host
	pulled := 0
	zdec, _ := zstd.NewReader(nil)
	defer zdec.Close()
	for after := int64(0); ; {
		resp := do("GET", fmt.Sprintf("%s/api/v1/sync/records?host=%s&after=%d", url, host, after), nil, "Accept-Encoding")
		var rd io.Reader = resp.Body
		switch resp.Header.Get("Content-Encoding") {
		case "zstd":
			zdec.Reset(resp.Body)
			rd = zdec
		}
		var p pageAnswer
		if err := json.NewDecoder(rd).Decode(&p); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		pulled += len(p.Records)
		if !p.More {
			break
		}
		after = p.Records[len(p.Records)-1].Index
	}
	if pulled != records {
		b.Fatalf("pulled %d records, want %d", pulled, records)
	}
	b.ReportMetric(pushed.Sub(start).Seconds(), "push-s")
	b.ReportMetric(time.Since(pushed).Seconds(), "pull-s")
}
