// Package syncio has what tests need to watch a stream that another
// goroutine (a server, a subprocess's pipe copier, a logger) writes.
package syncio

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that may be read while another goroutine
// writes to it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
