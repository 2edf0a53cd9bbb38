package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// hostileUser owns the long messages the hostile searches match, apart
// from the workload's user so that its searches do not find them.
const hostileUser = "bench-hostile"

// hostileLimit is the budget of every hostile search: it returns, or is
// refused, within a second.
const hostileLimit = 1000.0 // ms

// hostileSearch is a query that once cost without bound: the length or
// repetition of what was typed, words too common together, a very long
// message to cut a snippet from.
type hostileSearch struct {
	name string
	q    loom.SearchQuery
}

// hostileSearches measures each hostile search on st: the slowest of a
// few runs, what it gave (hits or a refusal), and the most the process's
// resident memory grew while it ran.
func hostileSearches(ctx context.Context, st *sqlite.Store, user string) ([]result, error) {
	long, err := hostileFixture(ctx, st)
	if err != nil {
		return nil, err
	}
	common := vocabulary[:32]
	var pairs strings.Builder
	for i := 0; i+1 < 32; i += 2 {
		fmt.Fprintf(&pairs, `"%s %s" `, common[i], common[i+1])
	}
	words := strings.Fields(long)
	some := strings.Join(vocabulary[:8], " ") + " "
	searches := []hostileSearch{
		{"2,000 words matching a long message", loom.SearchQuery{Text: strings.Join(words[:2000], " "), UserID: hostileUser}},
		{"8,000 words matching a long message", loom.SearchQuery{Text: strings.Join(words[:8000], " "), UserID: hostileUser}},
		{"16,000 words matching a long message", loom.SearchQuery{Text: strings.Join(words[:16000], " "), UserID: hostileUser}},
		{"a 36 KB query (API)", loom.SearchQuery{Text: strings.Repeat(some, 36<<10/len(some)), UserID: user}},
		{"a 687 KB search: prompt (agent tool)", loom.SearchQuery{Text: strings.Repeat(some, 687<<10/len(some)), UserID: user}},
		{"1 KB of repeated words matching a 20 MB message", loom.SearchQuery{Text: strings.Repeat(some, loom.MaxQueryBytes/len(some)), UserID: hostileUser}},
		{"32 common words matching a 20 MB message", loom.SearchQuery{Text: strings.Join(common, " "), UserID: hostileUser}},
		{"a word at the start of a 20 MB message", loom.SearchQuery{Text: "zyzzogetonstart", UserID: hostileUser}},
		{"a word at the end of a 20 MB message", loom.SearchQuery{Text: "zyzzogetonend", UserID: hostileUser}},
		{"32 common words", loom.SearchQuery{Text: strings.Join(common, " "), UserID: user}},
		{"16 phrases of two common words", loom.SearchQuery{Text: pairs.String(), UserID: user}},
		{"4 phrases of two common words", loom.SearchQuery{Text: strings.Join(strings.SplitAfterN(pairs.String(), `" `, 5)[:4], ""), UserID: user}},
		{"a rare word and 31 common ones", loom.SearchQuery{Text: RareWord + " " + strings.Join(common[:31], " "), UserID: user}},
		{"raw: one-letter prefix a*", loom.SearchQuery{Text: "a*", Raw: true, UserID: user}},
		{"raw: prefix the*", loom.SearchQuery{Text: "the*", Raw: true, UserID: user}},
		{"raw: 16 three-letter prefixes", loom.SearchQuery{Text: "the* and* for* tha* wit* thi* are* fro* hav* whi* you* can* wil* one* has* but*", Raw: true, UserID: user}},
	}
	var rows []result
	for _, h := range searches {
		rows = append(rows, measureHostile(ctx, st, h))
		fmt.Fprintf(os.Stderr, "measured hostile search: %s\n", h.name)
	}
	return rows, nil
}

func measureHostile(ctx context.Context, st *sqlite.Store, h hostileSearch) result {
	r := result{op: "hostile search: " + h.name, budget: "returns or refused ≤ 1 s", limit: hostileLimit, hostile: true}
	runtime.GC()
	base := residentKB()
	for range 3 {
		resetPeak()
		t0 := time.Now()
		hits, err := st.Search(ctx, h.q)
		r.loom = append(r.loom, time.Since(t0))
		if p := peakKB(); p > base {
			r.peakKB = max(r.peakKB, p-base)
		}
		switch {
		case loom.ErrorCode(err) == loom.EINVALID:
			r.outcome = "refused: " + loom.ErrorMessage(err)
		case err != nil:
			r.note = "error: " + err.Error()
			return r
		default:
			r.outcome = fmt.Sprintf("%d hits", len(hits))
		}
	}
	return r
}

// hostileFixture stores, once, hostileUser's session: a message of
// 16,000 workload words, whose words the longest queries are, and one of
// 20 MB with a rare word at each end. It returns the first message.
func hostileFixture(ctx context.Context, st *sqlite.Store) (string, error) {
	g := newGenerator(99)
	var w strings.Builder
	for i := range 16000 {
		if i > 0 {
			w.WriteByte(' ')
		}
		w.WriteString(g.word())
	}
	var n int
	if err := st.DB().QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE user_id = ?`, hostileUser).Scan(&n); err != nil || n > 0 {
		return w.String(), err
	}
	var big strings.Builder
	big.WriteString("zyzzogetonstart ")
	for big.Len() < 20<<20 {
		big.WriteString(g.word())
		big.WriteByte(' ')
	}
	big.WriteString("zyzzogetonend")
	s := &loom.Session{ID: loom.NewID(), UserID: hostileUser, Key: "cli:hostile"}
	return w.String(), st.Append(ctx, s, textMsg(w.String()), textMsg(big.String()))
}

// resetPeak resets the process's peak resident memory (Linux; elsewhere
// it does nothing and the peak is the process's whole life's).
func resetPeak() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func residentKB() uint64 { return procStatus("VmRSS:") }

func peakKB() uint64 { return procStatus("VmHWM:") }

// procStatus reads a figure in kB from /proc/self/status, 0 when there
// is none.
func procStatus(field string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == field {
			n, _ := strconv.ParseUint(f[1], 10, 64)
			return n
		}
	}
	return 0
}
