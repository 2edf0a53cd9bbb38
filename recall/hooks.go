package recall

import (
	"os"
	"path/filepath"
)

// HookCounts is how many recall hooks answered within their budget and
// how many ran out of time, as counted in a state directory.
type HookCounts struct {
	Answered int64 `json:"answered"`
	Late     int64 `json:"late"`
}

// hookCounter is the file of state that counts the hooks that answered
// within their budget (answered) or ran out of time. Each hook run adds
// a byte to one of them: an append is one write, with no read before it
// and no lock, so the counting costs a hook next to nothing and hooks
// that run at once lose no count; a file's size is its count.
func hookCounter(state string, answered bool) string {
	if answered {
		return filepath.Join(state, "recall-hooks-answered")
	}
	return filepath.Join(state, "recall-hooks-late")
}

// CountHook counts one hook run in state: answered within its budget,
// or out of time. It fails silently: a hook never fails its prompt.
func CountHook(state string, answered bool) {
	if os.MkdirAll(state, 0o700) != nil {
		return
	}
	f, err := os.OpenFile(hookCounter(state, answered), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write([]byte{'.'})
	_ = f.Close()
}

// ReadHookCounts reads the hook counters of state; none counted is zero.
func ReadHookCounts(state string) HookCounts {
	size := func(answered bool) int64 {
		if fi, err := os.Stat(hookCounter(state, answered)); err == nil {
			return fi.Size()
		}
		return 0
	}
	return HookCounts{Answered: size(true), Late: size(false)}
}
