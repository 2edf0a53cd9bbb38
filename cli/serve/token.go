package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
)

// servedToken is the token loom serve prints, and where it came from.
type servedToken struct {
	tok    *loom.Token
	secret string
	// kept is the file that holds the secret for the next start; empty
	// when it could not be written.
	kept string
	// reused tells that the token is the one of an earlier start.
	reused bool
}

// serveToken returns the access token loom serve prints for user. The
// secret printed last time is kept in the state directory (mode 0600)
// and printed again while this store takes it as a live token of user,
// so that a restart keeps the dashboard's link and the browsers logged
// in; else a new token is made and kept in its place. The store keeps
// only the hash, as for every token. A kept file that is not this
// store's token (another --db) or not user's is replaced, never trusted.
//
// With ttl above zero the new token expires after ttl, and a kept one is
// reused only when it expires no later than that.
func serveToken(ctx context.Context, opts *Options, tokens loom.TokenStore, user string, ttl time.Duration) (*servedToken, error) {
	d, err := opts.Dirs()
	if err != nil {
		return nil, err
	}
	path := d.ServeTokenFile(user)
	if secret := readServeToken(opts.IO.ErrOut, path); secret != "" {
		tok, err := tokens.Authenticate(ctx, secret)
		switch {
		case loom.ErrorCode(err) == loom.ENOTFOUND:
		case err != nil:
			return nil, err
		case tok.UserID != user:
		case ttl > 0 && (tok.ExpiresAt == nil || tok.ExpiresAt.After(opts.Now().Add(ttl))):
		default:
			return &servedToken{tok: tok, secret: secret, kept: path, reused: true}, nil
		}
	}
	tok, secret, err := tokens.CreateToken(ctx, user, "serve "+loom.FormatTime(opts.Now()), ttl)
	if err != nil {
		return nil, err
	}
	st := &servedToken{tok: tok, secret: secret, kept: path}
	if err := command.WriteSecret(d.State, path, secret); err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "loom: warning: the token cannot be kept for the next start: %v\n", err)
		st.kept = ""
	}
	return st, nil
}

// readServeToken returns the secret kept in path, or "" when there is
// none to use (readSecret), and then the server makes a new one.
func readServeToken(errOut io.Writer, path string) string {
	b, err := command.ReadSecret(errOut, path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(errOut, "loom: warning: %v; making a new token\n", err)
		}
		return ""
	}
	secret := strings.TrimSpace(string(b))
	if !strings.HasPrefix(secret, loom.TokenPrefix) || strings.ContainsAny(secret, " \t\r\n") {
		return ""
	}
	return secret
}

// servedTokenNote tells, on loom serve's stderr, which token the printed
// address holds and where it is kept for the next start.
func servedTokenNote(st *servedToken) string {
	var b strings.Builder
	switch {
	case st.reused:
		fmt.Fprintf(&b, "Same token as at the last start (%s, kept in %s)", st.tok.ID, st.kept)
	case st.kept != "":
		fmt.Fprintf(&b, "New token %s, kept in %s for the next start", st.tok.ID, st.kept)
	default:
		fmt.Fprintf(&b, "New token %s", st.tok.ID)
	}
	if st.tok.ExpiresAt != nil {
		fmt.Fprintf(&b, "; it expires %s", st.tok.ExpiresAt.Local().Format("Jan 2, 2006 15:04 MST"))
	}
	fmt.Fprintf(&b, ". 'loom token revoke %s' ends it.", st.tok.ID)
	return b.String()
}
