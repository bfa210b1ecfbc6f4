package testcluster

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A command started through StartCommand dies with the spawner's thread,
// as the servers do: a test process that dies (and its threads with it)
// leaves no helper running.
func TestAStartedCommandDiesWithTheSpawner(t *testing.T) {
	c := &Cluster{sp: newSpawner()}
	cmd := exec.Command("sleep", "60")
	if err := c.StartCommand(cmd); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	c.sp.close()
	select {
	case err := <-waited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("the child ended with %v, want SIGKILL", err)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the child still runs 10 s after its spawner ended")
	}
}

// A server started after the cluster stopped (a test's RestartCompacted
// racing its Stop) is an error, not a panic of the whole test binary.
func TestAStartAfterStopIsAnError(t *testing.T) {
	sp := newSpawner()
	sp.close()
	sp.close() // Stop may run twice
	cmd := exec.Command("true")
	if err := sp.start(cmd); err == nil {
		_ = cmd.Wait()
		t.Fatal("a start after close: got no error")
	}
}
