package clitest

import (
	"testing"

	"github.com/loomhq/loom/openai/openaitest"
)

// WithProvider points the fixture's loom processes at a fresh fake
// provider, so that replies a killed process never asked for do not
// reach the next one.
func (fx *AgentFixture) WithProvider(t *testing.T, replies ...openaitest.Reply) *openaitest.Server {
	t.Helper()
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	fx.Srv = srv
	fx.Env = append(ProviderEnv(srv), "LOOM_STREAM_IDLE_TIMEOUT=20s")
	srv.Enqueue(replies...)
	return srv
}
