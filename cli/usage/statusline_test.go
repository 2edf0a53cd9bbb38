package usage

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// statusline counts as --user and takes no argument.
func TestNewCmdStatuslineOptions(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, newCmdStatusline, "--user", "alice"); got.User != "alice" || got.ReadStore == nil || got.PriceTable == nil {
		t.Errorf("statusline --user alice: %+v", got)
	}
	cmdtest.Rejects(t, newCmdStatusline, "extra")
}

// The status line names the model, prices the session Claude Code names
// from what loom imported of it (else takes Claude Code's figure), and
// adds today, the active block and the context left.
func TestStatuslineRunPrintsOneLine(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	line := func(stdin string) string {
		t.Helper()
		opts, ios := w.options()
		ios.In = strings.NewReader(stdin)
		if err := statuslineRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		return text(ios.Out)
	}
	// The block's time left and burn rate depend on the clock.
	want := regexp.MustCompile(`^Opus · session \$4\.50 · today \$4\.50 · block \$4\.50, (?:\d+h(?: \d+m)?|\d+m) left, \$[0-9.,]+/h · 42% context left\n$`)
	if got := line(`{"session_id":"cc-api","model":{"id":"claude-x","display_name":"Opus"},"cost":{"total_cost_usd":9.99},"context_window":{"remaining_percentage":41.6}}`); !want.MatchString(got) {
		t.Errorf("status line %q, want it to match %s", got, want)
	}
	if got := line(`{"session_id":"not-imported","model":{"id":"claude-x"},"cost":{"total_cost_usd":9.99}}`); !strings.HasPrefix(got, "claude-x · session $9.99 · today $4.50 · ") {
		t.Errorf("a session loom has not imported: %q, want Claude Code's cost", got)
	}
	if got := line(""); !strings.HasPrefix(got, "today $4.50 · block ") {
		t.Errorf("without stdin: %q", got)
	}

	// What loom's own chat spent today is said beside Claude Code's,
	// and left out of its block.
	w.turn(t, w.webS, time.Now().Add(-time.Second), "anthropic", "house-model", loom.Usage{InputTokens: 100_000, OutputTokens: 10_000, APICalls: 1})
	if got := line(""); !regexp.MustCompile(`^today \$4\.50 \(\+\$0\.45 other agents\) · block \$4\.50, `).MatchString(got) {
		t.Errorf("with loom's own chat's spend today: %q", got)
	}

	opts, ios := w.options()
	ios.In = strings.NewReader("not json")
	var usage *command.UsageError
	if err := statuslineRun(t.Context(), opts); !errors.As(err, &usage) || text(ios.Out) != "" {
		t.Errorf("stdin not JSON: %v, stdout %q; want a usage error (exit 2)", err, text(ios.Out))
	}
}
