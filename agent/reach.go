package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/config"
)

// UnreachableError is a model call that never reached its provider: the
// address did not answer (refused, no such host, no route). It says in
// one line which provider, at which address, and what set the address,
// for the user to start the server or fix the setting.
type UnreachableError struct {
	Provider string
	// Addr is the provider's base URL; From is what set it (an
	// environment variable, config.toml, or loom's default).
	Addr, From string
	// Cause is the network's reason ("connection refused").
	Cause string
	Err   error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach %s at %s (set by %s): %s", e.Provider, e.Addr, e.From, e.Cause)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// IsUnreachable reports whether err is a model call that never reached
// its provider.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	return errors.As(err, &u)
}

// placed is a provider that knows where it is and what said so, to name
// both when it cannot be reached.
type placed struct {
	loom.Provider
	addr, from string
}

func (p placed) Stream(ctx context.Context, req *loom.ModelRequest, onEvent func(loom.StreamEvent)) (*loom.ModelResponse, error) {
	res, err := p.Provider.Stream(ctx, req, onEvent)
	if err != nil && ctx.Err() == nil {
		if cause, ok := unreachable(err); ok {
			return nil, &UnreachableError{Provider: p.Name(), Addr: p.addr, From: p.from, Cause: cause, Err: err}
		}
	}
	return res, err
}

// unreachable reports whether err is a failure to connect, and its
// reason without Go's wording around it ("connection refused", "no such
// host").
func unreachable(err error) (string, bool) {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "no such host " + dns.Name, true
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		return "", false
	}
	cause := op.Err.Error()
	if i := strings.LastIndex(cause, ": "); i >= 0 {
		cause = cause[i+2:] // "connect: connection refused"
	}
	return cause, true
}

// placedAt wraps p with its address e.BaseURL (def when empty) and what
// set it: env names the variable that overrides config.toml's
// [section] base_url.
func (su *Setup) placedAt(p loom.Provider, e config.Endpoint, def, env, section string) loom.Provider {
	addr, from := e.BaseURL, "loom's default"
	switch {
	case addr == "":
		addr = def
	case su.env(env) != "":
		from = env
	default:
		from = "[" + section + "] base_url in " + su.Dirs.ConfigFile()
	}
	return placed{Provider: p, addr: addr, from: from}
}

// localFrom is what set the address of the local server loom found.
func (su *Setup) localFrom() string {
	if su.env("OLLAMA_HOST") != "" {
		return "OLLAMA_HOST"
	}
	return "loom's default for a local server"
}
