package chat_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// A tool's input stored as Go's encoder writes it (2\u003e/dev/null
// \u0026\u0026 make) reads as typed wherever it is shown whole: session
// show --full, the Markdown export and the HTML export.
func TestToolInputReadsAsTyped(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	s := &loom.Session{UserID: "local", Key: "cli:escapes", Project: fx.Proj, Title: "Build quietly"}
	a := &loom.Message{Role: loom.RoleAssistant, CreatedAt: clitest.Base.Add(1), Parts: []loom.Part{
		{Type: loom.PartTool, CallID: "c1", Name: "Bash", Status: loom.ToolCompleted,
			Input: json.RawMessage(`{"command":"ls 2\u003e/dev/null \u0026\u0026 make \u003cin"}`), Output: json.RawMessage(`"built"`)},
	}}
	if err := st.Append(context.Background(), s, clitest.TextMsg(loom.RoleUser, "build it", clitest.Base), a); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, c := range []struct {
		what string
		args []string
		want string
	}{
		{"session show --full", []string{"session", "show", s.ID, "--full"}, `"command": "ls 2>/dev/null && make <in"`},
		{"the Markdown export", []string{"session", "export", s.ID, "--format", "markdown"}, `"command": "ls 2>/dev/null && make <in"`},
		{"the HTML export", []string{"session", "export", s.ID, "--format", "html"}, `&#34;command&#34;: &#34;ls 2&gt;/dev/null &amp;&amp; make &lt;in&#34;`},
	} {
		out := fx.MustExec(t, c.args...)
		if strings.Contains(out, `\u00`) || !strings.Contains(out, c.want) {
			t.Errorf("%s does not show the input as typed (want %s):\n%s", c.what, c.want, out)
		}
	}
}
