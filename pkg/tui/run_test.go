package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/table"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

func TestRunReturnsWhenTheContextEnds(t *testing.T) {
	feed, _ := tuitest.LiveFeed(t)
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	t.Cleanup(func() { inW.Close() })
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, tuitest.DemoOptions(tuitest.NewFakeClock()), []program.Resource{tuitest.DemoResource(feed)}, inR, out)
	}()
	waitFor(t, out, "kubectl watchcache")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil when the context ends", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the context ended")
	}
}

func TestRunReturnsWhenTheUserQuits(t *testing.T) {
	for _, k := range []string{"q", "\x03"} { // q, ctrl+c
		t.Run(fmt.Sprintf("%q", k), func(t *testing.T) {
			feed, _ := tuitest.LiveFeed(t)
			inR, inW := io.Pipe()
			t.Cleanup(func() { inW.Close() })
			out := &syncBuffer{}
			done := make(chan error, 1)
			go func() {
				done <- Run(context.Background(), tuitest.DemoOptions(tuitest.NewFakeClock()), []program.Resource{tuitest.DemoResource(feed)}, inR, out)
			}()
			waitFor(t, out, "kubectl watchcache")
			go io.WriteString(inW, k) //nolint:errcheck // the pipe closes at cleanup
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run = %v, want nil", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return after the quit key")
			}
		})
	}
}

func TestNoColorDropsColorsEvenWhenColorIsForced(t *testing.T) {
	sgrColor := regexp.MustCompile(`\x1b\[[0-9;]*3[0-7]m|\x1b\[[0-9;]*38;`)
	for _, tt := range []struct {
		name     string
		noColor  bool
		env      string
		wantSGRs bool
	}{
		{"forced color", false, "", true},
		{"Options.NoColor", true, "", false},
		{"NO_COLOR", false, "yes", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CLICOLOR_FORCE", "1")
			t.Setenv("NO_COLOR", tt.env)
			feed, _ := tuitest.LiveFeed(t)
			opts := tuitest.DemoOptions(tuitest.NewFakeClock())
			opts.NoColor = tt.noColor
			ctx, cancel := context.WithCancel(context.Background())
			inR, inW := io.Pipe()
			t.Cleanup(func() { inW.Close() })
			out := &syncBuffer{}
			done := make(chan error, 1)
			go func() { done <- Run(ctx, opts, []program.Resource{tuitest.DemoResource(feed)}, inR, out) }()
			waitFor(t, out, "Watching")
			cancel()
			<-done
			if got := sgrColor.MatchString(out.String()); got != tt.wantSGRs {
				t.Errorf("color codes in the output: %v, want %v", got, tt.wantSGRs)
			}
		})
	}
}

func TestRunOpensTheOverviewOfSeveralResources(t *testing.T) {
	var resources []program.Resource
	for range 3 {
		feed, _ := tuitest.LiveFeed(t)
		resources = append(resources, tuitest.DemoResource(feed))
	}
	inR, inW := io.Pipe()
	t.Cleanup(func() { inW.Close() })
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), tuitest.DemoOptions(tuitest.NewFakeClock()), resources, inR, out)
	}()
	waitFor(t, out, table.HeadEvents)
	go io.WriteString(inW, "q") //nolint:errcheck // the pipe closes at cleanup
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after q")
	}
	if err := Run(context.Background(), tuitest.DemoOptions(tuitest.NewFakeClock()), nil, nil, io.Discard); err == nil {
		t.Error("Run with no resource returned nil")
	}
}

// syncBuffer is an output the program writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// grew is signalled on every write, so waiting needs no polling sleep.
	grew chan struct{}
}

// Write appends p, safe for concurrent use.
func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.grew == nil {
		b.grew = make(chan struct{}, 1)
	}
	select {
	case b.grew <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

// String is what was written so far.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) signal() chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.grew == nil {
		b.grew = make(chan struct{}, 1)
	}
	return b.grew
}

// WaitFor blocks until the output contains s, woken by each write.
func waitFor(t *testing.T, b *syncBuffer, s string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !bytes.Contains([]byte(b.String()), []byte(s)) {
		select {
		case <-b.signal():
		case <-deadline:
			t.Fatalf("output never contained %q:\n%q", s, b.String())
		}
	}
}
