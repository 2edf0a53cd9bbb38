package secrets_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/realcorpus"
)

// The acceptance figures of the real corpus.
const (
	minSecrets  = 1000
	minKinds    = 50
	minCarriers = 10
	minClean    = 20000
	minRecall   = 0.97
	maxFlagged  = 0.005
	// maxSourceFlagged bounds the flagged rate of each source of 200
	// messages or more: the whole is mostly Go code, and a detector
	// that flags a quarter of a lockfile's chunks must not pass on its
	// average. This one is the corpus's own, beside the figures.
	maxSourceFlagged = 0.02
)

// One file in goRootStride of the Go tree and one in modCacheStride of
// the module cache are cut into messages (at most maxChunks from a
// file): enough for the figures, few enough to run in seconds.
// LOOM_CORPUS_FULL=1 takes every file and every chunk instead.
const (
	goRootStride   = 2
	modCacheStride = 2
	maxChunks      = 3
)

// realSeed makes the corpus of secrets: a fixed seed, so that every run
// measures the same secrets.
const realSeed = 20251125

// cleanExclusions are the files of the clean material that hold
// secret-shaped fixtures: a test private key, a key in a provider's
// documented format written into a test. They are left out of the
// clean set by path, each for the reason given, after reading every
// message the detector flagged (docs/security.md lists them too).
// Chunks that hold a PEM private key block are left out wherever they
// are (realcorpus.Cutter), and so are files others may not read.
//
// The line drawn: a value is a secret-shaped fixture when, found in a
// session, it would be a credential: a private key in any encoding, a
// token in a provider's or a standard's format (JWT, AWS keys, OAuth
// access tokens and client secrets, Basic credentials), a password in a
// URL or connection string. A password that is a placeholder word
// (password, pass, secret, test, foo:bar, in any spelling: p@ssword,
// secr3t, sooper\\secret) is not: flagging it is a false positive, and
// so is flagging a public key, a certificate, a signature, a hash or an
// alphabet.
var cleanExclusions = []realcorpus.Exclusion{
	exclusion(`^goroot:src/cmd/go/internal/auth/userauth_test\.go`, "HTTP Basic credentials (aladdin:opensesame and garbled variants) as input of the go command's credential parser"),
	exclusion(`^goroot:src/cmd/go/testdata/script/goauth_git\.txt`, "a git credential URL with a password"),
	exclusion(`^goroot:src/cmd/go/testdata/(script/(goauth_netrc|mod_auth)\.txt|vcstest/auth/)`, "RFC 7617's aladdin:opensesame as the .netrc, URL and JSON credentials of the go command's authentication tests (a password people choose, in a credential's place)"),
	exclusion(`^goroot:src/cmd/vendor/golang\.org/x/mod/sumdb/note/note\.go`, "a signed-note private key (PRIVATE+KEY+…) in the package's documentation"),
	exclusion(`^goroot:src/crypto/(ecdh/ecdh_test\.go|x509/pkcs8_test\.go|hpke/testdata/)`, "cryptographic test vectors: private keys in hex and shared secrets"),
	exclusion(`^modcache:golang\.org/x/crypto@[^/]+/ocsp/ocsp_test\.go`, "a responder private key in hex"),
	exclusion(`^modcache:github\.com/golang-jwt/jwt/v5@[^/]+/[^/]+_test\.go`, "JWTs signed with the package's test keys"),
	exclusion(`^modcache:golang\.org/x/oauth2@[^/]+/(authhandler/authhandler_test|jira/jira_test|jwt/jwt_test|oauth2_test)\.go`, "OAuth access tokens in token responses"),
	exclusion(`^modcache:golang\.org/x/oauth2@[^/]+/google/google_test\.go`, "an OAuth client secret in a client configuration"),
	exclusion(`^modcache:golang\.org/x/oauth2@[^/]+/google/externalaccount/aws_test\.go`, "AWS temporary credentials (ASIA key id, secret key, session token)"),
	exclusion(`^modcache:golang\.org/x/oauth2@[^/]+/google/(externalaccount/basecredentials_test|internal/externalaccountauthorizeduser/externalaccountauthorizeduser_test)\.go`, "HTTP Basic client credentials"),
	exclusion(`^modcache:golang\.org/x/oauth2@[^/]+/google/internal/stsexchange/clientauth_test\.go`, "a JWT subject token"),
	exclusion(`^modcache:github\.com/jackc/pgx/v5@[^/]+/pgconn/config_(lazy_os_user|security_home_dir)_test\.go`, "PostgreSQL URLs with a password (curly:nyuk)"),
	exclusion(`^modcache:modernc\.org/sqlite@[^/]+/testdata/tcl/pg_common\.tcl`, "a PostgreSQL conninfo with a password"),
	exclusion(`^modcache:github\.com/jackc/pgx/v5@[^/]+/testsetup/certs/[^/]+\.key\.b64`, "a test CA's private key, as base64 of its PEM block"),
	exclusion(`^modcache:golang\.org/x/oauth2@[^/]+/clientcredentials/clientcredentials_test\.go`, "OAuth access tokens in token responses"),
	exclusion(`^debian:etc/chromium\.d/apikeys$`, "Debian's Google API key and OAuth client secret for Chromium (present where chromium is installed, as CI installs it)"),
}

func exclusion(pattern, reason string) realcorpus.Exclusion {
	return realcorpus.Exclusion{Pattern: regexp.MustCompile(pattern), Reason: reason}
}

// goEnv asks the go command for a variable (GOROOT, GOMODCACHE): with
// -trimpath, runtime.GOROOT knows nothing.
func goEnv(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Logf("go env %s: %v", name, err)
		return ""
	}
	return strings.TrimSpace(string(out))
}

type cleanSet struct {
	msgs    []realcorpus.CleanMsg
	sources []realcorpus.Source
	skipped []realcorpus.Excluded
	notes   []string
}

// buildClean cuts the real material found here into messages.
func buildClean(t *testing.T) cleanSet {
	grs, mcs, chunks := goRootStride, modCacheStride, maxChunks
	if os.Getenv("LOOM_CORPUS_FULL") != "" {
		// every file and every chunk: slow, for a deeper look
		grs, mcs, chunks = 1, 1, 0
	}
	c := &realcorpus.Cutter{MaxChunks: chunks, Exclusions: cleanExclusions}
	var set cleanSet
	if root := goEnv(t, "GOROOT"); root != "" {
		set.sources = append(set.sources, c.GoRoot(root, grs))
	} else {
		set.sources = append(set.sources, realcorpus.Source{Name: "goroot", Missing: "go env GOROOT gave nothing"})
	}
	gomod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if mc := goEnv(t, "GOMODCACHE"); mc != "" {
		s, missing := c.ModCache(mc, gomod, mcs)
		set.sources = append(set.sources, s)
		if len(missing) > 0 {
			set.notes = append(set.notes, fmt.Sprintf("modcache: %d of go.mod's modules are not in the module cache here (%s …): building and testing all of loom's packages downloads them", len(missing), missing[0]))
		}
	} else {
		set.sources = append(set.sources, realcorpus.Source{Name: "modcache", Missing: "go env GOMODCACHE gave nothing"})
	}
	set.sources = append(set.sources, c.Debian("/"))
	td := filepath.Join("testdata", "realcorpus")
	set.sources = append(set.sources, c.Tarball("lockfiles", filepath.Join(td, "lockfiles.tar.gz")))
	set.sources = append(set.sources, c.Tarball("npm-assets", filepath.Join(td, "npm-assets.tar.gz")))
	set.sources = append(set.sources, c.Tarball("notebooks", filepath.Join(td, "notebooks.tar.gz")))
	set.sources = append(set.sources, c.Tarball("k8s-manifests", filepath.Join(td, "k8s-manifests.tar.gz")))
	set.sources = append(set.sources, c.Tarball("lockfile-diffs", filepath.Join(td, "lockfile-diffs.tar.gz")))
	set.msgs = c.Out
	set.skipped = c.Skipped
	sess := cleanSessions(t)
	for _, m := range sess {
		set.msgs = append(set.msgs, realcorpus.CleanMsg{Source: "sessions", Path: "testdata/agent-sessions", Msg: m})
	}
	set.sources = append(set.sources, realcorpus.Source{Name: "sessions", Root: "../testdata/agent-sessions", Messages: len(sess)})
	return set
}

type tally struct{ caught, total int }

func (x tally) rate() float64 { return float64(x.caught) / float64(max(1, x.total)) }

// excerpt shows the text around a finding, on one line.
func excerpt(text string, f secrets.Finding) string {
	a, b := max(0, f.Start-60), min(len(text), f.End+60)
	for a > 0 && a < len(text) && text[a]&0xC0 == 0x80 {
		a--
	}
	for b < len(text) && text[b]&0xC0 == 0x80 {
		b++
	}
	s := text[a:f.Start] + "«" + secrets.Hint(text[f.Start:f.End]) + "»" + text[f.End:b]
	return strings.NewReplacer("\n", "⏎", "\t", " ", "\r", "").Replace(s)
}

// findings are the detector's findings in every field of m, with an
// excerpt around each.
func findings(d *secrets.Detector, m *loom.Message) (rules []string, excerpts []string) {
	for _, p := range m.Parts {
		fields := []string{p.Text, string(p.Input), string(p.Output), p.Error, p.Title, string(p.Metadata), p.URL}
		if p.Source != nil {
			fields = append(fields, p.Source.Text)
		}
		for _, f := range fields {
			for _, x := range d.Find(f) {
				rules = append(rules, x.RuleID)
				excerpts = append(excerpts, x.RuleID+": "+excerpt(f, x))
			}
		}
	}
	return rules, excerpts
}

// TestRealCorpus holds the detector to content nobody on the project
// wrote: secrets of many kinds in the shapes their providers document,
// carried the ways sessions carry them, and clean messages cut from the
// real files found where the test runs. It logs recall per kind and per
// carrier and the flagged rate per source and rule; LOOM_CORPUS_REPORT
// (a path), or -v, writes the full report: every missed secret and
// every flagged clean message.
func TestRealCorpus(t *testing.T) {
	start := time.Now()
	d := secrets.Default()
	var rep strings.Builder

	// Secrets.
	corpus := realcorpus.SecretCorpus(realSeed)
	byKind, byCarrier := map[string]*tally{}, map[string]*tally{}
	var missed []string
	caught := 0
	for _, s := range corpus {
		red, _ := d.RedactMessage(s.Msg)
		leaks := s.Leaks(red)
		k, c := byKind[s.Kind], byCarrier[s.Carrier]
		if k == nil {
			k = &tally{}
			byKind[s.Kind] = k
		}
		if c == nil {
			c = &tally{}
			byCarrier[s.Carrier] = c
		}
		k.total++
		c.total++
		if len(leaks) == 0 {
			caught++
			k.caught++
			c.caught++
			continue
		}
		rules, _ := findings(d, s.Msg)
		missed = append(missed, fmt.Sprintf("%s in %s: %s; left: %s; found instead: %s", s.Kind, s.Carrier, s.Hint,
			realcorpus.HintAll(leaks), strings.Join(uniq(rules), ",")))
	}
	recall := float64(caught) / float64(len(corpus))
	t.Logf("secrets: %d of %d kinds in %d carriers; recall %.1f%% (%d missed)", len(corpus), len(byKind), len(byCarrier), 100*recall, len(corpus)-caught)
	fmt.Fprintf(&rep, "# Real corpus report\n\nsecrets: %d of %d kinds in %d carriers; recall %.2f%% (%d missed)\n\n", len(corpus), len(byKind), len(byCarrier), 100*recall, len(corpus)-caught)
	rep.WriteString("## Recall per kind\n\n| kind | caught | of | recall |\n|---|---:|---:|---:|\n")
	for _, k := range slices.Sorted(maps.Keys(byKind)) {
		x := byKind[k]
		fmt.Fprintf(&rep, "| `%s` | %d | %d | %.0f%% |\n", k, x.caught, x.total, 100*x.rate())
	}
	t.Logf("recall per kind: %s", rates(byKind))
	t.Logf("recall per carrier: %s", rates(byCarrier))
	rep.WriteString("\n## Recall per carrier\n\n| carrier | caught | of | recall |\n|---|---:|---:|---:|\n")
	for _, k := range slices.Sorted(maps.Keys(byCarrier)) {
		x := byCarrier[k]
		fmt.Fprintf(&rep, "| `%s` | %d | %d | %.0f%% |\n", k, x.caught, x.total, 100*x.rate())
	}
	rep.WriteString("\n## Missed secrets\n\n")
	for _, m := range missed {
		rep.WriteString("- " + m + "\n")
	}

	// Clean messages.
	set := buildClean(t)
	total := len(set.msgs)
	flaggedBySource, bySource := map[string]int{}, map[string]int{}
	flaggedByRule := map[string]int{}
	var flagged []string
	for _, cm := range set.msgs {
		bySource[cm.Source]++
		if len(d.ScanMessage(cm.Msg)) == 0 {
			continue
		}
		flaggedBySource[cm.Source]++
		rules, ex := findings(d, cm.Msg)
		for _, r := range uniq(rules) {
			flaggedByRule[r]++
		}
		flagged = append(flagged, fmt.Sprintf("%s:%s\n    %s", cm.Source, cm.Path, strings.Join(ex, "\n    ")))
	}
	nflagged := len(flagged)
	rate := float64(nflagged) / float64(max(1, total))
	fmt.Fprintf(&rep, "\n## Clean messages\n\n%d messages; %d flagged = %.2f%%\n\n| source | root | files | messages | flagged | rate |\n|---|---|---:|---:|---:|---:|\n", total, nflagged, 100*rate)
	var badSources []string
	for _, s := range set.sources {
		if s.Missing != "" {
			t.Logf("clean source %s: missing here: %s", s.Name, s.Missing)
			fmt.Fprintf(&rep, "| %s | missing: %s | | | | |\n", s.Name, s.Missing)
			continue
		}
		n, f := bySource[s.Name], flaggedBySource[s.Name]
		if n >= 200 && float64(f) > maxSourceFlagged*float64(n) {
			badSources = append(badSources, fmt.Sprintf("%s %.1f%%", s.Name, 100*float64(f)/float64(n)))
		}
		t.Logf("clean source %s: %d messages from %d files, %d flagged (%.2f%%)", s.Name, n, s.Files, f, 100*float64(f)/float64(max(1, n)))
		fmt.Fprintf(&rep, "| %s | %s | %d | %d | %d | %.2f%% |\n", s.Name, s.Root, s.Files, n, f, 100*float64(f)/float64(max(1, n)))
	}
	for _, n := range set.notes {
		t.Log(n)
		rep.WriteString("\n" + n + "\n")
	}
	t.Logf("clean: %d messages, %d flagged = %.2f%%; by rule: %s", total, nflagged, 100*rate, counts(flaggedByRule))
	// Echoes: the clean set read as one (a read holding all of it, the
	// worst case), the values found in it replaced wherever else they
	// appear. What is found by mistake must not spread far.
	msgs := make([]*loom.Message, len(set.msgs))
	for i, cm := range set.msgs {
		msgs[i] = cm.Msg
	}
	values, echoed := echoSpread(d, msgs)
	t.Logf("clean: the echoes of the %d values kept from what is flagged change %d more messages", values, echoed)
	fmt.Fprintf(&rep, "\nEchoes: the %d values kept from the flagged messages are repeated in %d messages the detector does not flag.\n", values, echoed)
	if echoed > nflagged {
		t.Errorf("the echoes of what is flagged change %d more clean messages, more than the %d flagged", echoed, nflagged)
	}
	rep.WriteString("\n### Flagged messages per rule\n\n")
	for _, k := range slices.Sorted(maps.Keys(flaggedByRule)) {
		fmt.Fprintf(&rep, "- `%s`: %d\n", k, flaggedByRule[k])
	}
	excl := map[string]int{}
	for _, e := range set.skipped {
		excl[e.Reason]++
	}
	t.Logf("left out of the clean set: %d pieces (%s)", len(set.skipped), counts(excl))
	rep.WriteString("\n### Left out of the clean set\n\n")
	for _, e := range set.skipped {
		fmt.Fprintf(&rep, "- %s:%s: %s\n", e.Source, e.Path, e.Reason)
	}
	rep.WriteString("\n### Flagged clean messages\n\n")
	for _, f := range flagged {
		rep.WriteString("- " + f + "\n")
	}

	if path := os.Getenv("LOOM_CORPUS_REPORT"); path != "" || testing.Verbose() {
		if path == "" {
			path = filepath.Join(os.TempDir(), "loom-realcorpus-report.md")
		}
		if err := os.WriteFile(path, []byte(rep.String()), 0o644); err != nil {
			t.Error(err)
		} else {
			t.Logf("full report: %s", path)
		}
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))

	if len(corpus) < minSecrets || len(byKind) < minKinds || len(byCarrier) < minCarriers {
		t.Errorf("the corpus holds %d secrets of %d kinds in %d carriers: want %d, %d and %d at least", len(corpus), len(byKind), len(byCarrier), minSecrets, minKinds, minCarriers)
	}
	if total < minClean {
		t.Errorf("%d clean messages, want %d at least (a source missing here?)", total, minClean)
	}
	if recall < minRecall {
		t.Errorf("recall %.2f%%, want %.0f%% at least", 100*recall, 100*minRecall)
	}
	if rate > maxFlagged {
		t.Errorf("%.2f%% of clean messages flagged, want %.1f%% at most", 100*rate, 100*maxFlagged)
	}
	if len(badSources) > 0 {
		t.Errorf("sources flagged above %.0f%%: %s", 100*maxSourceFlagged, strings.Join(badSources, ", "))
	}
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

func rates(m map[string]*tally) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s %d/%d; ", k, m[k].caught, m[k].total)
	}
	return b.String()
}

func counts(m map[string]int) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s %d; ", k, m[k])
	}
	return b.String()
}
