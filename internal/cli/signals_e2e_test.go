package cli

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// startTracedPlugin runs the built plugin on configmaps in ns, its lines on
// a pipe whose read end the test holds, with a trace; it returns once the
// first list is complete.
func startTracedPlugin(t *testing.T, ns, tracePath string) (*exec.Cmd, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(builtPlugin(t), "kubectl-watchcache"), "--kubeconfig", kubeconfig(t), "configmaps", "-n", ns, "--no-tui", "--trace", tracePath)
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = r.Close()
	})
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "list-complete") {
			return cmd, r
		}
	}
	t.Fatalf("the plugin's lines ended before its list completed: %v", sc.Err())
	return nil, nil
}

// exitCode waits for cmd (a minute at most) and returns its exit code, -1
// when a signal killed it.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(time.Minute):
		t.Fatal("the plugin did not end within a minute")
		return -1
	}
}

// A closed terminal (SIGHUP) and a closed stdout pipe (| head) end a run as
// SIGTERM does, at once: the trace is written to its end, gzip included. Both killed
// the run before, leaving a 10-byte .gz trace, or an empty one. A run
// killed outright (SIGKILL) leaves a .gz trace that reads up to its last
// flush, a second before.
func TestE2EAClosedTerminalOrPipeEndsTheRunWithItsTraceWritten(t *testing.T) {
	cs := adminClient(t)
	ns := "closed-terminal"
	newNamespace(t, cs, ns)
	create := func(name string) {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("before")
	cases := []struct {
		name     string
		end      func(cmd *exec.Cmd, out *os.File)
		exit     int
		complete bool // the trace has its run's stop
	}{
		{"SIGHUP", func(cmd *exec.Cmd, _ *os.File) { _ = cmd.Process.Signal(syscall.SIGHUP) }, ExitOK, true},
		{"closed stdout", func(_ *exec.Cmd, out *os.File) {
			_ = out.Close()
			create("after-the-pipe-closed") // a line to write to the closed pipe
		}, ExitOK, true},
		// Nothing more to write: the run notices the reader left all the
		// same (it waited for its next line, minutes on a quiet watch).
		{"closed stdout, nothing to write", func(_ *exec.Cmd, out *os.File) { _ = out.Close() }, ExitOK, true},
		{"SIGKILL", func(cmd *exec.Cmd, _ *os.File) {
			time.Sleep(3 * time.Second) // a flush or two after the list
			_ = cmd.Process.Kill()
		}, -1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run.jsonl.gz")
			cmd, out := startTracedPlugin(t, ns, path)
			tc.end(cmd, out)
			if got := exitCode(t, cmd); got != tc.exit {
				t.Errorf("exit code %d, want %d", got, tc.exit)
			}
			code, lines, stderr := run(t, "replay", path, "--speed", "0", "--no-tui")
			if code != ExitOK || !strings.Contains(lines, "list-complete: list complete: ") {
				t.Fatalf("its trace replays with exit %d, want %d and the list:\n%s%s", code, ExitOK, lines, stderr)
			}
			if early := strings.Contains(stderr, "the recording ends early"); early == tc.complete {
				t.Errorf("the trace ends early: %v, want %v:\n%s", early, !tc.complete, stderr)
			}
		})
	}
}
