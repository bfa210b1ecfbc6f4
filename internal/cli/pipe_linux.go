//go:build linux

package cli

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// watchPipeReader calls gone once nothing reads f any more, when f is a
// pipe (| head): poll reports POLLERR on a pipe's write end whose read end
// has closed, before anything is written to it. Without this a quiet watch
// noticed only at its next line, which may be minutes away.
func watchPipeReader(f *os.File, gone func()) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	raw, err := f.SyscallConn()
	if err != nil {
		return
	}
	var fd int
	if err := raw.Control(func(p uintptr) { fd = int(p) }); err != nil {
		return
	}
	go func() {
		for {
			fds := []unix.PollFd{{Fd: int32(fd)}} // no events asked: POLLERR and POLLHUP come regardless
			n, err := unix.Poll(fds, -1)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || (n > 0 && fds[0].Revents&unix.POLLNVAL != 0) {
				return
			}
			if n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				gone()
				return
			}
		}
	}()
}
