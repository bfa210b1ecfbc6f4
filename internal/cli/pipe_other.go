//go:build !linux

package cli

import "os"

// watchPipeReader does nothing here: a closed output pipe is noticed at the
// next write (EPIPE).
func watchPipeReader(*os.File, func()) {}
