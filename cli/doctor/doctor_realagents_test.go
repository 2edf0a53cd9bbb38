package doctor_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/doctor"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/agentfiles"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// doctorJSON runs loom doctor --json on the real clock with HOME home.
func doctorJSON(t *testing.T, fx *clitest.Fixture, home string, args ...string) doctor.Report {
	t.Helper()
	r := fx.RunWith(t, clitest.RunOpts{Env: map[string]string{"HOME": home}, Before: func(f *cli.Factory) {
		clitest.AllFormats(f)
		f.Now = time.Now
	}}, append([]string{"doctor", "--json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("doctor: exit %d: %s", r.Code, r.Stderr)
	}
	return clitest.DecodeJSON[doctor.Report](t, r.Stdout)
}

// dueNow are the paths of agent's sessions that doctor says are due
// (loom doctor --within 0d: to be deleted at the agent's next clean-up).
func dueNow(t *testing.T, fx *clitest.Fixture, home, agent string) []string {
	t.Helper()
	var out []string
	for _, a := range doctorJSON(t, fx, home, "--within", "0d").Agents {
		if a.Agent != agent {
			continue
		}
		for _, s := range a.AtRisk {
			out = append(out, s.Path)
		}
	}
	slices.Sort(out)
	return out
}

// gone are those of paths that are no longer there.
func gone(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); os.IsNotExist(err) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func days(n float64) time.Time { return time.Now().Add(-time.Duration(n * float64(24*time.Hour))) }

// TestDoctorAgreesWithClaudeCode: the sessions loom doctor says Claude
// Code deletes at its next clean-up are exactly those the real Claude
// Code deletes when it runs one (its background housekeeping, five
// seconds after it starts, once a day: the run is left waiting on the
// model until the clean-up has written its .last-cleanup mark), with
// the default retention and with cleanupPeriodDays set.
func TestDoctorAgreesWithClaudeCode(t *testing.T) {
	t.Parallel()
	bin := agentclitest.Install(t, agentclitest.ClaudeCode)
	sample, err := os.ReadFile(filepath.Join(clitest.Samples, "claude-code", "spotter", "short.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		settings string
		ages     []float64
	}{
		{"default", `{}`, []float64{2, 29.5, 30.5, 45}},
		{"cleanupPeriodDays 10", `{"cleanupPeriodDays": 10}`, []float64{2, 9.5, 10.5, 29}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fx := clitest.NewEmptyFixture(t)
			home := t.TempDir()
			clitest.WriteSettings(t, filepath.Join(home, ".claude", "settings.json"), tc.settings)
			var planted []string
			for i, age := range tc.ages {
				p, err := agentfiles.ClaudeCode(filepath.Join(home, ".claude", "projects"), "-elsewhere-p"+string(rune('0'+i)), sample, tc.name+string(rune('a'+i)), days(age))
				if err != nil {
					t.Fatal(err)
				}
				planted = append(planted, p)
			}
			due := dueNow(t, fx, home, "claude-code")
			if len(due) != 2 {
				t.Fatalf("doctor says %d of %v are due; want the 2 oldest", len(due), tc.ages)
			}

			srv := anthropictest.NewServer()
			t.Cleanup(srv.Close)
			srv.Respond(func(anthropictest.Request) (anthropictest.Reply, bool) {
				return anthropictest.Reply{Text: "thinking it over", Hang: true}, true
			})
			work := filepath.Join(home, "work")
			os.MkdirAll(work, 0o755)
			cmd := exec.Command(bin, "-p", "--model", "claude-sonnet-4-5", "hello")
			cmd.Dir = work
			cmd.Env = agentclitest.Env(home, "ANTHROPIC_BASE_URL="+srv.BaseURL(), "ANTHROPIC_API_KEY=sk-ant-fake",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			mark := filepath.Join(home, ".claude", ".last-cleanup")
			deadline := time.Now().Add(2 * time.Minute)
			for {
				if _, err := os.Stat(mark); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("Claude Code wrote no %s in 2 minutes; files gone: %v", mark, gone(planted))
				}
				time.Sleep(100 * time.Millisecond)
			}
			if got := gone(planted); !slices.Equal(got, due) {
				t.Fatalf("Claude Code deleted %v\nloom doctor said %v", got, due)
			}
		})
	}
}

// TestDoctorAgreesWithGemini: the chats loom doctor says Gemini CLI
// deletes when it next starts in their project are exactly those the
// real Gemini CLI deletes as it starts there, with the default
// retention, with maxAge set, and with maxCount set.
func TestDoctorAgreesWithGemini(t *testing.T) {
	t.Parallel()
	bin := agentclitest.Install(t, agentclitest.Gemini)
	sample, err := os.ReadFile(filepath.Join(clitest.Samples, "gemini", "vibecodingtracker-gemini.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		retention string
		ages      []float64
		due       int
	}{
		{"default", ``, []float64{2, 29.5, 30.5, 45}, 2},
		{"maxAge 10d", `"sessionRetention": {"maxAge": "10d"}, `, []float64{2, 9.5, 10.5, 29}, 2},
		// Its own chat of the first run is the newest.
		{"maxCount 3", `"sessionRetention": {"maxCount": 3}, `, []float64{1, 2, 3, 4, 5}, 3},
		{"maxCount 2", `"sessionRetention": {"maxCount": 2}, `, []float64{1, 2, 3, 4, 5}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fx := clitest.NewEmptyFixture(t)
			g := newGeminiHome(t, tc.retention)
			home := g.home
			run := func() {
				agentclitest.Run(t, clitest.CLITimeout, g.work, g.env, bin, "-m", "gemini-2.5-flash", "-p", "hello")
			}
			// A first run makes the project's directory, with a chat of
			// its own (the newest, kept).
			run()
			chats, _ := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats"))
			if len(chats) != 1 {
				t.Fatalf("Gemini CLI made %d chats directories: %v", len(chats), chats)
			}
			var planted []string
			for i, age := range tc.ages {
				p, err := agentfiles.Gemini(chats[0], sample, tc.name+string(rune('a'+i)), days(age))
				if err != nil {
					t.Fatal(err)
				}
				planted = append(planted, p)
			}
			due := dueNow(t, fx, home, "gemini")
			if len(due) != tc.due {
				t.Fatalf("doctor says %d of %v are due; want %d", len(due), tc.ages, tc.due)
			}
			done := func() bool { return len(gone(planted)) >= len(due) }
			g.cleanedUp.Store(&done)
			run()
			if got := gone(planted); !slices.Equal(got, due) {
				t.Fatalf("Gemini CLI deleted %v\nloom doctor said %v", got, due)
			}
		})
	}
}

// TestDoctorCountsSessionsNotFiles: doctor counts a Gemini CLI
// project's sessions, not its files (an empty chat the agent started,
// a sub-agent's file beside its session are none), and says one day
// as such, not "1 days".
func TestDoctorCountsSessionsNotFiles(t *testing.T) {
	t.Parallel()
	sample, err := os.ReadFile(filepath.Join(clitest.Samples, "gemini", "vibecodingtracker-gemini.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	clitest.WriteSettings(t, filepath.Join(home, ".gemini", "settings.json"), `{"general": {"sessionRetention": {"maxAge": "1d"}}}`)
	chats := filepath.Join(home, ".gemini", "tmp", "0123abcd", "chats")
	for i, age := range []float64{2, 3, 5, 30, 40} {
		if _, err := agentfiles.Gemini(chats, sample, "s"+string(rune('a'+i)), time.Now().Add(-time.Duration(age)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for name, data := range map[string]string{
		// A chat as Gemini CLI starts it: its metadata, no message yet.
		"session-2026-11-27T10-00-feedbeef.jsonl": `{"sessionId":"feedbeef-0000","projectHash":"0123abcd","startTime":"` + now + `","lastUpdated":"` + now + `","kind":"main"}` + "\n",
		// A sub-agent's chat, with a message.
		"session-2026-11-27T10-01-5ab5ab5a.jsonl": `{"sessionId":"5ab5ab5a-0000","projectHash":"0123abcd","startTime":"` + now + `","lastUpdated":"` + now + `","kind":"subagent"}` + "\n" +
			`{"id":"m1","timestamp":"` + now + `","type":"user","content":[{"text":"look"}]}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(chats, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fx := clitest.NewEmptyFixture(t)
	r := fx.RunWith(t, clitest.RunOpts{Env: map[string]string{"HOME": home}, Before: func(f *cli.Factory) {
		clitest.AllFormats(f)
		f.Now = time.Now
	}}, "doctor")
	if r.Code != 0 {
		t.Fatalf("doctor: exit %d: %s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "keeps a session 1 day after") || strings.Contains(r.Stdout, "1 days") || !strings.Contains(r.Stdout, "  5 sessions; ") {
		t.Fatalf("doctor says:\n%s", r.Stdout)
	}
}

// geminiHome is a home for the real Gemini CLI, offline: its settings
// (retention, a general.sessionRetention member with its trailing
// comma, or none), its environment, a project directory, and the
// suite's fake model behind a front that holds each answer until
// cleanedUp (when set) says Gemini CLI's clean-up is done (or 30
// seconds): Gemini CLI cleans up as it starts, beside its first model
// call, and a run of one prompt can end before the clean-up has deleted
// all it chose to (seen on a loaded machine: two of three). The wait
// checks nothing itself.
type geminiHome struct {
	home, work string
	env        []string
	cleanedUp  *atomic.Pointer[func() bool]
}

func newGeminiHome(t *testing.T, retention string) geminiHome {
	t.Helper()
	g := geminiHome{home: t.TempDir(), cleanedUp: new(atomic.Pointer[func() bool])}
	srv := agentclitest.NewGemini()
	t.Cleanup(srv.Close)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if done := g.cleanedUp.Load(); done != nil {
			for until := time.Now().Add(30 * time.Second); !(*done)() && time.Now().Before(until); {
				time.Sleep(50 * time.Millisecond)
			}
		}
		u, _ := url.Parse(srv.URL)
		rp := httputil.NewSingleHostReverseProxy(u)
		rp.FlushInterval = -1
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	clitest.WriteSettings(t, filepath.Join(g.home, ".gemini", "settings.json"),
		`{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}}, `+
			`"privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}, `+
			`"general": {`+retention+`"disableAutoUpdate": true, "disableUpdateNag": true}}`)
	g.env = agentclitest.Env(g.home, "GEMINI_API_KEY=fake-key", "GOOGLE_GEMINI_BASE_URL="+front.URL, "GEMINI_CLI_NO_RELAUNCH=true")
	g.work = filepath.Join(g.home, "work")
	os.MkdirAll(g.work, 0o755)
	return g
}

// TestDoctorAgreesWithGeminiResumedInALaterMinute: a session the real
// Gemini CLI started and then resumed in a later minute than it started
// is two files under one short id (the chat, and the stub its resume
// writes, named for the minute of the resume, holding only the context
// Gemini CLI adds); doctor counts them as one session, names both as
// deleted at Gemini CLI's next start (the stub holds no message it
// would resume, and its clean-up deletes every chat of the stub's short
// id), says whether loom holds the session (not before an import,
// whole after one), and the real Gemini CLI, started again, deletes
// exactly those files.
//
// The later minute is made as Gemini CLI itself would have made it: a
// chat's name takes the minute of the clock when its session starts
// (new Date().toISOString().slice(0, 16) in chatRecordingService's
// initialize), and nothing reads that name's minute back but to find
// its short id, so after the first run the chat is renamed to the
// minute before, as a session started a minute earlier is named; the
// resume then writes its stub under the minute the clock gives, always
// a later one.
func TestDoctorAgreesWithGeminiResumedInALaterMinute(t *testing.T) {
	t.Parallel()
	bin := agentclitest.Install(t, agentclitest.Gemini)
	fx := clitest.NewEmptyFixture(t)
	g := newGeminiHome(t, "")
	run := func(args ...string) {
		agentclitest.Run(t, clitest.CLITimeout, g.work, g.env, bin, append([]string{"-m", "gemini-2.5-flash"}, args...)...)
	}
	run("-p", "hello")
	chats, _ := filepath.Glob(filepath.Join(g.home, ".gemini", "tmp", "*", "chats"))
	if len(chats) != 1 {
		t.Fatalf("Gemini CLI made %d chats directories: %v", len(chats), chats)
	}
	files, _ := filepath.Glob(filepath.Join(chats[0], "session-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("Gemini CLI wrote %d chats: %v", len(files), files)
	}
	first := filepath.Base(files[0]) // session-YYYY-MM-DDTHH-MM-<short id>.jsonl
	const stampLen = len("2006-01-02T15-04")
	stamp, err := time.Parse("2006-01-02T15-04", first[len("session-"):][:stampLen])
	if err != nil {
		t.Fatalf("chat %s: %v", first, err)
	}
	earlier := "session-" + stamp.Add(-time.Minute).Format("2006-01-02T15-04") + first[len("session-")+stampLen:]
	if err := os.Rename(files[0], filepath.Join(chats[0], earlier)); err != nil {
		t.Fatal(err)
	}
	run("--resume", "latest", "-p", "again")
	files, _ = filepath.Glob(filepath.Join(chats[0], "session-*"))
	slices.Sort(files)
	short := first[len(first)-len("12345678.jsonl"):]
	if len(files) != 2 || !strings.HasSuffix(files[0], short) || !strings.HasSuffix(files[1], short) {
		t.Fatalf("after a resume in a later minute, Gemini CLI's chats are %v; want two of short id %s", files, short)
	}

	check := func(held importer.Held) doctor.Report {
		t.Helper()
		var due []string
		rep := doctorJSON(t, fx, g.home, "--within", "0d")
		for _, a := range rep.Agents {
			if a.Agent != "gemini" {
				continue
			}
			if a.Sessions != 1 {
				t.Errorf("doctor counts %d Gemini CLI sessions; want 1", a.Sessions)
			}
			for _, s := range a.AtRisk {
				due = append(due, s.Path)
				if s.Held != held {
					t.Errorf("doctor says %s is held %q; want %q", s.Path, s.Held, held)
				}
			}
		}
		slices.Sort(due)
		if !slices.Equal(due, files) {
			t.Fatalf("doctor says %v are due; want both of the session's files %v", due, files)
		}
		return rep
	}
	if rep := check(importer.HeldNone); rep.AtRisk != 1 || rep.Unheld != 1 {
		t.Errorf("doctor counts %d sessions at risk, %d not held; want 1 and 1", rep.AtRisk, rep.Unheld)
	}
	if r := fx.RunWith(t, clitest.RunOpts{Env: map[string]string{"HOME": g.home}, Before: clitest.AllFormats}, "session", "import", "--from", "gemini"); r.Code != 0 {
		t.Fatalf("import: exit %d: %s", r.Code, r.Stderr)
	}
	rep := check(importer.HeldWhole)
	due := files
	if rep.AtRisk != 1 || rep.Unheld != 0 {
		t.Errorf("doctor counts %d sessions at risk, %d not held; want 1 and 0", rep.AtRisk, rep.Unheld)
	}
	// Said as one session of two files, each named.
	r := fx.RunWith(t, clitest.RunOpts{Env: map[string]string{"HOME": g.home}, Before: func(f *cli.Factory) {
		clitest.AllFormats(f)
		f.Now = time.Now
	}}, "doctor", "--within", "0d")
	if !strings.Contains(r.Stdout, "  1 session; 1 will be deleted within 0 days (2 files):") ||
		!strings.Contains(r.Stdout, filepath.Base(files[0])) || !strings.Contains(r.Stdout, filepath.Base(files[1])) {
		t.Fatalf("doctor says:\n%s", r.Stdout)
	}

	done := func() bool { return len(gone(files)) >= len(due) }
	g.cleanedUp.Store(&done)
	run("-p", "once more")
	if got := gone(files); !slices.Equal(got, due) {
		t.Fatalf("Gemini CLI deleted %v\nloom doctor said %v", got, due)
	}
}
