package secrets

import "testing"

// Every built-in rule's expression compiles, as New writes it: New
// leaves them to be compiled on first use, where an error would panic.
func TestBuiltinExpressionsCompile(t *testing.T) {
	d, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range d.rules {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("rule %s: %v", r.ID, p)
				}
			}()
			r.re()
		}()
	}
}

// A Detector compiles no built-in expression until a text holds one of
// its keywords, nor its keyword automaton until it reads a text:
// building one is what every command that redacts pays before reading
// anything (with both built at once it took 35,800 allocations, 12 MB
// and 8-10 ms; a recall that finds nothing reads no text).
func TestNewBuildsOnFirstUse(t *testing.T) {
	const most = 2000
	n := testing.AllocsPerRun(3, func() {
		if _, err := New(Config{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("New: %.0f allocations", n)
	if n > most {
		t.Errorf("New made %.0f allocations, want at most %d: are the built-in rules or the automaton built at once again?", n, most)
	}
}
