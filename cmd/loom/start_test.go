package main

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// initCost is what one package's initialisation allocated, as the Go
// runtime reports it with GODEBUG=inittrace=1.
type initCost struct {
	pkg           string
	bytes, allocs int
}

// initCosts runs loom with args and returns what each package's
// initialisation allocated.
func initCosts(t *testing.T, args ...string) []initCost {
	t.Helper()
	if bin == "" {
		t.Skip("builds and runs the loom binary")
	}
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Dir = home
	cmd.Env = []string{"LOOM_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH"), "GODEBUG=inittrace=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("loom %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	// init github.com/loomhq/loom/secrets @8.2 ms, 0.20 ms clock, 138600 bytes, 931 allocs
	line := regexp.MustCompile(`(?m)^init (\S+) @[^,]*, [^,]* clock, (\d+) bytes, (\d+) allocs$`)
	var costs []initCost
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		b, _ := strconv.Atoi(m[2])
		a, _ := strconv.Atoi(m[3])
		costs = append(costs, initCost{pkg: m[1], bytes: b, allocs: a})
	}
	if len(costs) < 100 {
		t.Fatalf("loom %s with GODEBUG=inittrace=1 reported %d packages' initialisation, want hundreds:\n%s", strings.Join(args, " "), len(costs), out)
	}
	return costs
}

// costliest lists the n packages whose initialisation allocated most.
func costliest(costs []initCost, n int) string {
	costs = slices.Clone(costs)
	slices.SortFunc(costs, func(a, b initCost) int { return cmp.Compare(b.allocs, a.allocs) })
	var s strings.Builder
	for _, c := range costs[:min(n, len(costs))] {
		fmt.Fprintf(&s, "\n  %-60s %6d allocs %8d bytes", c.pkg, c.allocs, c.bytes)
	}
	return s.String()
}

// Every loom process (a hook, recall, blame, --version) pays for every
// package's initialisation before it does anything: loom's own packages
// build what only some commands use (regular expressions, tables, the
// secret detector's rules) on first use, not at start. Counted in
// allocations, which do not depend on how busy the machine is. Before
// they were made lazy loom's packages made 2,735 allocations (394 KB) at
// start, and the whole program 12,430 (1.64 MB); after, 473 (83 KB) and
// 10,170 (1.33 MB).
func TestStartInitialisesLittle(t *testing.T) {
	const (
		ownAllocs     = 800     // loom's packages together
		ownBytes      = 160_000 //
		packageAllocs = 120     // any one of loom's packages
		allAllocs     = 11_000  // every package, the libraries' included
	)
	costs := initCosts(t, "--version")
	var own []initCost
	var ownA, ownB, allA int
	for _, c := range costs {
		allA += c.allocs
		if c.pkg == "github.com/loomhq/loom" || strings.HasPrefix(c.pkg, "github.com/loomhq/loom/") {
			own = append(own, c)
			ownA += c.allocs
			ownB += c.bytes
			if c.allocs > packageAllocs {
				t.Errorf("%s allocates %d times at start, want at most %d: build what only some commands use on first use (sync.OnceValue)", c.pkg, c.allocs, packageAllocs)
			}
		}
	}
	t.Logf("loom's packages: %d allocs, %d bytes; every package: %d allocs", ownA, ownB, allA)
	if ownA > ownAllocs || ownB > ownBytes {
		t.Errorf("loom's packages allocate %d times (%d bytes) at start, want at most %d (%d bytes); most:%s", ownA, ownB, ownAllocs, ownBytes, costliest(own, 10))
	}
	if allA > allAllocs {
		t.Errorf("the packages of loom's binary allocate %d times at start, want at most %d; most:%s", allA, allAllocs, costliest(costs, 10))
	}
}
