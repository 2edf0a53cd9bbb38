package gemini

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// oneDocument is a one-document recording, as Gemini CLI writes it whole.
var oneDocument = filepath.Join("testdata", "tmp", "604d4331967fb6b76ad7112ac89983c76dd7208b059b54a7df4fc4ab34c4ddf9", "chats", "session-2025-11-20T10-00-22222222.json")

// writeOld writes body to file as written an hour ago: a file still for
// that long is read once, whatever it holds.
func writeOld(t *testing.T, file, body string) {
	t.Helper()
	importertest.WriteFile(t, file, []byte(body), 0o600)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
}

// onWait sets testHookWait for the test: each wait for a file to change
// is sent on the channel returned, when there is room.
func onWait(t *testing.T) <-chan string {
	t.Helper()
	waits := make(chan string, 8)
	testHookWait = func(file string) {
		select {
		case waits <- file:
		default:
		}
	}
	t.Cleanup(func() { testHookWait = nil })
	return waits
}

// readAside reads file in the background.
func readAside(ctx context.Context, file string) <-chan error {
	done := make(chan error, 1)
	go func() {
		res, err := Format{}.Read(ctx, importer.Bundle{Files: []string{file}})
		if err == nil && len(res.Sessions) == 0 {
			err = errors.New("no session read")
		}
		done <- err
	}()
	return done
}

// A one-document recording caught while Gemini CLI writes it (truncated
// and empty, or written half) is waited for: once the write ends, the
// read returns the whole recording, as a read of the finished file does.
func TestReadCaughtWriting(t *testing.T) {
	whole := importertest.ReadBytes(t, oneDocument)
	want := read(t, oneDocument)
	end := len(bytes.TrimRight(whole, "\n"))
	for name, written := range map[string]int{"empty": 0, "half written": end / 2, "all but its last brace": end - 1} {
		t.Run(name, func(t *testing.T) {
			waits := onWait(t)
			file := filepath.Join(t.TempDir(), "chats", filepath.Base(oneDocument))
			os.MkdirAll(filepath.Dir(file), 0o700)
			f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write(whole[:written]); err != nil {
				t.Fatal(err)
			}
			done := readAside(context.Background(), file)
			select {
			case <-waits:
			case err := <-done:
				t.Fatalf("the read of a recording cut short returned at once: %v", err)
			}
			if _, err := f.Write(whole[written:]); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("once the write ended: %v", err)
			}
			got := read(t, file)
			for _, s := range got.Sessions {
				s.Path = ""
			}
			for _, s := range want.Sessions {
				s.Path = ""
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read once the write ended:\n%+v\nwant, as the finished file reads:\n%+v", got, want)
			}
		})
	}
}

// An import cancelled while its read waits for a recording to be
// written whole stops at once.
func TestReadCaughtWritingCancel(t *testing.T) {
	waits := onWait(t)
	file := filepath.Join(t.TempDir(), "session-2026-01-01T00-00-aaaaaaaa.json")
	importertest.WriteFile(t, file, []byte(`{"sessionId": "s", "messages": [`), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	done := readAside(ctx, file)
	select {
	case <-waits:
	case err := <-done:
		t.Fatalf("the read of a recording cut short returned at once: %v", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("read cancelled while it waits: %v, want context.Canceled", err)
	}
}

// A one-document recording that does not parse and has not changed for
// a while is not being written: it is an error at once, one line that
// says what is wrong.
func TestReadMalformedAtOnce(t *testing.T) {
	waits := onWait(t)
	dir := t.TempDir()
	for name, c := range map[string]struct{ body, want string }{
		"empty":     {"", "it is empty"},
		"blank":     {"\n  \n", "it is empty"},
		"cut short": {"{\n  \"sessionId\": \"x\",\n  \"messages\": [\n", "its JSON ends early (unexpected EOF)"},
		"broken":    {`{"sessionId": "x", "messages": [}`, "invalid character"},
	} {
		file := filepath.Join(dir, "session-"+strings.ReplaceAll(name, " ", "-")+".json")
		writeOld(t, file, c.body)
		_, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{file}})
		if err == nil || !strings.Contains(err.Error(), file+": not a Gemini CLI chat recording: "+c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line saying %q", name, err, c.want)
		}
	}
	select {
	case file := <-waits:
		t.Errorf("the read waited for %s to change", file)
	default:
	}
}
