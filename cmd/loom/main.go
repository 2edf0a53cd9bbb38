// Command loom manages durable, searchable, resumable sessions for AI
// agents. This file only wires the command line to the real streams,
// environment, store engines, model providers and HTTP server.
package main

import (
	"context"
	"net"
	"os"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/anthropic"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/agents"
	"github.com/loomhq/loom/openai"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/syncrun"
)

// version, commit and date are stamped by a release build (make release)
// with -ldflags "-X main.version=… -X main.commit=… -X main.date=…".
var version, commit, date string

func main() {
	f := &cli.Factory{
		IO:          term.System(),
		Env:         os.Getenv,
		Getwd:       os.Getwd,
		OpenStore:   openStore,
		OpenReplica: openReplica,
		StoreFile:   storeFile,
		Now:         time.Now,
		Version:     version,
		Commit:      commit,
		Date:        date,
		Serve:       serve,
		Formats:     formats(),
		Damage:      damage,
		Providers: map[string]agent.ProviderFunc{
			"openai": func(e config.Endpoint) loom.Provider {
				return openai.New(openai.Config{APIKey: e.APIKey, BaseURL: e.BaseURL})
			},
			"anthropic": func(e config.Endpoint) loom.Provider {
				return anthropic.New(anthropic.Config{APIKey: e.APIKey, BaseURL: e.BaseURL})
			},
		},
	}
	os.Exit(cli.Main(f, os.Args[1:]))
}

// formats are the other agents' session formats loom imports.
func formats() []importer.Format {
	return agents.Formats()
}

// serve runs the HTTP server for loom serve.
func serve(ctx context.Context, ln net.Listener, c cli.ServeConfig) error {
	srv := server.New(server.Config{Store: c.Store, Tokens: c.Tokens, Agent: c.Agent, Logger: c.Logger, MCP: &c.MCP, Searcher: c.Searcher,
		Blame: &server.BlameConfig{Owner: c.Owner, Cache: c.BlameCache}, Team: server.TeamOf(c.Team), HubKey: c.HubKey})
	return srv.Serve(ctx, ln, c.Grace)
}

// damage says what an error of the store's engine says of its file.
func damage(err error) cli.Damage {
	switch damaged, notADB := sqlite.Damage(err); {
	case damaged:
		return cli.Damaged
	case notADB:
		return cli.NotAStore
	}
	return cli.Undamaged
}

// openStore picks the engine from the store's URL: PostgreSQL for
// postgres:// URLs, SQLite for everything else (a path, sqlite:PATH or
// file:PATH), opened as the command's access needs. A PostgreSQL
// database is the server's to create and protect: access changes
// nothing there.
// openReplica opens the store a URL names for loom sync: a SQLite file,
// created when missing, is its own replica; a PostgreSQL store keeps no
// sync log of its own.
func openReplica(ctx context.Context, url string, opts ...sessionstore.Option) (loom.Engine, syncrun.Store, error) {
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		st, err := postgres.Open(ctx, url, opts...)
		if err != nil {
			return nil, nil, err
		}
		return st, nil, nil
	}
	st, err := sqlite.OpenMode(ctx, url, sqlite.ModeCreate, opts...)
	if err != nil {
		return nil, nil, err
	}
	return st, st, nil
}

// storeFile is the file of a SQLite store's URL, and "" for
// PostgreSQL's.
func storeFile(url string) string {
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		return ""
	}
	return sqlite.FilePath(url)
}

func openStore(ctx context.Context, url string, access cli.Access, opts ...sessionstore.Option) (loom.Engine, error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		st, err := postgres.Open(ctx, url, opts...)
		if err != nil {
			return nil, err
		}
		return st, nil
	default:
		mode := sqlite.ModeCreate
		switch access {
		case cli.AccessRead:
			mode = sqlite.ModeRead
		case cli.AccessWrite:
			mode = sqlite.ModeWrite
		}
		st, err := sqlite.OpenMode(ctx, url, mode, opts...)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
}
