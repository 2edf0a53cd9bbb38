package anchors_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/secrets"
)

// The third corpus: the examples and negative examples of MongoDB's
// Kingfisher rules (kingfisher/README.md says at which commit and how
// testdata/kingfisher.jsonl.gz is made), placed in the same carriers
// as the anchors' cases and scored beside gitleaks and TruffleHog run
// on the same placements (testdata/kingfisher-tools.txt).

// loadKingfisher reads Kingfisher's cases and, as more negative cases,
// those of Semgrep's secret rules' tests (the lines their "ok:"
// annotations mark).
func loadKingfisher(t testing.TB) []Case {
	t.Helper()
	read := func(name, source string) []Case {
		return readCases(t, name, func(b []byte) (Case, error) {
			var v struct {
				Rule, Kind, Name, Text string
				Secrets                []string
				Visible                bool
			}
			err := json.Unmarshal(b, &v)
			return Case{Source: source, Rule: v.Rule, Name: v.Name, Text: v.Text, TP: v.Kind == "tp", Secrets: v.Secrets, Hidden: !v.Visible}, err
		})
	}
	return append(read("kingfisher.jsonl.gz", "kingfisher"), read("semgrep-negatives.jsonl.gz", "semgrep")...)
}

// caseID names a case in the tools' list: the first 16 hex digits of
// the SHA-256 of its rule and name (two rules can share an example).
func caseID(c Case) string { return textHash(c.Source + "/" + c.Rule + "/" + c.Name) }

// toolResults reads testdata/kingfisher-tools.txt: for each tool, the
// placements ("case-id carrier") where it found every value of a true
// positive or flagged a negative case.
func toolResults(t *testing.T) map[string]map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "kingfisher-tools.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		if out[fs[0]] == nil {
			out[fs[0]] = map[string]bool{}
		}
		out[fs[0]][fs[1]+" "+fs[2]] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// toolTally counts, of the placements of cases that are true positives
// (tp) or negatives, those each tool found or flagged.
func toolTally(t *testing.T, cases []Case, tp bool) map[string]tally {
	res := toolResults(t)
	out := map[string]tally{}
	for tool, hit := range res {
		var n tally
		for _, c := range cases {
			if c.TP != tp || tp && len(c.Secrets) == 0 {
				continue
			}
			for _, car := range carriers {
				n.n++
				if hit[caseID(c)+" "+car.name] {
					n.ok++
				}
			}
		}
		out[tool] = n
	}
	return out
}

// TestKingfisherTruePositives measures in how many placements the
// values of Kingfisher's examples are no longer readable after
// redaction, and holds that figure. Two kinds of example are left out, each counted:
// those of rules Kingfisher itself does not report alone (visible:
// false: an app's id, an account's host, a user name, found only to
// check a secret beside them), and fakes made of counting (counted:
// abcd1234efgh5678, 123e4567-e89b-12d3-a456-426614174000), which loom
// takes for placeholders on purpose. The figure with the fakes is
// printed too.
func TestKingfisherTruePositives(t *testing.T) {
	d := secrets.Default()
	var visible, real []Case
	hidden, fakes := 0, 0
	for _, c := range loadKingfisher(t) {
		switch {
		case !c.TP || len(c.Secrets) == 0:
		case c.Hidden:
			hidden++
			continue
		case slices.ContainsFunc(c.Secrets, counted):
			fakes++
			visible = append(visible, c)
			continue
		default:
			visible = append(visible, c)
		}
		real = append(real, c)
	}
	t.Logf("left out: %d examples of rules Kingfisher does not report alone; %d fakes made of counting", hidden, fakes)
	t.Log("with the fakes:")
	with := scoreTruePositives(t, d, visible, "kingfisher-missed-all.txt")
	logTools(t, visible, true)
	t.Log("without the fakes:")
	all := scoreTruePositives(t, d, real, "kingfisher-missed.txt")
	logTools(t, real, true)
	t.Log("under the scoring rule (docs/security.md, \"The scoring rule\"):")
	ru := scoreUnderRule(t, d, real)
	t.Logf("summary: %.2f%% with the fakes, %.2f%% without, %.2f%% under the scoring rule", with.pct(), all.pct(), ru.counted.pct())
	// The goal is 95%; it is not met (docs/security.md says what the
	// rest are), so the measured figure is held: no change may lose
	// what is found now.
	if all.pct() < kingfisherFloor {
		t.Errorf("%.2f%% of Kingfisher's examples redacted, below the %.2f%% held (the goal is 95%%)", all.pct(), kingfisherFloor)
	}
	// Under the scoring rule the goal, 95%, is met and held.
	if ru.counted.pct() < kingfisherRuleFloor {
		t.Errorf("%.2f%% of Kingfisher's counted examples redacted under the scoring rule, below the %.2f%% held", ru.counted.pct(), kingfisherRuleFloor)
	}
}

// kingfisherRuleFloor is the share of the placements the scoring rule
// counts that are redacted, as last measured.
const kingfisherRuleFloor = 96.4

// kingfisherFloor is the share of Kingfisher's examples (without the
// fakes) redacted as last measured (77.5% when the corpus was made).
const kingfisherFloor = 88.0

// logTools logs what gitleaks and TruffleHog found or flagged of the
// placements of cases.
func logTools(t *testing.T, cases []Case, tp bool) map[string]tally {
	tools := toolTally(t, cases, tp)
	for _, tool := range slices.Sorted(maps.Keys(tools)) {
		n := tools[tool]
		t.Logf("  %-12s %5d of %5d on the same placements (%.2f%%)", tool, n.ok, n.n, n.pct())
	}
	return tools
}

// counted reports whether a value is a fake made of counting, or what
// fake says: a run of four letters or digits in order, up or down
// (abcd, 1234, zyxw, 7890), also when letters and digits take turns
// (a1b2c3d4e5, 1A2B3C4D5E: a run of five in the letters or in the
// digits alone), or a group said again (xyzxyzxyz, aaaabbbbcccc). A
// random key is taken for one about once in 420 (40 letters and
// digits) or in 60 (32 hex digits), measured on 200,000 of each.
func counted(v string) bool {
	if fake(v) {
		return true
	}
	l := strings.ToLower(v)
	var letters, digits []byte
	for i := range len(l) {
		switch c := l[i]; {
		case c >= 'a' && c <= 'z':
			letters = append(letters, c)
		case c >= '0' && c <= '9':
			digits = append(digits, c)
		}
	}
	return inOrder([]byte(l), 4) || inOrder(letters, 5) || inOrder(digits, 5) || saidAgain(l)
}

// inOrder reports whether s holds n letters or n digits counting up or
// down by one (9 is followed by 0).
func inOrder(s []byte, n int) bool {
	step := func(a, b byte) int {
		digit := func(c byte) bool { return c >= '0' && c <= '9' }
		letter := func(c byte) bool { return c >= 'a' && c <= 'z' }
		switch {
		case digit(a) && digit(b) && (b == a+1 || a == '9' && b == '0'):
			return 1
		case digit(a) && digit(b) && (a == b+1 || a == '0' && b == '9'):
			return -1
		case letter(a) && letter(b) && b == a+1:
			return 1
		case letter(a) && letter(b) && a == b+1:
			return -1
		}
		return 0
	}
	run, dir := 1, 0
	for i := 1; i < len(s); i++ {
		d := step(s[i-1], s[i])
		switch {
		case d != 0 && d == dir:
			run++
		case d != 0:
			run, dir = 2, d
		default:
			run, dir = 1, 0
		}
		if run >= n {
			return true
		}
	}
	return false
}

// saidAgain reports whether s holds a group of two or three characters
// three times in a row (xyzxyzxyz), or two runs of four of one
// character (aaaabbbb).
func saidAgain(s string) bool {
	for n := 2; n <= 3; n++ {
		for i := 0; i+3*n <= len(s); i++ {
			if g := s[i : i+n]; s[i+n:i+2*n] == g && s[i+2*n:i+3*n] == g && strings.Trim(g, g[:1]) != "" {
				return true
			}
		}
	}
	runs := 0
	for i := 0; i+4 <= len(s); {
		if strings.Count(s[i:i+4], s[i:i+1]) == 4 {
			runs++
			i += 4
			continue
		}
		i++
	}
	return runs >= 2
}

// TestKingfisherFalsePositives requires that Kingfisher's negative
// examples, and Semgrep's negative cases, are flagged in no more of
// their placements than gitleaks flags.
func TestKingfisherFalsePositives(t *testing.T) {
	d := secrets.Default()
	cases := loadKingfisher(t)
	fl := flags{byRule: map[string]int{}}
	for _, c := range cases {
		if !c.TP {
			fl.place(d, c)
		}
	}
	all := fl.all
	flagged := all.n - all.ok
	t.Logf("negative examples flagged: %d of %d placements (%.2f%%)", flagged, all.n, 100*float64(flagged)/float64(max(all.n, 1)))
	tools := logTools(t, cases, false)
	writeReport(t, "kingfisher-flagged.txt", fl.byRule, fl.report)
	if g, ok := tools["gitleaks"]; !ok {
		t.Error("testdata/kingfisher-tools.txt has no gitleaks results")
	} else if flagged > g.ok {
		t.Errorf("%d placements of Kingfisher's negative examples flagged; gitleaks flags %d", flagged, g.ok)
	}
}

// TestKingfisherWrite writes each placement of every case, as a reader
// of the message reads it, to a file of $KINGFISHER_WRITE
// (case-id.carrier.txt), for gitleaks and TruffleHog to scan.
func TestKingfisherWrite(t *testing.T) {
	dir := os.Getenv("KINGFISHER_WRITE")
	if dir == "" {
		t.Skip("set KINGFISHER_WRITE=DIR to write the placements as files")
	}
	for _, c := range loadKingfisher(t) {
		for _, car := range carriers {
			p := filepath.Join(dir, caseID(c)+"."+car.name+".txt")
			if err := os.WriteFile(p, []byte(readable(car.wrap(c.Text))+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestKingfisherTools turns gitleaks' JSON report ($KINGFISHER_GITLEAKS)
// and TruffleHog's JSON lines ($KINGFISHER_TRUFFLEHOG) over the files
// TestKingfisherWrite wrote into testdata/kingfisher-tools.txt: a
// placement of a true positive is listed when the tool's findings in
// its file hold every value the case must find (or at least half of
// it), one of a negative case when the tool reports anything.
func TestKingfisherTools(t *testing.T) {
	gl, th := os.Getenv("KINGFISHER_GITLEAKS"), os.Getenv("KINGFISHER_TRUFFLEHOG")
	if gl == "" || th == "" {
		t.Skip("set KINGFISHER_GITLEAKS and KINGFISHER_TRUFFLEHOG to the tools' reports")
	}
	found := map[string]map[string][]string{"gitleaks": {}, "trufflehog": {}}
	b, err := os.ReadFile(gl)
	if err != nil {
		t.Fatal(err)
	}
	var glr []struct{ File, Secret, Match string }
	if err := json.Unmarshal(b, &glr); err != nil {
		t.Fatal(err)
	}
	for _, r := range glr {
		k := filepath.Base(r.File)
		found["gitleaks"][k] = append(found["gitleaks"][k], r.Secret)
	}
	b, err = os.ReadFile(th)
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(string(b)) {
		var r struct {
			SourceMetadata struct {
				Data struct{ Filesystem struct{ File string } }
			}
			Raw, RawV2 string
		}
		if json.Unmarshal([]byte(l), &r) != nil || r.SourceMetadata.Data.Filesystem.File == "" {
			continue
		}
		k := filepath.Base(r.SourceMetadata.Data.Filesystem.File)
		found["trufflehog"][k] = append(found["trufflehog"][k], r.Raw, r.RawV2)
	}
	var out strings.Builder
	out.WriteString("# tool case-id carrier: the placements where the tool found every value of a true positive, or flagged a negative case\n")
	for _, tool := range slices.Sorted(maps.Keys(found)) {
		for _, c := range loadKingfisher(t) {
			for _, car := range carriers {
				vs, ok := found[tool][caseID(c)+"."+car.name+".txt"]
				if ok && (!c.TP || coversAll(vs, c.Secrets)) {
					fmt.Fprintf(&out, "%s %s %s\n", tool, caseID(c), car.name)
				}
			}
		}
	}
	if err := os.WriteFile(filepath.Join("testdata", "kingfisher-tools.txt"), []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// coversAll reports whether every value is held by one of the values a
// tool found, or is at least half made of one.
func coversAll(found, values []string) bool {
	if len(values) == 0 {
		return false
	}
	for _, v := range values {
		ok := false
		for _, f := range found {
			if f != "" && (strings.Contains(f, v) || 2*len(f) >= len(v) && strings.Contains(v, f)) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
