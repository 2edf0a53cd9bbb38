package chat

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/picker"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// maxTurnChoices bounds the turns listed to choose a fork point from;
// older turns can still be typed by number.
const maxTurnChoices = 30

// turnChoice is a turn's number and the first line of its prompt.
type turnChoice struct {
	turn   int
	prompt string
}

// recentTurns returns the last up to n turns of s, oldest first, reading
// the session backwards a page at a time so that a long session costs no
// more than a short one.
func recentTurns(ctx context.Context, st loom.Store, s *loom.Session, n int) ([]turnChoice, error) {
	var rev []turnChoice
	var before int64
	for len(rev) < n {
		msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{Limit: 200, Before: before})
		if err != nil {
			return nil, err
		}
		for i := len(msgs) - 1; i >= 0 && len(rev) < n; i-- {
			if m := msgs[i]; m.Role == loom.RoleUser {
				rev = append(rev, turnChoice{turn: m.Turn, prompt: human.FirstLine(m.Text())})
			}
		}
		if len(msgs) == 0 || msgs[0].Seq <= 1 {
			break
		}
		before = msgs[0].Seq
	}
	out := make([]turnChoice, len(rev))
	for i, c := range rev {
		out[len(rev)-1-i] = c
	}
	return out, nil
}

// ChooseTurn lists the session's turns and asks question until the
// answer is a turn from 1 to last; with orAll, an empty answer means
// every turn (0), else it asks again.
func ChooseTurn(ctx context.Context, ios *term.IOStreams, st loom.Store, s *loom.Session, question string, last int, orAll bool) (int, error) {
	turns, err := recentTurns(ctx, st, s, maxTurnChoices)
	if err != nil {
		return 0, err
	}
	cs := ios.ColorScheme()
	title := s.Title
	if title == "" {
		title = s.ID
	}
	fmt.Fprintf(ios.Out, "Turns of %s:\n", cs.Bold(term.SanitizeLine(title)))
	if len(turns) > 0 && turns[0].turn > 1 {
		fmt.Fprintln(ios.Out, cs.Gray(fmt.Sprintf("  (turns 1–%d not shown)", turns[0].turn-1)))
	}
	width := len(strconv.Itoa(s.TurnCount))
	for _, t := range turns {
		fmt.Fprintf(ios.Out, "  %s  %s\n", cs.Cyan(fmt.Sprintf("%*d", width, t.turn)), command.Truncate(term.SanitizeLine(t.prompt), max(20, ios.TerminalWidth()-width-6)))
	}
	span := fmt.Sprintf("1-%d", last)
	if last == 1 {
		span = "1"
	}
	hint := "[" + span + "] "
	if orAll {
		hint = "[" + span + ", enter for all] "
	}
	for {
		a, err := term.PromptLine(ctx, ios, question+" "+hint)
		if err != nil {
			return 0, err
		}
		a = strings.TrimSpace(a)
		if a == "" && orAll {
			return 0, nil
		}
		n, err := strconv.Atoi(a)
		if err == nil && n >= 1 && n <= last {
			return n, nil
		}
		if last == 1 {
			fmt.Fprintln(ios.Out, "Please give 1, the only turn to choose.")
		} else {
			fmt.Fprintf(ios.Out, "Please give a number from 1 to %d.\n", last)
		}
	}
}

// LaterTurns names the turns after turn up to last, which a rewind keeps
// in its fork: "turn 3 is", "turns 3–5 are".
func LaterTurns(turn, last int) string {
	if turn+1 == last {
		return fmt.Sprintf("turn %d is", last)
	}
	return fmt.Sprintf("turns %d–%d are", turn+1, last)
}

// PickSession lets user choose a session in the picker, starting with
// the sessions of project; leaving it without a choice is
// picker.ErrNoChoice.
func PickSession(ctx context.Context, ios *term.IOStreams, st loom.Store, user string, project func() (loom.Project, error), now func() time.Time) (*loom.Session, error) {
	p, err := project()
	if err != nil {
		return nil, err
	}
	return picker.Pick(ctx, ios, st, picker.Options{UserID: user, Project: p, Now: now})
}
