package command

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/embedding"
	"github.com/loomhq/loom/semantic"
)

// Embeddings finds the embeddings endpoint that search by meaning uses,
// as f's configuration and environment say, and builds the searchers
// over it.
type Embeddings struct{ f *Factory }

// EmbeddingsOf is the embeddings endpoint as f finds it.
func EmbeddingsOf(f *Factory) Embeddings { return Embeddings{f: f} }

// Searcher returns the searcher of st: keyword search fused with search
// by meaning when an embeddings endpoint is at hand (see Client).
func (e Embeddings) Searcher(ctx context.Context, st loom.Engine) *semantic.Searcher {
	c, _ := e.Client(ctx)
	return &semantic.Searcher{Store: st, Client: c}
}

// Client returns the client of the embeddings endpoint config.toml
// names, or of a local server at the chat model's address that has the
// embedding model; nil when there is none. The first time there is none
// on this machine, it says so in one line on stderr when that is a
// terminal (a file in the state directory remembers it was said).
func (e Embeddings) Client(ctx context.Context) (*embedding.Client, string) {
	f := e.f
	cfg, _, err := f.Config()
	if err != nil {
		return nil, err.Error()
	}
	c, why := embedding.Find(ctx, cfg.Embeddings, f.LocalModelURL, f.Getenv)
	if c == nil && (cfg.Embeddings.Enabled == nil || *cfg.Embeddings.Enabled) {
		// Said once, short: a user who turned it off is not told.
		sayOnce(f, "embeddings-off", f.IO.WrapErr("Search ranks by keywords: "+why+"."))
	}
	return c, why
}

// sayOnce writes line to stderr, when that is a terminal, unless a file
// named name in the state directory says it was written before.
func sayOnce(f *Factory, name, line string) {
	if !f.IO.IsStderrTTY() {
		return
	}
	d, err := f.Dirs()
	if err != nil || d.State == "" {
		return
	}
	mark := filepath.Join(d.State, "said", name)
	if _, err := os.Stat(mark); err == nil {
		return
	}
	fmt.Fprintln(f.IO.ErrOut, line)
	if os.MkdirAll(filepath.Dir(mark), 0o700) == nil {
		os.WriteFile(mark, nil, 0o600)
	}
}

// Searchers returns the searcher of each store it is given, the same one
// for the same store so that its vectors are read once, ranking by
// meaning where an embeddings endpoint is at hand (looked for at the
// first search).
func (e Embeddings) Searchers(ctx context.Context) func(loom.Reader) *semantic.Searcher {
	var mu sync.Mutex
	var found bool
	var client *embedding.Client
	byStore := map[loom.Reader]*semantic.Searcher{}
	return func(st loom.Reader) *semantic.Searcher {
		mu.Lock()
		defer mu.Unlock()
		if !found {
			client, _ = e.Client(ctx)
			found = true
		}
		s := byStore[st]
		if s == nil {
			s = &semantic.Searcher{Store: st, Client: client}
			byStore[st] = s
		}
		return s
	}
}
