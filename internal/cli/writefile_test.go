package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A report or kubeconfig sent to what is not a regular file (/dev/null,
// /dev/stdout, a FIFO) is written to it, not renamed over it: as root, a
// report -o /dev/null replaced the device with a file. A symlink stays a
// symlink, its target written.
func TestAFileWrittenWholeLeavesFIFOsAndSymlinksInPlace(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := writeFileAtomically(fifo, func(w io.Writer) error { _, err := io.WriteString(w, "through the pipe"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO is no longer one: %v, %v", fi.Mode(), err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("the FIFO's reader got %q", s)
	}

	target, link := filepath.Join(dir, "target.html"), filepath.Join(dir, "link.html")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomically(link, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer one: %v, %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("the link's target holds %q, want new", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("the directory holds %d entries, want fifo, link and target alone", len(entries))
	}
}

// report -o /dev/stdout with stdout redirected to a file (/dev/stdout is a
// link to /proc/self/fd/1, a link to that file) writes through the
// descriptor, after what is there, as >> does: following the links, it was
// renamed over, what the file held before lost and its mode changed.
func TestAFileWrittenThroughAFileDescriptorAppends(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log.txt")
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.WriteString(f, "earlier\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomically(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), func(w io.Writer) error { _, err := io.WriteString(w, "REPORT\n"); return err }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	fi, err := os.Stat(log)
	if string(b) != "earlier\nREPORT\n" || err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the file holds %q, mode %v (%v); want what it held, then the report, mode 0644", b, fi.Mode(), err)
	}
}
