package codex

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/loomhq/loom/importer"
)

// stateDB is the database in which Codex CLI (0.1xx) keeps its threads;
// `codex resume --last` looks for the newest thread of the working
// directory and the configured model provider there, not among the
// rollout files.
const stateDB = "state_5.sqlite"

// maxConfig bounds the config.toml read for its model provider.
const maxConfig = 1 << 20

// stateWait bounds how long registering a thread waits for a Codex that
// is writing the database.
const stateWait = 2 * time.Second

// thread is what registering a handed-off rollout tells Codex's thread
// table.
type thread struct {
	id, path, cwd, prompt, branch string
	// created is the session's start; updated when the rollout was
	// written, which makes it the newest thread of its directory.
	created, updated time.Time
}

// registerThread adds the handed-off rollout t to the threads table of
// Codex's state database under dir ($CODEX_HOME), so that `codex resume
// --last` takes it like one of Codex's own. It does nothing when there
// is no such database (Codex has not run here, and builds it from the
// rollout files when it first does) or its table lacks a column it
// needs. The thread takes the model provider of Codex's configuration
// (--last looks for threads of that provider) and the sandbox and
// approval settings of the newest thread already there; Codex writes
// its own when it resumes the thread.
func registerThread(ctx context.Context, dir string, t thread) error {
	path := filepath.Join(dir, stateDB)
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, stateWait+time.Second)
	defer cancel()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+fmt.Sprintf("?_pragma=busy_timeout(%d)", stateWait.Milliseconds()))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	cols, err := columns(ctx, db)
	if err != nil {
		return err
	}
	for _, c := range []string{"id", "rollout_path", "created_at", "updated_at", "source", "model_provider", "cwd", "title", "sandbox_policy", "approval_mode"} {
		if !cols[c] {
			return nil // another schema than the one known here
		}
	}
	sandbox, approval := "", ""
	// The settings of the newest thread: none yet is fine.
	_ = db.QueryRowContext(ctx, `SELECT sandbox_policy, approval_mode FROM threads ORDER BY updated_at DESC LIMIT 1`).Scan(&sandbox, &approval)
	preview := t.prompt
	if r := []rune(preview); len(r) > 200 {
		preview = string(r[:200])
	}
	set := map[string]any{
		"id": t.id, "rollout_path": t.path, "created_at": t.created.Unix(), "updated_at": t.updated.Unix(),
		"source": "cli", "model_provider": modelProvider(dir), "cwd": t.cwd, "title": preview,
		"sandbox_policy": sandbox, "approval_mode": approval,
		"created_at_ms": t.created.UnixMilli(), "updated_at_ms": t.updated.UnixMilli(),
		"cli_version": "0.0.0", "first_user_message": t.prompt, "preview": preview,
		"has_user_event": 1, "originator": handoffOriginator,
	}
	if t.branch != "" {
		set["git_branch"] = t.branch
	}
	var names, marks []string
	var args []any
	for name, v := range set {
		if cols[name] {
			names, marks, args = append(names, name), append(marks, "?"), append(args, v)
		}
	}
	_, err = db.ExecContext(ctx, `INSERT OR IGNORE INTO threads (`+strings.Join(names, ", ")+`) VALUES (`+strings.Join(marks, ", ")+`)`, args...)
	return err
}

// columns is the set of the threads table's columns.
func columns(ctx context.Context, db *sql.DB) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info('threads')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		cols[name] = true
	}
	return cols, rows.Err()
}

// config is what a handoff reads of Codex's config.toml under dir: the
// model provider and model the active profile names, else the file's
// own, and whether it turns on features.code_mode_only. A config Codex
// cannot read either names nothing.
type config struct {
	provider, model string
	codeModeOnly    bool
}

// settings are the keys of a config.toml or of one of its profiles.
type settings struct {
	ModelProvider string `toml:"model_provider"`
	Model         string `toml:"model"`
	Features      struct {
		CodeModeOnly *bool `toml:"code_mode_only"`
	} `toml:"features"`
}

func readConfig(dir string) config {
	var cfg struct {
		settings
		Profile  string              `toml:"profile"`
		Profiles map[string]settings `toml:"profiles"`
	}
	if f, _, err := importer.Open(filepath.Join(dir, "config.toml"), maxConfig); err == nil {
		_, _ = toml.NewDecoder(f).Decode(&cfg)
		f.Close()
	}
	c := config{provider: cfg.ModelProvider, model: cfg.Model, codeModeOnly: cfg.Features.CodeModeOnly != nil && *cfg.Features.CodeModeOnly}
	if p, ok := cfg.Profiles[cfg.Profile]; ok {
		c.provider = cmp.Or(p.ModelProvider, c.provider)
		c.model = cmp.Or(p.Model, c.model)
		if p.Features.CodeModeOnly != nil {
			c.codeModeOnly = *p.Features.CodeModeOnly
		}
	}
	return c
}

// modelProvider is the model provider Codex's config.toml under dir
// names (the active profile's, else its own), "openai" when it names
// none.
func modelProvider(dir string) string {
	return cmp.Or(readConfig(dir).provider, "openai")
}
