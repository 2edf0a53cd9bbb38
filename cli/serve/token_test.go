package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// A kept secret that is not a live token of the user served (another
// user's, a revoked one, or not a token at all) is replaced by a new
// token, never used; a file others may read is made private.
func TestServeTokenReplacesWhatItCannotUse(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d, err := w.dirs()
	if err != nil {
		t.Fatal(err)
	}
	path := d.ServeTokenFile("alice")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	_, bobs, err := w.st.CreateToken(t.Context(), "bob", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	revoked, revokedSecret, err := w.st.CreateToken(t.Context(), "alice", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.st.RevokeToken(t.Context(), revoked.ID); err != nil {
		t.Fatal(err)
	}
	for name, kept := range map[string]string{"bob's": bobs, "revoked": revokedSecret, "not a token": "hunter2"} {
		os.Remove(path) // a file written before keeps its mode
		if err := os.WriteFile(path, []byte(kept+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		opts, ios := w.options()
		got, err := serveToken(t.Context(), opts, w.st, "alice", 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.reused || got.secret == kept || got.tok.UserID != "alice" || got.kept != path {
			t.Errorf("%s token kept: %+v", name, got)
		}
		b, err := os.ReadFile(path)
		if err != nil || strings.TrimSpace(string(b)) != got.secret {
			t.Errorf("%s token kept: the file holds %q (%v), want the new secret", name, b, err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s token kept: mode %v (%v)", name, fi.Mode().Perm(), err)
		}
		if !strings.Contains(text(ios.ErrOut), "could be read by others") {
			t.Errorf("%s token kept: stderr %q", name, text(ios.ErrOut))
		}
		if tok, err := w.st.Authenticate(t.Context(), got.secret); err != nil || tok.ID != got.tok.ID {
			t.Errorf("%s token kept: the new one does not authenticate: %v", name, err)
		}
	}
	if _, err := w.st.Authenticate(t.Context(), bobs); loom.ErrorCode(err) != "" {
		t.Errorf("bob's token was touched: %v", err)
	}
}
