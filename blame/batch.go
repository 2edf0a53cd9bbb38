package blame

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// pipe is a git process that answers many questions, one a line on its
// standard input, for the length of a call that blames many files (git
// cat-file --batch for objects, git diff-tree --stdin for the files of
// commits): one process where a question each would start one. Asked
// one question at a time. A pipe that fails (git gone, an object git
// cannot read) is closed, and what it would have answered is asked of
// a process of its own, which says why.
type pipe struct {
	mu     sync.Mutex
	args   []string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	broken bool
}

// ask writes q (a line) to the process, started on first use, and
// reads its answer with read; false when the pipe could not answer.
func (p *pipe) ask(ctx context.Context, g Git, q string, read func(*bufio.Reader) error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken {
		return false
	}
	if p.cmd == nil && !p.start(ctx, g) {
		return false
	}
	if _, err := io.WriteString(p.in, q+"\n"); err != nil {
		p.stop()
		return false
	}
	if err := read(p.out); err != nil {
		p.stop()
		return false
	}
	return true
}

// start starts the process in g's work tree.
func (p *pipe) start(ctx context.Context, g Git) bool {
	bin := g.Bin
	if bin == "" {
		bin = "git"
	}
	cmd := exec.CommandContext(ctx, bin, p.args...)
	cmd.Dir = g.Dir
	cmd.Env = append(cmd.Environ(), "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	in, err := cmd.StdinPipe()
	if err != nil {
		p.broken = true
		return false
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		p.broken = true
		return false
	}
	if err := cmd.Start(); err != nil {
		p.broken = true
		return false
	}
	p.cmd, p.in, p.out = cmd, in, bufio.NewReaderSize(out, 64<<10)
	return true
}

// stop ends the process; the pipe answers nothing after.
func (p *pipe) stop() {
	p.broken = true
	if p.cmd == nil {
		return
	}
	p.in.Close()
	// What git had left to say is read so that it can end.
	io.Copy(io.Discard, p.out)
	p.cmd.Wait()
	p.cmd = nil
}

// close ends the process once its call is done.
func (p *pipe) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop()
}

// catBlob is what git show rev:rel gives of a blob, read through git
// cat-file --batch: ok false when the pipe cannot tell (then git show
// is asked, for its content or its own words why not).
func (s *shared) catBlob(ctx context.Context, g Git, spec string) (b []byte, missing, ok bool) {
	if strings.Contains(spec, "\n") {
		return nil, false, false
	}
	var blob []byte
	gone, other := false, false
	ok = s.cat.ask(ctx, g, spec, func(r *bufio.Reader) error {
		head, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		// "<object> SP <type> SP <size> LF <contents> LF", or
		// "<spec> SP missing LF" (and "ambiguous").
		head = strings.TrimSuffix(head, "\n")
		if strings.HasSuffix(head, " missing") || strings.HasSuffix(head, " ambiguous") {
			gone = true
			return nil
		}
		f := strings.Fields(head)
		if len(f) != 3 {
			return fmt.Errorf("cat-file said %q", head)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return err
		}
		content := make([]byte, n+1)
		if _, err := io.ReadFull(r, content); err != nil {
			return err
		}
		// git show lists a tree and shows a commit: asked of it.
		other = f[1] != "blob"
		blob = content[:n]
		return nil
	})
	return blob, gone, ok && !other
}

// commitFiles is what git diff-tree --name-only -r -m --root commit
// gives, read through git diff-tree --stdin: a line that names no
// object is echoed by git after the commit's files, which tells where
// they end (no path can be "//").
func (s *shared) commitFiles(ctx context.Context, g Git, commit string) ([]byte, bool) {
	const end = "//"
	var out []byte
	ok := s.tree.ask(ctx, g, commit+"\n"+end, func(r *bufio.Reader) error {
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return err
			}
			if l == end+"\n" {
				return nil
			}
			out = append(out, l...)
		}
	})
	return out, ok
}
