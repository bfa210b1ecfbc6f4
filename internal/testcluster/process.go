package testcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// spawner starts child processes from one OS thread that stays alive until
// close. Children get PDEATHSIG=SIGKILL, which fires when the thread that
// started them dies: keeping that thread alive (and ending it only on close)
// means a test binary that panics or is killed by -timeout never leaves an
// etcd or kube-apiserver running.
type spawner struct {
	reqs chan spawnReq
	done chan struct{}

	// mu guards closed, and reqs's close: a start after (or racing) the
	// cluster's Stop gets an error rather than a send on a closed channel,
	// which would panic the test binary.
	mu     sync.Mutex
	closed bool
}

type spawnReq struct {
	cmd   *exec.Cmd
	reply chan error
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnReq), done: make(chan struct{})}
	go func() {
		runtime.LockOSThread()
		// Never unlocked: when this goroutine returns, the thread exits with it.
		defer close(s.done)
		for r := range s.reqs {
			r.reply <- r.cmd.Start()
		}
	}()
	return s
}

func (s *spawner) start(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	reply := make(chan error, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("the cluster is stopped")
	}
	s.reqs <- spawnReq{cmd: cmd, reply: reply}
	s.mu.Unlock()
	return <-reply
}

func (s *spawner) close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.reqs)
	}
	s.mu.Unlock()
	<-s.done
}

// StartCommand starts cmd as the cluster starts its servers: in a process
// group of its own, and killed (SIGKILL) when the test process dies, even
// by a panic or -timeout that skips its deferred stops. A helper that
// retries for ever (the plugin's monitor mode) would otherwise outlive the
// test. The caller waits for cmd and ends it, before Stop.
func (c *Cluster) StartCommand(cmd *exec.Cmd) error { return c.sp.start(cmd) }

// process is one running server with its log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error
}

func startProcess(sp *spawner, name, logPath, bin string, args []string) (*process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := sp.start(cmd); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logf.Close()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	if p == nil {
		return
	}
	select {
	case <-p.exited:
		return
	default:
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
	}
	// Anything left in the group (there should be nothing) goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// exitError describes why the process ended, for "did not become ready" errors.
func (p *process) exitError() error {
	if p.running() {
		return nil
	}
	if p.err == nil {
		return fmt.Errorf("%s exited", p.name)
	}
	return fmt.Errorf("%s exited: %w", p.name, p.err)
}

// tail returns the last n lines of the process log.
func (p *process) tail(n int) string {
	if p == nil {
		return ""
	}
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.logPath, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n") + "\n"
}
