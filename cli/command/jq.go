package command

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/itchyny/gojq"
)

// jqFilter runs the --jq expression over what a command writes on
// standard output: each JSON value, as it comes (so a stream of values,
// one per line, is filtered as it is written), becomes the expression's
// results, a string written as it is and anything else as JSON.
type jqFilter struct {
	pw   *io.PipeWriter
	done chan error
}

// startJQ compiles expr and puts the filter between the command and
// standard output; finishJQ waits for it.
func (inv *Invocation) startJQ(expr string) error {
	q, err := gojq.Parse(expr)
	if err != nil {
		return UsageErrorf("--jq: %v", err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return UsageErrorf("--jq: %v", err)
	}
	out, indent := inv.IO.Out, inv.IO.IsStdoutTTY()
	pr, pw := io.Pipe()
	f := &jqFilter{pw: pw, done: make(chan error, 1)}
	go func() {
		err := runJQ(code, pr, out, indent)
		// Drain what the command still writes, so that it never blocks.
		_, _ = io.Copy(io.Discard, pr)
		f.done <- err
	}()
	inv.IO.Out = pw
	inv.jq = f
	return nil
}

// runJQ decodes the JSON values read from r and writes code's results
// for each to w.
func runJQ(code *gojq.Code, r io.Reader, w io.Writer, indent bool) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	n := 0
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			if n == 0 {
				return errors.New("--jq: the command printed no JSON (it may have no --json output)")
			}
			return fmt.Errorf("--jq: the command's output: %w", err)
		}
		n++
		iter := code.Run(v)
		for {
			res, ok := iter.Next()
			if !ok {
				break
			}
			if err, ok := res.(error); ok {
				var halt *gojq.HaltError
				if errors.As(err, &halt) && halt.Value() == nil {
					return nil
				}
				return fmt.Errorf("--jq: %w", err)
			}
			if err := writeJQ(w, res, indent); err != nil {
				return err
			}
		}
	}
}

// writeJQ writes one result: a string raw, anything else as JSON,
// indented on a terminal and on one line for a pipe.
func writeJQ(w io.Writer, v any, indent bool) error {
	if s, ok := v.(string); ok {
		_, err := io.WriteString(w, s+"\n")
		return err
	}
	b, err := gojq.Marshal(v)
	if err != nil {
		return fmt.Errorf("--jq: %w", err)
	}
	if indent {
		var buf bytes.Buffer
		if json.Indent(&buf, b, "", "  ") == nil {
			b = buf.Bytes()
		}
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// FinishOutput ends what stands between the command and standard
// output (the --jq filter): it waits until everything written is
// filtered and returns the filter's error.
func (inv *Invocation) FinishOutput() error {
	if inv.jq == nil {
		return nil
	}
	inv.jq.pw.Close()
	err := <-inv.jq.done
	inv.jq = nil
	return err
}
