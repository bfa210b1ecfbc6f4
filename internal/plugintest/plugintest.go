// Package plugintest runs the plugin's command line in a test's process,
// as a user would type it, with its output readable while it runs. The
// tests of internal/cli, internal/metrics and internal/outputs share it.
package plugintest

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Buffer is an output the command writes while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Run is a command running in the test's process.
type Run struct {
	Out, ErrOut *Buffer
	cancel      context.CancelFunc
	done        chan error // the command's error, sent once

	mu    sync.Mutex
	ended bool
	err   error
}

// Start runs the command newCommand builds on streams of its own, with
// args, until Stop or the end of the test.
func Start(t testing.TB, newCommand func(genericiooptions.IOStreams) *cobra.Command, args ...string) *Run {
	t.Helper()
	r := &Run{Out: &Buffer{}, ErrOut: &Buffer{}, done: make(chan error, 1)}
	cmd := newCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: r.Out, ErrOut: r.ErrOut})
	cmd.SetArgs(args)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() { _ = r.Stop() })
	return r
}

// Ended reports whether the command has ended (on its own or by Stop),
// and its error, without waiting.
func (r *Run) Ended() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.ended {
		select {
		case r.err = <-r.done:
			r.ended = true
		default:
		}
	}
	return r.ended, r.err
}

// Stop interrupts the command as ctrl+c does, waits for it and returns its
// error; later calls return the same.
func (r *Run) Stop() error {
	r.cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.ended {
		r.err, r.ended = <-r.done, true
	}
	return r.err
}

// Eventually polls cond every 50 ms until it holds, and fails t when it
// does not within d, naming what it waited for.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
