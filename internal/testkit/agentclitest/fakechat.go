package agentclitest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// NewChatServer starts a fake model on the Chat Completions API,
// closed when the test ends.
func NewChatServer(t testing.TB) *openaitest.Server {
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	return srv
}

// NewChatRepliesServer is NewChatServer with ChatReplies queued: the
// fake model of a chat client's three questions.
func NewChatRepliesServer(t testing.TB) *openaitest.Server {
	srv := NewChatServer(t)
	srv.Enqueue(ChatReplies()...)
	return srv
}

// WriteConfig writes data as the file at path, mode perm, making its
// directory (mode 0o700) first: an agent's configuration in a test's
// home directory.
func WriteConfig(t testing.TB, path, data string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
}

// LastMessage is the last message of a Chat Completions request's
// messages (nil when there is none).
func LastMessage(req providertest.Request) map[string]any {
	msgs, _ := req.Body["messages"].([]any)
	if len(msgs) == 0 {
		return nil
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	return last
}
