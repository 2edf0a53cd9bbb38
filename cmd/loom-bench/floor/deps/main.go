// Command deps prints a version line, as hello does, but links the
// libraries loom links: the third-party packages loom imports and the
// heavier parts of the standard library it uses. Their package
// initialisation runs before main whether a command uses them or not, so
// beside hello it measures what linking them costs a process, and beside
// loom version what loom's own code costs.
package main

import (
	_ "crypto/tls"
	"fmt"
	_ "html/template"
	_ "log/slog"
	_ "net/http"
	_ "os/exec"
	_ "os/signal"
	"runtime"

	_ "charm.land/bubbles/v2/key"
	_ "charm.land/bubbles/v2/list"
	_ "charm.land/bubbles/v2/textarea"
	_ "charm.land/bubbles/v2/textinput"
	_ "charm.land/bubbletea/v2"
	_ "charm.land/lipgloss/v2"
	_ "github.com/BurntSushi/toml"
	_ "github.com/adrg/xdg"
	_ "github.com/charmbracelet/colorprofile"
	_ "github.com/charmbracelet/x/ansi"
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/goccy/go-json"
	_ "github.com/google/uuid"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/kljensen/snowball/english"
	_ "github.com/modelcontextprotocol/go-sdk/auth"
	_ "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/spf13/cobra"
	_ "github.com/yuin/goldmark"
	_ "github.com/yuin/goldmark/extension"
	_ "github.com/yuin/goldmark/renderer/html"
	_ "golang.org/x/crypto/chacha20poly1305"
	_ "golang.org/x/term"
	_ "modernc.org/sqlite"
)

func main() {
	fmt.Printf("deps dev (%s, %s/%s)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
