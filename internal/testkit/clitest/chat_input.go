package clitest

import (
	"testing"
)

// LastUserText is what the user's message of the last request said.
func (fx *AgentFixture) LastUserText(t *testing.T) string {
	t.Helper()
	msgs := fx.LastRequest(t)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	t.Fatal("the last request has no user message")
	return ""
}
