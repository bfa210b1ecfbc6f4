package cli

import (
	"io"
	"os"
	"path/filepath"
)

// writeFileAtomically writes path whole or not at all: through a private
// (0600) temporary file in its directory, renamed into place once complete,
// so a failed write leaves no half file and an existing one unchanged. A
// symlink is followed, and stays. What is not a regular file (/dev/null,
// /dev/stdout, a FIFO) is written as it is: a rename would replace it.
func writeFileAtomically(path string, write func(w io.Writer) error) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		err = write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
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
