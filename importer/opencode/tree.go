package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/safefile"
)

// maxRecord bounds one record: a file of the tree or a data column of
// the database. opencode truncates tool outputs long before this; what
// is larger is reported, not held in memory. Tests lower it.
var maxRecord int64 = 64 << 20

// readTree reads one session of the storage tree: b.Files[0] is its
// session file, the others its message and part files, each read with
// read (readFile, but for tests).
func readTree(ctx context.Context, b importer.Bundle, read func(string) ([]byte, error)) (*importer.Result, error) {
	res := &importer.Result{}
	file := b.Files[0]
	if !isJSON(filepath.Base(file)) {
		return nil, fmt.Errorf("opencode: %s is not a session file", file)
	}
	src := &source{ID: strings.TrimSuffix(filepath.Base(file), ".json"), File: file}
	// A malformed session file is reported; its messages are still read.
	if err := readRecord(read, file, &src.Info, res); err != nil && !errors.Is(err, errMalformed) {
		return nil, fmt.Errorf("opencode: %w", err)
	}
	index := map[string]int{}
	for _, f := range b.Files[1:] {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		owner := filepath.Base(filepath.Dir(f))
		id := strings.TrimSuffix(filepath.Base(f), ".json")
		switch filepath.Base(filepath.Dir(filepath.Dir(f))) {
		case "message":
			if owner != src.ID {
				res.Problemf(f, 0, "message of another session ("+owner+")")
				continue
			}
			if _, dup := index[id]; dup {
				continue
			}
			m := sourceMessage{ID: id, File: f}
			if err := readRecord(read, f, &m.Info, res); err != nil {
				readFailed(res, f, err)
				continue
			}
			index[id] = len(src.Messages)
			src.Messages = append(src.Messages, m)
		case "part":
			i, ok := index[owner]
			if !ok {
				res.Skip("orphan-part")
				continue
			}
			p := sourcePart{ID: id, File: f}
			if err := readRecord(read, f, &p.Info, res); err != nil {
				readFailed(res, f, err)
				continue
			}
			src.Messages[i].Parts = append(src.Messages[i].Parts, p)
		default:
			res.Problemf(f, 0, "not a message or part file of opencode's storage")
		}
	}
	res.Sessions = []*importer.Session{src.session(res)}
	return res, nil
}

// readFailed reports a message or part file that could not be read. One
// that vanished since Bundles listed it was deleted by opencode (a
// reverted message): it is not a problem. Parts of a message that could
// not be read are counted as orphans.
func readFailed(res *importer.Result, file string, err error) {
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errMalformed) {
		res.Unreadablef(file, 0, err.Error())
	}
}

// errMalformed marks a record that was read but could not be decoded;
// readRecord has reported it.
var errMalformed = errors.New("malformed record")

// readRecord decodes the JSON file name, read with read, into v. A file
// that is not valid JSON, or too large, is reported as a problem in res
// and errMalformed returned; an error reading it is returned as is.
func readRecord(read func(string) ([]byte, error), name string, v any, res *importer.Result) error {
	data, err := read(name)
	if errors.Is(err, errTooLarge) {
		res.Unreadablef(name, 0, "larger than "+size(maxRecord))
		return errMalformed
	}
	if err != nil {
		return err
	}
	if line, reason := decode(data, v); reason != "" {
		res.Unreadablef(name, line, reason)
		return errMalformed
	}
	res.CheckUTF8(name, 0, data)
	return nil
}

// errTooLarge is a file larger than maxRecord.
var errTooLarge = errors.New("too large")

// readFile reads a regular file of at most maxRecord bytes.
func readFile(name string) ([]byte, error) {
	f, _, err := importer.Open(name, maxRecord)
	if errors.Is(err, safefile.ErrTooLarge) {
		return nil, errTooLarge
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > maxRecord {
		return nil, errTooLarge
	}
	return data, nil
}

// decode unmarshals one JSON record into v; on failure it returns the
// 1-based line of the error (0 when unknown) and why.
func decode(data []byte, v any) (line int, reason string) {
	err := json.Unmarshal(data, v)
	if err == nil {
		return 0, ""
	}
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if off >= 0 && off <= int64(len(data)) {
		line = 1 + bytes.Count(data[:off], []byte("\n"))
	}
	return line, "invalid JSON: " + err.Error()
}

// size says n bytes in MiB, or in bytes below one.
func size(n int64) string {
	if n >= 1<<20 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
