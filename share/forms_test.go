package share_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/loomhq/loom/share"
)

// Every form of the project's path that an agent writes is hidden, not
// only the path as typed: Claude Code's project folder
// (~/.claude/projects/-tmp-work-api/…, every character but letters and
// digits as "-"), a file: URL with its escapes, a JSON string's escapes
// (a Windows path's backslashes doubled, "/" written "\/"), and the home
// directory in each of them. Generated roots (seeded; LOOM_TEST_SEED
// replays one) with spaces, dots, dashes, underscores, "@", "+" and
// non-ASCII letters in their names, each put in every form into a text;
// after Hide no form of the root, and no distinctive segment of it,
// remains.
func TestHiderHidesEveryFormOfAPath(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("LOOM_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	t.Logf("seed %d (LOOM_TEST_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	parts := []string{"work", "Projects", "my app", "api.v2", "spotter_gqc", "a-b", "ünïcode", "me@host", "c++", "2026"}
	segment := func() string {
		return parts[rng.IntN(len(parts))] + strconv.Itoa(rng.IntN(1000))
	}
	home := filepath.Join(t.TempDir(), "home"+strconv.Itoa(rng.IntN(1000)))
	t.Setenv("HOME", home)
	for range 200 {
		under := "/tmp"
		if rng.IntN(2) == 0 {
			under = home
		}
		root := under
		for range 1 + rng.IntN(3) {
			root += "/" + segment()
		}
		h := share.NewHider(root)
		forms := map[string]string{
			"as typed":      root,
			"claude folder": regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(root, "-"),
			"file url":      (&url.URL{Scheme: "file", Path: root}).String(),
			"json escaped":  strings.ReplaceAll(root, "/", `\/`),
		}
		if b, err := json.Marshal(root); err == nil {
			forms["json string"] = string(b[1 : len(b)-1])
		}
		for name, f := range forms {
			in := fmt.Sprintf("opened %s/lib/x.go and ~/.claude/projects/%s/1.jsonl", f, f)
			got, _ := h.Hide(in)
			if strings.Contains(got, f) {
				t.Fatalf("seed %d: the root %q %s (%q) survives Hide: %q", seed, root, name, f, got)
			}
			for _, seg := range strings.Split(strings.TrimPrefix(root, under+"/"), "/") {
				if len(seg) >= 4 && strings.Contains(got, seg) {
					t.Fatalf("seed %d: %s of root %q leaves its segment %q: %q", seed, name, root, seg, got)
				}
			}
		}
	}
}
