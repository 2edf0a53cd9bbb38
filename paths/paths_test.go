package paths

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/adrg/xdg"

	"github.com/loomhq/loom"
)

// mapEnv returns an env lookup backed by m, so tests never depend on the
// environment of the machine running them.
func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name string
		goos string
		env  map[string]string
		want Dirs
	}{
		{
			name: "LOOM_HOME wins over XDG and HOME",
			goos: "linux",
			env: map[string]string{
				"LOOM_HOME":     "/srv/loom",
				"HOME":          "/home/ann",
				"XDG_DATA_HOME": "/xdg/data",
			},
			want: Dirs{Data: "/srv/loom/data", State: "/srv/loom/state", Config: "/srv/loom/config", Cache: "/srv/loom/cache"},
		},
		{
			name: "LOOM_HOME is cleaned",
			goos: "linux",
			env:  map[string]string{"LOOM_HOME": "/srv//loom/x/../"},
			want: Dirs{Data: "/srv/loom/data", State: "/srv/loom/state", Config: "/srv/loom/config", Cache: "/srv/loom/cache"},
		},
		{
			name: "LOOM_HOME applies on macOS too",
			goos: "darwin",
			env:  map[string]string{"LOOM_HOME": "/srv/loom"},
			want: Dirs{Data: "/srv/loom/data", State: "/srv/loom/state", Config: "/srv/loom/config", Cache: "/srv/loom/cache"},
		},
		{
			name: "HOME fallback",
			goos: "linux",
			env:  map[string]string{"HOME": "/home/ann"},
			want: Dirs{
				Data:   "/home/ann/.local/share/loom",
				State:  "/home/ann/.local/state/loom",
				Config: "/home/ann/.config/loom",
				Cache:  "/home/ann/.cache/loom",
			},
		},
		{
			name: "XDG variables honoured",
			goos: "linux",
			env: map[string]string{
				"HOME":            "/home/ann",
				"XDG_DATA_HOME":   "/x/data",
				"XDG_STATE_HOME":  "/x/state",
				"XDG_CONFIG_HOME": "/x/config",
				"XDG_CACHE_HOME":  "/x/cache/",
			},
			want: Dirs{Data: "/x/data/loom", State: "/x/state/loom", Config: "/x/config/loom", Cache: "/x/cache/loom"},
		},
		{
			name: "XDG variables without HOME",
			goos: "linux",
			env: map[string]string{
				"XDG_DATA_HOME":   "/x/data",
				"XDG_STATE_HOME":  "/x/state",
				"XDG_CONFIG_HOME": "/x/config",
				"XDG_CACHE_HOME":  "/x/cache",
			},
			want: Dirs{Data: "/x/data/loom", State: "/x/state/loom", Config: "/x/config/loom", Cache: "/x/cache/loom"},
		},
		{
			name: "some XDG variables, HOME for the rest",
			goos: "linux",
			env:  map[string]string{"HOME": "/home/ann", "XDG_STATE_HOME": "/x/state"},
			want: Dirs{
				Data:   "/home/ann/.local/share/loom",
				State:  "/x/state/loom",
				Config: "/home/ann/.config/loom",
				Cache:  "/home/ann/.cache/loom",
			},
		},
		{
			name: "relative XDG variable ignored",
			goos: "linux",
			env:  map[string]string{"HOME": "/home/ann", "XDG_DATA_HOME": "rel/data"},
			want: Dirs{
				Data:   "/home/ann/.local/share/loom",
				State:  "/home/ann/.local/state/loom",
				Config: "/home/ann/.config/loom",
				Cache:  "/home/ann/.cache/loom",
			},
		},
		{
			name: "other XDG platforms use the same rules",
			goos: "freebsd",
			env:  map[string]string{"HOME": "/usr/home/ann", "XDG_CONFIG_HOME": "/x/config"},
			want: Dirs{
				Data:   "/usr/home/ann/.local/share/loom",
				State:  "/usr/home/ann/.local/state/loom",
				Config: "/x/config/loom",
				Cache:  "/usr/home/ann/.cache/loom",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if runtime.GOOS == "windows" {
				t.Skip("expected values are Unix paths")
			}
			got, err := resolve(mapEnv(tt.env), tt.goos)
			if err != nil {
				t.Fatalf("resolve: %v", err)
			}
			if got != tt.want {
				t.Errorf("resolve =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
	}{
		{"nothing set", map[string]string{}},
		{"relative HOME", map[string]string{"HOME": "home/ann"}},
		{"HOME missing for one directory", map[string]string{
			"XDG_DATA_HOME": "/x/data", "XDG_STATE_HOME": "/x/state", "XDG_CONFIG_HOME": "/x/config",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := resolve(mapEnv(tt.env), "linux")
			if err == nil {
				t.Fatalf("resolve = %+v, want error", d)
			}
			if code := loom.ErrorCode(err); code != loom.EINVALID {
				t.Errorf("ErrorCode = %q, want %q", code, loom.EINVALID)
			}
		})
	}
}

func TestResolveRelativeLoomHome(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	d, err := resolve(mapEnv(map[string]string{"LOOM_HOME": "rel"}), "linux")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wd, "rel", "data"); d.Data != want {
		t.Errorf("Data = %q, want %q", d.Data, want)
	}
}

func TestResolvePlatformDirs(t *testing.T) {
	if xdg.DataHome == "" {
		t.Skip("xdg found no home directory")
	}
	for _, goos := range []string{"darwin", "windows"} {
		t.Run(goos, func(t *testing.T) {
			// HOME and XDG_* in env must not matter: those platforms
			// take xdg's directories.
			env := mapEnv(map[string]string{"HOME": "/elsewhere", "XDG_DATA_HOME": "/elsewhere/data"})
			d, err := resolve(env, goos)
			if err != nil {
				t.Fatal(err)
			}
			want := Dirs{
				Data:   filepath.Join(xdg.DataHome, "loom"),
				State:  filepath.Join(xdg.StateHome, "loom"),
				Config: filepath.Join(xdg.ConfigHome, "loom"),
				Cache:  filepath.Join(xdg.CacheHome, "loom"),
			}
			if d != want {
				t.Errorf("resolve =\n %+v\nwant\n %+v", d, want)
			}
		})
	}
}

func TestResolveProcessEnv(t *testing.T) {
	home := t.TempDir()
	t.Setenv("LOOM_HOME", home)
	for name, env := range map[string]func(string) string{"os.Getenv": os.Getenv, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			d, err := Resolve(env)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(home, "data"); d.Data != want {
				t.Errorf("Data = %q, want %q", d.Data, want)
			}
			if want := filepath.Join(home, "cache"); d.Cache != want {
				t.Errorf("Cache = %q, want %q", d.Cache, want)
			}
		})
	}
}

func TestResolveXDGFromSetenv(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("XDG variables decide the directories only on Linux")
	}
	base := t.TempDir()
	t.Setenv("LOOM_HOME", "")
	t.Setenv("HOME", filepath.Join(base, "home"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "data"))
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	d, err := Resolve(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := Dirs{
		Data:   filepath.Join(base, "data", "loom"),
		State:  filepath.Join(base, "home", ".local", "state", "loom"),
		Config: filepath.Join(base, "home", ".config", "loom"),
		Cache:  filepath.Join(base, "home", ".cache", "loom"),
	}
	if d != want {
		t.Errorf("Resolve =\n %+v\nwant\n %+v", d, want)
	}
}

func TestDirsFiles(t *testing.T) {
	root := t.TempDir()
	d, err := Resolve(mapEnv(map[string]string{"LOOM_HOME": root}))
	if err != nil {
		t.Fatal(err)
	}
	j := filepath.Join
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"DB", d.DB(), j(root, "data", "sessions.db")},
		{"MemoryFile", d.MemoryFile(), j(root, "data", "MEMORY.md")},
		{"UserFile", d.UserFile(), j(root, "data", "USER.md")},
		{"LogsDir", d.LogsDir(), j(root, "state", "logs")},
		{"SessionLog", d.SessionLog("ann", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"),
			j(root, "state", "logs", "ann", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")},
		{"SessionLog sanitizes the user", d.SessionLog("john@example.com", "abc"),
			j(root, "state", "logs", "john_example_com", "abc.jsonl")},
		{"SessionLog cannot climb out", d.SessionLog("../..", "../../etc/passwd"),
			j(root, "state", "logs", "_____", "______etc_passwd.jsonl")},
		{"SessionLog empty names", d.SessionLog("", ""), j(root, "state", "logs", "_", "_.jsonl")},
		{"HistoryFile", d.HistoryFile(), j(root, "state", "history")},
		{"LocksDir", d.LocksDir(), j(root, "state", "locks")},
		{"ServeTokenFile", d.ServeTokenFile("ann"), j(root, "state", "serve-token-ann")},
		{"ServeTokenFile sanitizes the user", d.ServeTokenFile("../john@example.com"), j(root, "state", "serve-token-___john_example_com")},
		{"ConfigFile", d.ConfigFile(), j(root, "config", "config.toml")},
		{"ProfilesDir", d.ProfilesDir(), j(root, "config", "profiles")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestSessionLogStaysInLogsDir(t *testing.T) {
	d := Dirs{State: t.TempDir()}
	for _, user := range []string{"..", "../x", "/abs", `a\..\b`, "x/../../y", "."} {
		p := d.SessionLog(user, "..")
		rel, err := filepath.Rel(d.LogsDir(), p)
		if err != nil || strings.HasPrefix(rel, "..") || strings.Count(rel, string(filepath.Separator)) != 1 {
			t.Errorf("SessionLog(%q, ..) = %q escapes or nests under %q", user, p, d.LogsDir())
		}
	}
}

func TestSanitize(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"john@example.com", "john_example_com"},
		{"Plain-name_09", "Plain-name_09"},
		{"", "_"},
		{".", "_"},
		{"..", "__"},
		{"../etc/passwd", "___etc_passwd"},
		{`C:\Users\ann`, "C__Users_ann"},
		{"a b\tc\n", "a_b_c_"},
		{"café", "caf_"},
		{"日本語", "___"},
		{"👍ok", "_ok"},
		{"\xff\xfe", "__"},
		{"telegram:-100123", "telegram_-100123"},
		{"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Sanitize(tt.in); got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDBURL(t *testing.T) {
	d := Dirs{Data: "/d"}
	tests := []struct {
		name string
		flag string
		env  map[string]string
		want string
	}{
		{"flag wins", "postgres://db/loom", map[string]string{"LOOM_DB": "/env.db"}, "postgres://db/loom"},
		{"LOOM_DB without flag", "", map[string]string{"LOOM_DB": "sqlite:/env.db"}, "sqlite:/env.db"},
		{"default", "", map[string]string{}, d.DB()},
		{"flag without LOOM_DB", "/flag.db", map[string]string{}, "/flag.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DBURL(tt.flag, mapEnv(tt.env), d); got != tt.want {
				t.Errorf("DBURL = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("nil env reads the process", func(t *testing.T) {
		t.Setenv("LOOM_DB", "/from/process.db")
		if got := DBURL("", nil, d); got != "/from/process.db" {
			t.Errorf("DBURL = %q, want /from/process.db", got)
		}
	})
}
