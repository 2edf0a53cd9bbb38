package clitest

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/serve"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/internal/testkit/syncio"
	"github.com/loomhq/loom/openai"
	"github.com/loomhq/loom/server"
)

// serving is loom serve running in process.
type serving struct {
	Base, Token string
	out, ErrOut *syncio.Buffer
	Stop        func() error
}

var ServeURL = regexp.MustCompile(`loom serve: (http://[^/]+)/\?token=(\S+)`)

// StartServe runs serve.Run on an ephemeral port with env and waits until
// it listens.
func StartServe(t *testing.T, fx *Fixture, env map[string]string, user string) *serving {
	t.Helper()
	ios, _, _, _ := term.Test()
	sv := &serving{out: &syncio.Buffer{}, ErrOut: &syncio.Buffer{}}
	ios.Out, ios.ErrOut = sv.out, sv.ErrOut
	all := fx.Env()
	for k, v := range env {
		all[k] = v
	}
	inv := command.NewInvocation(&cli.Factory{
		IO:            ios,
		Env:           func(k string) string { return all[k] },
		Getwd:         func() (string, error) { return fx.Project, nil },
		OpenStore:     OpenFor,
		OpenReplica:   OpenReplicaFor,
		Now:           time.Now,
		Providers:     TestProviders(),
		Serve:         testServe,
		LocalModelURL: "http://127.0.0.1:1/v1", // nothing listens: no local model
	})
	if user != "" {
		all["LOOM_USER"] = user // as --user would
	}
	listening := make(chan string, 1)
	opts := serve.NewOptions(inv)
	opts.User, opts.Addr, opts.Grace, opts.Listening = inv.User(), "127.0.0.1:0", 2*time.Second, func(a string) { listening <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := serve.Run(ctx, opts)
		inv.Close()
		done <- err
	}()
	select {
	case <-listening:
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v\n%s", err, sv.ErrOut)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	m := ServeURL.FindStringSubmatch(sv.out.String())
	if m == nil {
		cancel()
		t.Fatalf("serve printed no URL with a token: %q", sv.out)
	}
	sv.Base, sv.Token = m[1], m[2]
	stopped := false
	sv.Stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop")
			return nil
		}
	}
	t.Cleanup(func() { sv.Stop() })
	return sv
}

func (sv *serving) Do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, sv.Base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+sv.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// testServe runs the HTTP server as main wires it, for in-process runs.
func testServe(ctx context.Context, ln net.Listener, c cli.ServeConfig) error {
	return server.New(server.Config{Store: c.Store, Tokens: c.Tokens, Agent: c.Agent, Logger: c.Logger, MCP: &c.MCP,
		Blame: &server.BlameConfig{Owner: c.Owner, Cache: c.BlameCache}, Team: server.TeamOf(c.Team), HubKey: c.HubKey}).Serve(ctx, ln, c.Grace)
}

// TestProviders are the providers main builds in, for in-process runs.
func TestProviders() map[string]agent.ProviderFunc {
	return map[string]agent.ProviderFunc{
		"openai": func(e config.Endpoint) loom.Provider {
			return openai.New(openai.Config{APIKey: e.APIKey, BaseURL: e.BaseURL, MaxRetries: -1})
		},
	}
}
