package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// Load: 50 clients each run 20 turns through POST /api/v1/messages, each
// on its own key, against the fake provider, while 20 readers poll lists
// and searches. Nothing may fail, and every session must hold exactly
// its turns: seq 1…40 without a gap, each prompt once, in order.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	const (
		clients = 50
		turns   = 20
		readers = 20
		users   = 5
	)
	e := newEnv(t)
	tokens := make([]string, users)
	for i := range tokens {
		_, sec, err := e.st.CreateToken(context.Background(), fmt.Sprintf("user%d", i), "load", 0)
		if err != nil {
			t.Fatal(err)
		}
		tokens[i] = sec
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients + readers}, Timeout: time.Minute}

	post := func(token, key, text string) (string, error) {
		req, _ := http.NewRequest("POST", e.ts.URL+"/api/v1/messages", strings.NewReader(fmt.Sprintf(`{"key":%q,"text":%q}`, key, text)))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			return "", fmt.Errorf("status %d: %s", resp.StatusCode, b)
		}
		var done string
		for ev := range readEvents(resp.Body) {
			switch ev.Event {
			case "error":
				return "", fmt.Errorf("error event: %s", ev.Data)
			case "done":
				done = ev.Data
			}
		}
		if done == "" {
			return "", fmt.Errorf("stream ended without done")
		}
		var d struct {
			SessionID string `json:"session_id"`
		}
		json.Unmarshal([]byte(done), &d)
		return d.SessionID, nil
	}

	var (
		mu        sync.Mutex
		turnLat   []time.Duration
		readLat   []time.Duration
		errs      []error
		sessionOf = map[int]string{}
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	stopReaders := make(chan struct{})
	var readersWG sync.WaitGroup
	reads := 0
	for r := range readers {
		readersWG.Add(1)
		go func() {
			defer readersWG.Done()
			paths := []string{"/api/v1/sessions?limit=50", "/api/v1/search?q=turn&limit=20", "/api/v1/sessions?surface=load&limit=20", "/api/v1/search?q=%22client+7%22"}
			for i := 0; ; i++ {
				select {
				case <-stopReaders:
					return
				default:
				}
				req, _ := http.NewRequest("GET", e.ts.URL+paths[(r+i)%len(paths)], nil)
				req.Header.Set("Authorization", "Bearer "+tokens[r%users])
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					fail(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				d := time.Since(start)
				if resp.StatusCode != 200 {
					fail(fmt.Errorf("reader: %s: %d: %s", req.URL.RequestURI(), resp.StatusCode, body))
					return
				}
				mu.Lock()
				readLat = append(readLat, d)
				reads++
				mu.Unlock()
				time.Sleep(100 * time.Millisecond) // a reader polls ten times a second
			}
		}()
	}

	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := tokens[c%users]
			key := fmt.Sprintf("load:client-%d", c)
			for i := range turns {
				t0 := time.Now()
				sid, err := post(token, key, fmt.Sprintf("client %d turn %d", c, i))
				if err != nil {
					fail(fmt.Errorf("client %d turn %d: %w", c, i, err))
					return
				}
				mu.Lock()
				turnLat = append(turnLat, time.Since(t0))
				if prev, ok := sessionOf[c]; ok && prev != sid {
					errs = append(errs, fmt.Errorf("client %d: turn %d went to session %s, not %s", c, i, sid, prev))
				}
				sessionOf[c] = sid
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopReaders)
	readersWG.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) > 0 {
		t.FailNow()
	}

	// Every session holds its 20 turns exactly: seq 1…40 without gaps,
	// prompts in order, each answered once.
	for c := range clients {
		msgs, err := e.st.Messages(context.Background(), sessionOf[c], loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 2*turns {
			t.Errorf("client %d: %d messages, want %d", c, len(msgs), 2*turns)
			continue
		}
		for i, m := range msgs {
			if m.Seq != int64(i+1) {
				t.Errorf("client %d: message %d has seq %d", c, i, m.Seq)
				break
			}
			want := fmt.Sprintf("client %d turn %d", c, i/2)
			if i%2 == 0 && (m.Role != "user" || m.Text() != want) {
				t.Errorf("client %d: message %d is %s %q, want user %q", c, m.Seq, m.Role, m.Text(), want)
				break
			}
			if i%2 == 1 && (m.Role != "assistant" || m.Text() != "echo: "+want) {
				t.Errorf("client %d: message %d is %s %q, want the echo of %q", c, m.Seq, m.Role, m.Text(), want)
				break
			}
		}
		s, _ := e.st.Session(context.Background(), sessionOf[c])
		if s.MessageCount != 2*turns || s.TurnCount != turns || s.UserID != fmt.Sprintf("user%d", c%users) || s.Lock != nil {
			t.Errorf("client %d: session %+v", c, s)
		}
	}
	all, _ := e.st.Sessions(context.Background(), loom.SessionFilter{Surface: "load"})
	if len(all) != clients {
		t.Errorf("%d load sessions, want %d", len(all), clients)
	}

	n := clients * turns
	t.Logf("turns: %d in %.1fs = %.0f turns/s (%d concurrent clients); latency p50 %s, p99 %s, max %s",
		n, elapsed.Seconds(), float64(n)/elapsed.Seconds(), clients, pct(turnLat, 50), pct(turnLat, 99), pct(turnLat, 100))
	t.Logf("reads: %d list/search requests by %d readers meanwhile; latency p50 %s, p99 %s, max %s",
		reads, readers, pct(readLat, 50), pct(readLat, 99), pct(readLat, 100))
}

// pct returns the p-th percentile of ds, rounded for reading.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p+99)/100 - 1
	i = max(0, min(i, len(s)-1))
	return s[i].Round(100 * time.Microsecond)
}
