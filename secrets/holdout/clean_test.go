package holdout_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
)

type cleanFile struct {
	File   string `json:"file"`
	Cat    string `json:"cat"`
	Source string `json:"source"`
}

type cleanMsg struct {
	file, cat, source, carrier string
	msg                        *loom.Message
}

// chunks cuts text into pieces of 1–4 KB at line ends, as agents read
// large files.
func chunks(r *rng, text string) []string {
	if len(text) <= 4096 {
		return []string{text}
	}
	var out []string
	for len(text) > 0 {
		n := r.between(1024, 4096)
		if n >= len(text) {
			out = append(out, text)
			break
		}
		cut := strings.LastIndexByte(text[:n], '\n')
		if cut < 256 {
			cut = n
			for cut < len(text) && text[cut]&0xC0 == 0x80 { // keep runes whole
				cut++
			}
		} else {
			cut++
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	return out
}

var cleanCarriers = []string{"cat-output", "cat-output", "read-tool", "read-tool", "file-part", "prompt", "structured-stdout", "git-diff", "grep-output", "assistant-fence"}

func buildClean(t *testing.T) []cleanMsg {
	paths := os.Getenv("HOLDOUT_CLEAN")
	if paths == "" {
		t.Skip("HOLDOUT_CLEAN not set (comma-separated manifests of clean files)")
	}
	r := newRng(424242)
	var files []cleanFile
	for _, p := range strings.Split(paths, ",") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var fs []cleanFile
		if err := json.Unmarshal(b, &fs); err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	var out []cleanMsg
	for _, f := range files {
		b, err := os.ReadFile(f.File)
		if err != nil {
			continue
		}
		cs := chunks(r, string(b))
		limit := 2
		switch {
		case f.Cat == "lockfile":
			limit = 10
		case f.Cat == "minified", f.Cat == "sourcemap", f.Cat == "notebook", f.Cat == "openapi", f.Cat == "terraform", f.Cat == "env-example", f.Cat == "compose", f.Cat == "log":
			limit = 5
		}
		if len(cs) > limit {
			r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
			cs = cs[:limit]
		}
		short := f.File
		if i := strings.Index(short, "/repos/"); i >= 0 {
			short = short[i+7:]
		}
		for _, c := range cs {
			car := cleanCarriers[r.IntN(len(cleanCarriers))]
			path := filepath.Base(f.File)
			if car == "grep-output" && strings.Count(c, "\n") > 60 {
				car = "cat-output"
			}
			out = append(out, cleanMsg{file: short, cat: f.Cat, source: f.Source, carrier: car, msg: docCarrier(r, car, c, path)})
		}
	}
	return out
}

func TestHoldoutClean(t *testing.T) {
	d := secrets.Default()
	ms := buildClean(t)
	type agg struct{ flagged, total int }
	byCat, bySrc := map[string]*agg{}, map[string]*agg{}
	var all agg
	var flagged []string
	byRule := map[string]int{}
	for _, m := range ms {
		places := d.ScanMessage(m.msg)
		ok := len(places) == 0
		for _, kv := range [][2]any{{byCat, m.cat}, {bySrc, m.source}} {
			mp, k := kv[0].(map[string]*agg), kv[1].(string)
			if mp[k] == nil {
				mp[k] = &agg{}
			}
			mp[k].total++
			if !ok {
				mp[k].flagged++
			}
		}
		all.total++
		if ok {
			continue
		}
		all.flagged++
		// show each finding with context
		var lines []string
		for _, p := range m.msg.Parts {
			for _, v := range []string{p.Text, string(p.Input), string(p.Output), p.Error, func() string {
				if p.Source != nil {
					return p.Source.Text
				}
				return ""
			}()} {
				for _, f := range d.Find(v) {
					a, b := max(0, f.Start-80), min(len(v), f.End+60)
					ctx := v[a:f.Start] + "«" + v[f.Start:f.End] + "»" + v[f.End:b]
					lines = append(lines, fmt.Sprintf("    [%s] %s", f.RuleID, strings.ReplaceAll(ctx, "\n", "⏎")))
					byRule[f.RuleID]++
				}
			}
		}
		flagged = append(flagged, fmt.Sprintf("FLAG cat=%s carrier=%s file=%s\n%s", m.cat, m.carrier, m.file, strings.Join(lines, "\n")))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CLEAN flagged %d/%d = %.2f%%\n\nper category:\n", all.flagged, all.total, 100*float64(all.flagged)/float64(max(1, all.total)))
	dump := func(m map[string]*agg) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-40s %4d/%-5d %5.2f%%\n", k, m[k].flagged, m[k].total, 100*float64(m[k].flagged)/float64(m[k].total))
		}
	}
	dump(byCat)
	b.WriteString("\nper source:\n")
	dump(bySrc)
	b.WriteString("\nper rule:\n")
	for k, v := range byRule {
		fmt.Fprintf(&b, "  %-30s %d\n", k, v)
	}
	b.WriteString("\nflagged:\n" + strings.Join(flagged, "\n") + "\n")
	out := os.Getenv("HOLDOUT_CLEAN_OUT")
	if out == "" {
		out = "/tmp/holdout-clean.txt"
	}
	os.WriteFile(out, []byte(b.String()), 0o644)
	t.Logf("clean flagged %d/%d; report in %s", all.flagged, all.total, out)
}
