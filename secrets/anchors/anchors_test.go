package anchors_test

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
)

// A Case is one test case of the anchors' own: a text their rule or
// detector must flag, with the values it must find (TP), or one it
// must not (FP).
type Case struct {
	Source  string // gitleaks or trufflehog
	Rule    string // the gitleaks rule id or the TruffleHog detector
	Name    string
	Text    string
	TP      bool
	Secrets []string // for a TP: empty when none of its values is in Text as it is (left out)
	Hidden  bool     // a Kingfisher rule's that Kingfisher does not report alone (an id, a host)
}

func load(t testing.TB) []Case {
	t.Helper()
	var cases []Case
	read := func(name string, fn func([]byte) (Case, error)) { cases = append(cases, readCases(t, name, fn)...) }
	read("gitleaks.jsonl.gz", func(b []byte) (Case, error) {
		var v struct {
			Rule, Kind, Text, Path string
			Secrets                []string
		}
		err := json.Unmarshal(b, &v)
		c := Case{Source: "gitleaks", Rule: v.Rule, Name: v.Kind, Text: v.Text, TP: v.Kind == "tp"}
		if c.TP {
			c.Secrets = v.Secrets
		}
		return c, err
	})
	read("trufflehog.jsonl.gz", func(b []byte) (Case, error) {
		var v struct {
			Detector, Name, Input string
			Want                  []string
		}
		err := json.Unmarshal(b, &v)
		return Case{Source: "trufflehog", Rule: v.Detector, Name: v.Name, Text: v.Input, TP: len(v.Want) > 0, Secrets: wanted(v.Input, v.Want)}, err
	})
	return cases
}

// readCases reads the gzipped JSON lines of testdata/name, each turned
// into a Case by fn.
func readCases(t testing.TB, name string, fn func([]byte) (Case, error)) []Case {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		c, err := fn(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// wanted turns what a TruffleHog detector reports into the values that
// must not be readable after a redaction. A detector often reports
// several values of one credential joined (an id and its secret, a
// JSON object of them, a token and its host), so the values are the
// runs of the input (of 8 characters or more, cut at what cannot be in
// a token) that the report holds; of those, the ones that look like a
// secret (16 characters or more, letters and digits), else the longest.
// A case whose report is empty must not be flagged.
func wanted(input string, want []string) []string {
	if len(want) == 0 {
		return nil
	}
	runs := strings.FieldsFunc(input, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("+/=_-.~", r))
	})
	var in []string
	for _, r := range runs {
		r = strings.Trim(r, ".-=")
		if len(r) < 8 {
			continue
		}
		for _, w := range want {
			if strings.Contains(w, r) {
				in = append(in, r)
				break
			}
		}
	}
	var out []string
	longest := ""
	for _, r := range in {
		if len(r) > len(longest) {
			longest = r
		}
		if len(r) >= 16 && strings.ContainsAny(r, "0123456789") && strings.IndexFunc(r, func(c rune) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }) >= 0 {
			out = append(out, r)
		}
	}
	if len(out) == 0 && longest != "" {
		out = []string{longest}
	}
	return out
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func rawJSON(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

func toolMsg(name string, input, output any) *loom.Message {
	return &loom.Message{ID: "m", SessionID: "s", Seq: 2, Role: loom.RoleAssistant, CreatedAt: t0, Parts: []loom.Part{
		{ID: "p1", Type: loom.PartText, Text: "Let me look."},
		{ID: "p2", Type: loom.PartTool, CallID: "toolu_1", Name: name, Status: loom.ToolCompleted, Input: rawJSON(input), Output: rawJSON(output)},
	}}
}

// carriers are the ways agents carry a text: each returns the message a
// session would hold.
var carriers = []struct {
	name string
	wrap func(text string) *loom.Message
}{
	{"prompt", func(s string) *loom.Message {
		return &loom.Message{ID: "m", SessionID: "s", Seq: 1, Role: loom.RoleUser, CreatedAt: t0, Parts: []loom.Part{
			{ID: "p1", Type: loom.PartText, Text: "This fails when I deploy, can you see why?\n\n```\n" + s + "\n```\n"}}}
	}},
	{"read-numbered", func(s string) *loom.Message {
		var b strings.Builder
		for i, l := range strings.Split(s, "\n") {
			fmt.Fprintf(&b, "%6d→%s\n", i+1, l)
		}
		return toolMsg("Read", map[string]any{"file_path": "/home/dev/app/config/settings.txt"}, b.String())
	}},
	{"git-diff", func(s string) *loom.Message {
		lines := strings.Split(s, "\n")
		var b strings.Builder
		fmt.Fprintf(&b, "diff --git a/config/settings.txt b/config/settings.txt\nindex 3b18e51..a9c4f02 100644\n--- a/config/settings.txt\n+++ b/config/settings.txt\n@@ -1,2 +1,%d @@\n # settings\n", len(lines)+1)
		for _, l := range lines {
			b.WriteString("+" + l + "\n")
		}
		return toolMsg("Bash", map[string]any{"command": "git diff HEAD~1 -- config/settings.txt"}, b.String())
	}},
	{"heredoc", func(s string) *loom.Message {
		return toolMsg("Bash", map[string]any{"command": "cat > config/settings.txt <<'EOF'\n" + s + "\nEOF", "description": "Write the settings"}, "")
	}},
	{"json-once", func(s string) *loom.Message {
		return toolMsg("Write", map[string]any{"file_path": "/home/dev/app/config/settings.txt", "content": s}, "File created successfully at: /home/dev/app/config/settings.txt")
	}},
	{"json-twice", func(s string) *loom.Message {
		inner, _ := json.Marshal(map[string]any{"path": "config/settings.txt", "content": s, "encoding": "utf-8"})
		return toolMsg("mcp__filesystem__read_file", map[string]any{"path": "config/settings.txt"},
			[]any{map[string]any{"type": "text", "text": string(inner)}})
	}},
	{"jenkins-xml", func(s string) *loom.Message {
		doc := "<?xml version='1.1' encoding='UTF-8'?>\n<project>\n  <builders>\n    <hudson.tasks.Shell>\n      <command>" +
			html.EscapeString(s) + "</command>\n    </hudson.tasks.Shell>\n  </builders>\n</project>\n"
		return toolMsg("Bash", map[string]any{"command": "cat $JENKINS_HOME/jobs/deploy/config.xml"}, doc)
	}},
}

// readable is all a reader of m can read, JSON decoded as often as it
// decodes and XML entities decoded.
func readable(m *loom.Message) string {
	var out []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		switch x := v.(type) {
		case string:
			out = append(out, x, html.UnescapeString(x))
			s := strings.TrimSpace(x)
			if depth < 4 && (strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")) {
				var y any
				if json.Unmarshal([]byte(s), &y) == nil {
					walk(y, depth+1)
				}
			}
		case []any:
			for _, e := range x {
				walk(e, depth)
			}
		case map[string]any:
			for k, e := range x {
				out = append(out, k)
				walk(e, depth)
			}
		}
	}
	for _, p := range m.Parts {
		out = append(out, p.Text, p.Error, p.Title)
		for _, raw := range []json.RawMessage{p.Input, p.Output} {
			if len(raw) == 0 {
				continue
			}
			out = append(out, string(raw))
			var v any
			if json.Unmarshal(raw, &v) == nil {
				walk(v, 0)
			}
		}
	}
	return strings.Join(out, "\n")
}

// leaked says whether a value is still readable in text: whole, or one
// of its halves when it is long enough to be told by half.
func leaked(text, v string) bool {
	if strings.Contains(text, v) {
		return true
	}
	if len(v) >= 16 {
		h := len(v) / 2
		return strings.Contains(text, v[:h]) || strings.Contains(text, v[h:])
	}
	return false
}

// redacted reports whether none of c's values is readable once c's
// text, as wrap carries it, is redacted as a gate reads: the values
// found are replaced where they are repeated too.
func redacted(d *secrets.Detector, wrap func(string) *loom.Message, c Case) bool {
	msgs := []*loom.Message{wrap(c.Text)}
	d.RedactMessages(msgs)
	text := readable(msgs[0])
	for _, s := range c.Secrets {
		if leaked(text, s) {
			return false
		}
	}
	return true
}

type tally struct{ n, ok int }

func (t tally) pct() float64 {
	if t.n == 0 {
		return 100
	}
	return 100 * float64(t.ok) / float64(t.n)
}

// TestAnchorsTruePositives places every true-positive case of gitleaks'
// rules and TruffleHog's detectors in each carrier and requires that
// their values are no longer readable after the detector's redaction,
// in at least 95% of the placements.
func TestAnchorsTruePositives(t *testing.T) {
	all := scoreTruePositives(t, secrets.Default(), load(t), "anchors-missed.txt")
	// The goal, 95% of all placements, is met; it is kept
	// (docs/security.md says what the rest are).
	if 100*all.ok < 95*all.n {
		t.Errorf("%.2f%% of the anchors' true positives redacted; the goal is 95%%", all.pct())
	}
}

// scoreTruePositives places every true positive of cases in each
// carrier, logs how many placements d redacts (in all, by source and by
// carrier), writes what it missed to the report named, and returns the
// count.
func scoreTruePositives(t *testing.T, d *secrets.Detector, cases []Case, reportName string) tally {
	var all tally
	bySource := map[string]*tally{}
	byCarrier := map[string]*tally{}
	missedRules := map[string]int{}
	var report []string
	left := 0
	for _, c := range cases {
		if !c.TP {
			continue
		}
		if len(c.Secrets) == 0 {
			left++
			continue
		}
		for _, car := range carriers {
			ok := redacted(d, car.wrap, c)
			all.n++
			key := c.Source
			if bySource[key] == nil {
				bySource[key] = &tally{}
			}
			if byCarrier[car.name] == nil {
				byCarrier[car.name] = &tally{}
			}
			bySource[key].n++
			byCarrier[car.name].n++
			if ok {
				all.ok++
				bySource[key].ok++
				byCarrier[car.name].ok++
			} else {
				missedRules[c.Source+"/"+c.Rule]++
				if car.name == "prompt" {
					report = append(report, fmt.Sprintf("%s/%s %q: %.160q", c.Source, c.Rule, c.Name, c.Text))
				}
			}
		}
	}
	t.Logf("true positives redacted: %d of %d placements (%.2f%%); %d cases left out (what they must find is not in their text as it is)", all.ok, all.n, all.pct(), left)
	for _, k := range slices.Sorted(maps.Keys(bySource)) {
		t.Logf("  %-12s %5d of %5d (%.1f%%)", k, bySource[k].ok, bySource[k].n, bySource[k].pct())
	}
	for _, k := range slices.Sorted(maps.Keys(byCarrier)) {
		t.Logf("  %-14s %5d of %5d (%.1f%%)", k, byCarrier[k].ok, byCarrier[k].n, byCarrier[k].pct())
	}
	writeReport(t, reportName, missedRules, report)
	return all
}

// keyUnderName reports whether every value d finds in a negative case
// of TruffleHog's is a random, key-shaped value under a credential's
// name (PERCY_TOKEN=84f2…, appointeddKey := "Ci0a…"): TruffleHog makes
// its negative cases by putting a random string that misses its
// detector's pattern (a length off, a character out of its alphabet)
// after the detector's keyword. Such a value is to be redacted in a
// session history (docs/security.md, "Anchors' negative cases"), so the
// false-positive measure leaves these cases out. gitleaks' negative
// cases are values picked by hand (published samples, placeholders,
// words) and all count.
func keyUnderName(d *secrets.Detector, c Case) bool {
	if c.Source != "trufflehog" {
		return false
	}
	found := d.Find(c.Text)
	if len(found) == 0 {
		return false
	}
	for _, f := range found {
		v := c.Text[f.Start:f.End]
		line := c.Text[strings.LastIndexByte(c.Text[:f.Start], '\n')+1 : f.Start]
		if !keyShaped(v) || !credentialName(line) {
			return false
		}
	}
	return true
}

// keyShaped reports whether v reads as a random key: 12 characters or
// more, three in four of them letters or digits, with a digit, six
// different characters at least, and no run or count a test's fake
// value is made of.
func keyShaped(v string) bool {
	if len(v) < 12 || fake(v) || strings.ContainsAny(v, " \t") {
		return false
	}
	alnum, digit := 0, false
	seen := map[rune]bool{}
	for _, r := range v {
		seen[r] = true
		switch {
		case r >= '0' && r <= '9':
			alnum++
			digit = true
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			alnum++
		}
	}
	return digit && len(seen) >= 6 && 4*alnum >= 3*len(v)
}

// credentialName reports whether the line before a value names a
// credential.
func credentialName(before string) bool {
	l := strings.ToLower(before)
	for _, w := range []string{"key", "token", "secret", "password", "passwd", "pwd", "credential", "auth", "bearer"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// TestAnchorsFalsePositives places every false-positive case (a text a
// rule or detector must not flag) in each carrier and requires that at
// most 1% of the placements are changed by a redaction. A case that
// holds a value another case must find (gitleaks' "wrong prefix"
// cases are often another rule's secret) is not counted, nor is one
// that keyUnderName says holds a key under a credential's name.
func TestAnchorsFalsePositives(t *testing.T) {
	d := secrets.Default()
	cases := load(t)
	var values []string
	for _, c := range cases {
		values = append(values, c.Secrets...)
	}
	holdsSecret := func(text string) bool {
		for _, v := range values {
			if len(v) >= 8 && strings.Contains(text, v) {
				return true
			}
		}
		return false
	}
	// The cases an anchor's own whole rule set flags (gitleaks' default
	// configuration, TruffleHog's detectors, each run over every case as
	// a file): a case is a false positive of one rule's test, not of
	// the tool, and flagging it is what the tool itself does.
	own := ownFlags(t)
	fl := flags{byRule: map[string]int{}}
	skipped, byOwn, keys := 0, 0, 0
	for _, c := range cases {
		if c.TP {
			continue
		}
		if holdsSecret(c.Text) {
			skipped++
			continue
		}
		if own[textHash(c.Text)] {
			byOwn++
			continue
		}
		if keyUnderName(d, c) {
			keys++
			continue
		}
		fl.place(d, c)
	}
	all := fl.all
	flagged := all.n - all.ok
	rate := 100 * float64(flagged) / float64(max(all.n, 1))
	t.Logf("false positives flagged: %d of %d placements (%.2f%%); not counted: %d cases that hold another case's secret, %d that the anchors' own tools flag, %d of TruffleHog's that hold a random key under a credential's name (redacted on purpose)", flagged, all.n, rate, skipped, byOwn, keys)
	writeReport(t, "anchors-flagged.txt", fl.byRule, fl.report)
	if rate > 1 {
		t.Errorf("%.2f%% of the anchors' false-positive cases flagged; the bound is 1%%", rate)
	}
}

// flags counts the placements of negative cases that a redaction
// changes: in all (ok is those left as they were), by rule, and, for a
// person to read, each case flagged as a prompt carries it.
type flags struct {
	all    tally
	byRule map[string]int
	report []string
}

// place places c in each carrier and counts what d flags.
func (f *flags) place(d *secrets.Detector, c Case) {
	for _, car := range carriers {
		f.all.n++
		if d.RedactMessages([]*loom.Message{car.wrap(c.Text)}) == 0 {
			f.all.ok++
			continue
		}
		f.byRule[c.Source+"/"+c.Rule]++
		if car.name == "prompt" {
			red, _ := d.Redact(c.Text)
			f.report = append(f.report, fmt.Sprintf("%s/%s %q: %.200q", c.Source, c.Rule, c.Name, red))
		}
	}
}

// textHash names a case's text as the lists of testdata/flagged-by-*.txt
// do: the first 16 hex digits of its SHA-256.
func textHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// ownFlags reads testdata/flagged-by-*.txt: the cases each anchor's
// own tool flags (see docs/security.md for how they were made).
func ownFlags(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "flagged-by-*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/flagged-by-*.txt: %v", err)
	}
	out := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Fields(string(b)) {
			out[l] = true
		}
	}
	return out
}

// fake reports whether a test's value is made to look fake: a run of
// eight of one character, or counting.
func fake(v string) bool {
	l := strings.ToLower(v)
	for _, f := range []string{"12345678", "abcdefgh", "xxxxxxxx", "00000000"} {
		if strings.Contains(l, f) {
			return true
		}
	}
	run := 1
	for i := 1; i < len(l); i++ {
		if l[i] == l[i-1] {
			if run++; run >= 8 {
				return true
			}
		} else {
			run = 1
		}
	}
	return false
}

// writeReport writes what was missed or flagged, by rule, to
// $ANCHORS_OUT (default the test's temporary directory's parent, so it
// survives the test) for a person to read.
func writeReport(t *testing.T, name string, byRule map[string]int, lines []string) {
	dir := os.Getenv("ANCHORS_OUT")
	if dir == "" {
		dir = os.TempDir()
	}
	type kv struct {
		k string
		v int
	}
	var rs []kv
	for k, v := range byRule {
		rs = append(rs, kv{k, v})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].v > rs[j].v || rs[i].v == rs[j].v && rs[i].k < rs[j].k })
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%5d %s\n", r.v, r.k)
	}
	b.WriteString("\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Log(err)
		return
	}
	t.Logf("details in %s", p)
}

// TestAnchorsProbe prints, for the rules named in $ANCHORS_PROBE
// (comma-separated, "source/rule"; Kingfisher's too), each case and what the detector
// finds in it: for a person tuning the rules.
func TestAnchorsProbe(t *testing.T) {
	want := os.Getenv("ANCHORS_PROBE")
	if want == "" {
		t.Skip("set ANCHORS_PROBE=source/rule,… to print cases")
	}
	d := secrets.Default()
	for _, c := range append(load(t), loadKingfisher(t)...) {
		if !strings.Contains(","+want+",", ","+c.Source+"/"+c.Rule+",") {
			continue
		}
		var found []string
		for _, f := range d.Find(c.Text) {
			found = append(found, f.RuleID+"="+c.Text[f.Start:f.End])
		}
		t.Logf("%s %q secrets=%q\n    text=%.300q\n    found=%q", c.Rule, c.Name, c.Secrets, c.Text, found)
	}
}

// TestAnchorsDoc writes, to $ANCHORS_DOC, the table docs/security.md
// gives of every gitleaks rule and every TruffleHog detector: which loom
// rules find its test cases, how many of them (as a prompt carries
// them), and, where it finds none, why.
func TestAnchorsDoc(t *testing.T) {
	out := os.Getenv("ANCHORS_DOC")
	if out == "" {
		t.Skip("set ANCHORS_DOC=FILE to write the table of the anchors' rules")
	}
	d := secrets.Default()
	type cover struct {
		tp, found, fakes int
		by               map[string]int
	}
	byRule := map[string]*cover{}
	for _, c := range load(t) {
		if !c.TP || len(c.Secrets) == 0 {
			continue
		}
		k := c.Source + "/" + c.Rule
		cv := byRule[k]
		if cv == nil {
			cv = &cover{by: map[string]int{}}
			byRule[k] = cv
		}
		cv.tp++
		if redacted(d, carriers[0].wrap, c) {
			cv.found++
			for _, f := range d.Find(c.Text) {
				cv.by[f.RuleID]++
			}
		} else if slices.ContainsFunc(c.Secrets, fake) {
			cv.fakes++
		}
	}
	list := func(name string) []string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(b))
	}
	var b strings.Builder
	row := func(source, id string) {
		cv := byRule[source+"/"+id]
		if cv == nil {
			fmt.Fprintf(&b, "| `%s` | – | no pattern test of its own to check against (only tests that call the service) |\n", id)
			return
		}
		var why []string
		if cv.fakes > 0 {
			why = append(why, fmt.Sprintf("%d are fakes made of runs or counting (`AGE-SECRET-KEY-1QQQQ…`, `12345678-ABCD-…`), which loom takes for placeholders", cv.fakes))
		}
		if rest := cv.tp - cv.found - cv.fakes; rest > 0 {
			why = append(why, fmt.Sprintf("%d not found (`ANCHORS_PROBE=%s/%s` prints them)", rest, source, id))
		}
		var rules []string
		for _, r := range slices.Sorted(maps.Keys(cv.by)) {
			rules = append(rules, "`"+r+"`")
		}
		found := strings.Join(rules, ", ")
		if found == "" {
			found = "none"
		}
		if len(why) > 0 {
			found += "; of the rest, " + strings.Join(why, "; ")
		}
		fmt.Fprintf(&b, "| `%s` | %d of %d | %s |\n", id, cv.found, cv.tp, found)
	}
	b.WriteString("#### gitleaks\n\n| rule | its true positives redacted | by loom's rules |\n|---|---|---|\n")
	for _, id := range list("gitleaks-rules.txt") {
		row("gitleaks", id)
	}
	b.WriteString("\n#### TruffleHog\n\n| detector | its true positives redacted | by loom's rules |\n|---|---|---|\n")
	for _, id := range list("trufflehog-detectors.txt") {
		row("trufflehog", id)
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
