package command

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ReadSecret reads the secret kept in path (the server's token, the
// sync key). A file that others may read has its mode set back to 0600,
// with a warning on errOut; anything but a regular file is an error, and
// so is one whose mode cannot be set. A file that is not there is
// fs.ErrNotExist.
func ReadSecret(errOut io.Writer, path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, fmt.Errorf("%s may be read by others and its mode cannot be set to 0600: %w", path, err)
		}
		fmt.Fprintf(errOut, "loom: warning: %s could be read by others (mode %04o); it is now 0600\n", path, fi.Mode().Perm())
	}
	return os.ReadFile(path)
}

// WriteSecret keeps secret (a token, a sync key) in path, readable by
// this user only. It writes a new file and renames it over the old, so
// that a reader never sees half a secret and a symlink in the way is
// replaced, not followed.
func WriteSecret(dir, path, secret string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(secret + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
