package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/pricing"
	usagereport "github.com/loomhq/loom/report"
	"github.com/loomhq/loom/sqlite"
)

// statuslineMain times `loom usage statusline` as Claude Code runs it, a
// whole process with the status line JSON on stdin, over a store of n
// Claude Code sessions (statusline.db in dir, generated once and
// reused), beside floor/sqlread statusline: the same figures (the
// session's cost, today's, the last five hours') read from the same
// roll-up by the plainest SQL, in a program that does nothing else.
func statuslineMain(ctx context.Context, w io.Writer, dir string, n, runs int, loomBin string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "statusline.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	var have int
	if err := st.DB().QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&have); err != nil {
		return err
	}
	if have == 0 {
		if err := statuslineFill(ctx, st, n); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(os.Stderr, "statusline: reusing %s (%d sessions; remove it to regenerate)\n", path, have)
	}
	// One more turn now, in the newest session, so that today and the
	// active block have usage whenever the store was generated; then
	// the roll-up is brought up to date, untimed, as the hooks' imports
	// and the reports keep it.
	ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: "bench", Limit: 1})
	if err != nil || len(ss) == 0 {
		return fmt.Errorf("a session to report on: %v", err)
	}
	s := ss[0]
	now := time.Now()
	reply := &loom.Message{Role: loom.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-5", CreatedAt: now,
		Parts: []loom.Part{{Type: loom.PartText, Text: "one more answer"}},
		Usage: loom.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadTokens: 9000, CacheWriteTokens: 2000, CacheWrite1hTokens: 2000, APICalls: 1}}
	if err := st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, CreatedAt: now, Parts: []loom.Part{{Type: loom.PartText, Text: "one more"}}}, reply); err != nil {
		return err
	}
	if _, err := usagereport.Build(ctx, st, usagereport.Options{UserID: "bench", By: usagereport.Day, Since: now.Add(-time.Hour)}); err != nil {
		return err
	}
	if _, err := st.DB().ExecContext(ctx, `ANALYZE`); err != nil {
		return err
	}
	st.Close()
	bins, err := buildPrograms(ctx, dir, loomBin, "sqlread")
	if err != nil {
		return err
	}
	env := append(os.Environ(), "LOOM_DB="+path, "LOOM_USER=bench", "LOOM_HOME="+dir, "NO_COLOR=1")
	// The payload names the running session's file, as Claude Code's
	// does: a session of today that the first, untimed run imports and
	// every timed run finds unchanged (one stat), as between two turns.
	sid := "5b1f3c2e-8d4a-4f6b-9c7e-" + fmt.Sprintf("%012d", now.UnixNano()%1e12)
	transcript := filepath.Join(dir, "statusline-transcript", sid+".jsonl")
	if err := writeTranscript(transcript, sid, now); err != nil {
		return err
	}
	payload := []byte(`{"session_id":"` + sid + `","transcript_path":` + strconv.Quote(transcript) +
		`,"model":{"id":"claude-sonnet-4-5","display_name":"Sonnet 4.5"},"version":"2.1.330",` +
		`"cost":{"total_cost_usd":0.5},"context_window":{"context_window_size":200000,"remaining_percentage":77}}`)

	var line string
	run := func(bin string, args ...string) func(context.Context) (procRun, error) {
		return func(ctx context.Context) (procRun, error) {
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env, cmd.Stdin = env, bytes.NewReader(payload)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			t0 := time.Now()
			err := cmd.Run()
			wall := time.Since(t0)
			if err != nil {
				return procRun{}, fmt.Errorf("%s: %v: %s", filepath.Base(bin), err, errOut.Bytes())
			}
			if (filepath.Base(bin) == "proc-loom" || bin == loomBin) && args[0] == "usage" {
				line = strings.TrimSpace(out.String())
			}
			return usageOf(cmd.ProcessState, wall), nil
		}
	}
	lr, fr, err := pairs(ctx, runs, run(bins["loom"], "usage", "statusline"), run(bins["sqlread"], "statusline", path, "bench"))
	if err != nil {
		return err
	}
	// loom version in the same run: what a loom process costs before
	// any command's work, on this machine at this load.
	_, vr, err := pairs(ctx, runs, run(bins["loom"], "usage", "statusline"), run(bins["loom"], "version"))
	if err != nil {
		return err
	}
	vw, vc := stat(vr, func(r procRun) time.Duration { return r.wall }), stat(vr, func(r procRun) time.Duration { return r.cpu })
	lw, fw := stat(lr, func(r procRun) time.Duration { return r.wall }), stat(fr, func(r procRun) time.Duration { return r.wall })
	lc, fc := stat(lr, func(r procRun) time.Duration { return r.cpu }), stat(fr, func(r procRun) time.Duration { return r.cpu })
	met := "missed"
	if lw[1] < 50*time.Millisecond {
		met = "met"
	}
	fmt.Fprintf(w, "`loom usage statusline` over %d Claude Code sessions, as whole processes, %d runs each timed in pairs (the order alternating, after one untimed pair); %s, %d cores, %s; loadavg %s.\n\n",
		have+max(n*boolInt(have == 0), 0), runs, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version(), loadAvg())
	fmt.Fprintln(w, "| command | loom wall min / p50 / max | floor wall min / p50 / max | wall ratio (p50) | CPU p50 loom / floor | budget p50 < 50 ms |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	fmt.Fprintf(w, "| `loom usage statusline` | %s | %s | %.2f× | %s / %s | %s |\n", trio(lw), trio(fw),
		float64(lw[1])/float64(fw[1]), msText(lc[1]), msText(fc[1]), met)
	fmt.Fprintf(w, "| `loom version` (the process alone), beside the same floor | %s | %s | %.2f× | %s / %s | |\n\n", trio(vw), trio(fw),
		float64(vw[1])/float64(fw[1]), msText(vc[1]), msText(fc[1]))
	fmt.Fprintf(w, "The line: %s\n\nThe floor (`floor/sqlread statusline`) reads the payload, opens the store and sums the session's, today's and the last five hours' cost from the roll-up with three queries.\n", line)
	return nil
}

// writeTranscript writes a Claude Code session file of one turn at now,
// the reply's usage with cache writes for an hour.
func writeTranscript(path, sid string, now time.Time) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	at := func(d time.Duration) string { return now.Add(d).UTC().Format("2006-01-02T15:04:05.000Z") }
	lines := `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/projects/bench","sessionId":"` + sid +
		`","version":"2.1.330","type":"user","message":{"role":"user","content":"What changed today?"},"uuid":"u1","timestamp":"` + at(-time.Minute) + `"}` + "\n" +
		`{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/home/dev/projects/bench","sessionId":"` + sid +
		`","version":"2.1.330","type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_bench","type":"message","role":"assistant",` +
		`"content":[{"type":"text","text":"Two files."}],"stop_reason":"end_turn","usage":{"input_tokens":12,"cache_creation_input_tokens":4000,` +
		`"cache_read_input_tokens":30000,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":4000},"output_tokens":250}},` +
		`"requestId":"req_bench","uuid":"a1","timestamp":"` + at(0) + `"}` + "\n"
	return os.WriteFile(path, []byte(lines), 0o600)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// trio writes min / p50 / max in milliseconds.
func trio(d [3]time.Duration) string {
	return msText(d[0]) + " / " + msText(d[1]) + " / " + msText(d[2])
}

func msText(d time.Duration) string { return fmt.Sprintf("%.1f ms", ms(d)) }

// statuslineFill imports n Claude Code sessions of one turn (a prompt
// and a reply with usage, cache writes for an hour among them) over the
// 30 days before now, the newest last, over 50 projects, then brings
// them into the roll-up.
func statuslineFill(ctx context.Context, st *sqlite.Store, n int) error {
	t0 := time.Now()
	projects := benchProjects()
	start := t0.Add(-30 * 24 * time.Hour)
	step := 30 * 24 * time.Hour / time.Duration(n)
	var batch []*loom.SessionData
	for i := range n {
		at := start.Add(time.Duration(i) * step).UTC().Truncate(time.Millisecond)
		id, src := loom.NewID(), fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		p := projects[i%len(projects)]
		u := loom.Usage{InputTokens: int64(10 + i%50), OutputTokens: int64(100 + i%900), CacheReadTokens: int64(20000 + i%9000),
			CacheWriteTokens: int64(1000 + i%3000), CacheWrite1hTokens: int64(1000 + i%3000), APICalls: 1}
		u.CostUSD, _ = pricing.Cost("anthropic", "claude-sonnet-4-5", u)
		done := at.Add(3 * time.Second)
		s := &loom.Session{ID: id, UserID: "bench", Key: "claude-code:" + src, Surface: "claude-code", Kind: loom.KindMain,
			Title: fmt.Sprintf("session %d", i), Project: p, Cwd: p.Root, Model: "claude-sonnet-4-5", Provider: "anthropic",
			CreatedAt: at, UpdatedAt: done, Usage: u, MessageCount: 2, TurnCount: 1}
		msgs := []*loom.Message{
			{ID: loom.NewID(), SessionID: id, Seq: 1, Turn: 1, Role: loom.RoleUser, CreatedAt: at, CompletedAt: &at,
				Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "a question"}}},
			{ID: loom.NewID(), SessionID: id, Seq: 2, Turn: 1, Role: loom.RoleAssistant, Model: "claude-sonnet-4-5", Provider: "anthropic",
				CreatedAt: done, CompletedAt: &done, Usage: u, Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "an answer"}}},
		}
		batch = append(batch, &loom.SessionData{Session: s, Messages: msgs})
		if len(batch) == 500 || i == n-1 {
			if err := st.Import(ctx, batch); err != nil {
				return err
			}
			batch = nil
			fmt.Fprintf(os.Stderr, "\rstatusline: generated %d sessions", i+1)
		}
	}
	fmt.Fprintln(os.Stderr)
	if _, err := usagereport.Build(ctx, st, usagereport.Options{UserID: "bench", By: usagereport.Day}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "statusline: %d sessions generated and rolled up in %.0f s\n", n, time.Since(t0).Seconds())
	return nil
}
