package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// writeFileAtomically writes path whole or not at all: through a private
// (0600) temporary file in its directory, renamed into place once complete,
// so a failed write leaves no half file and an existing one unchanged. A
// symlink to a file is followed, and stays. A path under /dev or /proc
// (/dev/stdout, /dev/null) and what is not a regular file (a FIFO) are
// written as they are, appended to as a shell's >> does: a rename would
// replace them, or the file a redirected stdout writes to.
func writeFileAtomically(path string, write func(w io.Writer) error) error {
	abs, _ := filepath.Abs(path)
	fi, err := os.Stat(path)
	if strings.HasPrefix(abs, "/dev/") || strings.HasPrefix(abs, "/proc/") || err == nil && !fi.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		err = write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
