package termtest

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// History holds every line once, in order, whether it scrolled off the
// top of the screen or is still on it; a redraw in place counts once,
// and a cursor moved up cannot erase what scrolled off.
func TestHistory(t *testing.T) {
	for _, c := range []struct {
		name, script, want string
	}{
		{"scrolled", `for i in $(seq 1 15); do echo line$i; done`, lines(1, 15)},
		{"redrawn on the screen", `printf 'a\nb\nc'; printf '\r\033[2A\033[Jrendered\n'`, "rendered"},
		{"redraw cannot reach the scrollback", `for i in $(seq 1 15); do echo line$i; done; printf '\033[14A\033[Jnew\n'`, lines(1, 6) + "\nnew"},
		{"long line wraps", `printf '%0100d\n' 0`, strings.Repeat("0", 80) + "\n" + strings.Repeat("0", 20)},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Start(t, exec.Command("sh", "-c", c.script+"; printf END"), 80, 10)
			p.Wait(t)
			if got := strings.TrimSuffix(p.History(), "END"); strings.TrimSpace(got) != c.want {
				t.Fatalf("history:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func lines(from, to int) string {
	var b []string
	for i := from; i <= to; i++ {
		b = append(b, fmt.Sprintf("line%d", i))
	}
	return strings.Join(b, "\n")
}
