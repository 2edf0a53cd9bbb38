package anthropic

import "strings"

// thinkingMode is how a model is asked to think.
type thinkingMode int

const (
	thinkingNone     thinkingMode = iota // the model cannot think
	thinkingBudget                       // "enabled" with budget_tokens
	thinkingAdaptive                     // "adaptive": the model decides
)

// thinkingFor tells how to ask model for thinking. Models before extended
// thinking take none; the Claude 3.7 and 4 to 4.5 families take a budget;
// newer Claude models think adaptively (the official SDK warns when
// they are given a budget). Other names (models behind Anthropic-compatible
// servers) get the classic budget.
func thinkingFor(model string) thinkingMode {
	m := strings.ToLower(model)
	for _, prefix := range []string{"claude-3-5-", "claude-3-haiku", "claude-3-opus", "claude-3-sonnet", "claude-2", "claude-instant"} {
		if strings.HasPrefix(m, prefix) {
			return thinkingNone
		}
	}
	for _, prefix := range []string{"claude-3-7-sonnet", "claude-sonnet-4-5", "claude-opus-4-5", "claude-opus-4-1", "claude-haiku-4-5"} {
		if strings.HasPrefix(m, prefix) {
			return thinkingBudget
		}
	}
	// claude-sonnet-4 and claude-opus-4, bare, with a date, or as -0.
	for _, prefix := range []string{"claude-sonnet-4", "claude-opus-4"} {
		if rest, ok := strings.CutPrefix(m, prefix); ok && (rest == "" || rest == "-0" || len(rest) == 9 && rest[0] == '-' && allDigits(rest[1:])) {
			return thinkingBudget
		}
	}
	if strings.HasPrefix(m, "claude-") {
		return thinkingAdaptive
	}
	return thinkingBudget
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
