package providertest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// Suite is a provider as the contract tests see it.
type Suite struct {
	// Name is the provider's Name, which starts each of its errors.
	Name string
	// Model is the model the tests ask for.
	Model string
	// New returns a provider configured with c.
	New func(c Config) loom.Provider
	// Fake starts the provider's fake server.
	Fake func() Fake
	// DefaultMaxRetries is how often the provider retries when Config
	// leaves MaxRetries at zero.
	DefaultMaxRetries int
	// RetryStatuses are failure statuses the provider retries.
	RetryStatuses []int
	// StatusCode returns the HTTP status of the SDK error err wraps.
	StatusCode func(err error) (int, bool)
	// StopReason is the stop reason of a reply of text alone.
	StopReason string
	// StreamError is the provider's error for an error event with
	// message msg in the middle of a stream.
	StreamError func(msg string) string
	// DefaultURL is where a call goes when Config names no base URL,
	// whatever BaseURLEnv (the service's usual environment variable)
	// says.
	DefaultURL, BaseURLEnv string
}

// Config is what the tests configure a provider with; zero fields are
// left at the provider's defaults.
type Config struct {
	BaseURL    string
	APIKey     string
	HTTPClient *http.Client
	MaxRetries int
}

// Fake is a protocol's fake server as the contract tests drive it.
type Fake interface {
	// BaseURL is the base URL that points a provider at the server.
	BaseURL() string
	// Script adds replies to the end of the server's script.
	Script(replies ...Script)
	// Requests returns every request received so far, oldest first.
	Requests() []Request
	Close()
}

// Script is a scripted reply in the terms every fake server has; each
// protocol's Fake turns it into its own Reply, whose fields of the same
// names it sets.
type Script struct {
	Text      string
	Reasoning string
	ToolCalls []ToolCall
	Model     string

	Status     int
	Error      string
	RetryAfter time.Duration

	Delay       time.Duration
	Hang        bool
	Truncate    bool
	StreamError string
}

// Run runs every contract test against the provider s describes.
func Run(t *testing.T, s Suite) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s Suite)
	}{
		{"Name", testName},
		{"StreamText", testStreamText},
		{"DelayedChunks", testDelayedChunks},
		{"ReasoningFirst", testReasoningFirst},
		{"ToolCalls", testToolCalls},
		{"ProgressWithoutText", testProgressWithoutText},
		{"Retry", testRetry},
		{"RetryHonoursRetryAfter", testRetryHonoursRetryAfter},
		{"PersistentFailure", testPersistentFailure},
		{"MaxRetries", testMaxRetries},
		{"ClientErrorIsNotRetried", testClientErrorIsNotRetried},
		{"NonJSONErrorBody", testNonJSONErrorBody},
		{"BadToolSchema", testBadToolSchema},
		{"BrokenStreams", testBrokenStreams},
		{"DefaultBaseURL", testDefaultBaseURL},
		{"CancelBeforeCall", testCancelBeforeCall},
		{"CancelDuringHangingStream", testCancelDuringHangingStream},
		{"DeadlineDuringHangingStream", testDeadlineDuringHangingStream},
		{"CancelWhileWaitingToRetry", testCancelWhileWaitingToRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, s) })
	}
}

// start returns the provider at a new fake server, closed when the test
// ends, with MaxRetries maxRetries.
func (s Suite) start(t *testing.T, maxRetries int) (loom.Provider, Fake) {
	t.Helper()
	f := s.Fake()
	t.Cleanup(f.Close)
	return s.New(Config{BaseURL: f.BaseURL(), APIKey: "test-key", MaxRetries: maxRetries}), f
}

// request is a request of one user message.
func (s Suite) request(text string) *loom.ModelRequest {
	return &loom.ModelRequest{
		Model:    s.Model,
		Messages: []*loom.Message{{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}},
	}
}

// Recorder records the events of a streamed reply: those of text and
// reasoning in Events, the times of those that only say something
// arrived (loom.EventProgress) in Progress.
type Recorder struct {
	Events   []loom.StreamEvent
	Progress []time.Time
}

// On records e; pass it to Stream as onEvent.
func (r *Recorder) On(e loom.StreamEvent) {
	if e.Kind == loom.EventProgress {
		r.Progress = append(r.Progress, time.Now())
		return
	}
	r.Events = append(r.Events, e)
}

// Text returns the text of the events of a kind, put together.
func (r *Recorder) Text(kind string) string {
	var b strings.Builder
	for _, e := range r.Events {
		if e.Kind == kind {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

// JSONEqual fails the test unless got, a field of a decoded request, is
// the JSON text want.
func JSONEqual(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Fatalf("%s sent:\n%s", what, g)
	}
}
