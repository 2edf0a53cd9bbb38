//go:build unix

package recall

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// errLocked is lock's error when another holds the lock.
var errLocked = errors.New("locked")

// lock takes the lock of the file at path (flock, which the kernel
// drops when its process ends, however it ends) and writes this
// process's id in it, or fails with errLocked when another holds it.
// unlock empties the file and releases the lock.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		_ = f.Truncate(0)
		// Closing the file releases the lock.
		f.Close()
	}, nil
}

// lockHolder is the process id of the process that holds the lock of
// the file at path, 0 when none does. Where the file names no process
// (none took the lock, or the last let it go) it takes no lock;
// otherwise it tries a shared lock, at once released.
func lockHolder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		// Left by a process killed: no one holds it.
		return 0
	}
	return pid
}

// waitLock waits until no process holds the lock of the file at path,
// or ctx is done.
func waitLock(ctx context.Context, path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	free := make(chan error, 1)
	go func() {
		// Taken when free, and released at once (closing the file).
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH)
		f.Close()
		free <- err
	}()
	select {
	case err := <-free:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
