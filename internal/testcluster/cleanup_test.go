package testcluster

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func alive(pid int) bool {
	// A zombie still answers kill(0); look at its state too.
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}

func waitDead(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d is still running", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func TestE2EStopKillsBothServersAndRemovesTheDirectory(t *testing.T) {
	c, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	pids, dir := c.PIDs(), c.Dir()
	if len(pids) != 2 {
		t.Fatalf("PIDs: got %v, want two", pids)
	}
	c.Stop()
	c.Stop() // idempotent
	waitDead(t, pids)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s: got %v, want it removed", dir, err)
	}
}

// A test binary that panics never runs its deferred Stop; PDEATHSIG must still
// take the servers down with it.
func TestE2EServersDieWithAPanickingTestProcess(t *testing.T) {
	if os.Getenv("TESTCLUSTER_PANIC_CHILD") == "1" {
		c, err := Start(context.Background(), Options{})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		fmt.Println("pids", c.PIDs()[0], c.PIDs()[1])
		panic("deliberate panic with a running cluster")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), "TESTCLUSTER_PANIC_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "pids" {
			for _, s := range f[1:] {
				pid, _ := strconv.Atoi(s)
				pids = append(pids, pid)
			}
		}
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("child test process: got success, want a panic exit")
	}
	if len(pids) != 2 {
		t.Fatalf("child reported pids %v, want two", pids)
	}
	waitDead(t, pids)
}

func TestE2EAServerThatCannotStartIsReportedWithItsLogAndCleanedUp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the cluster directory goes here, away from other packages' clusters
	_, err := Start(context.Background(), Options{ExtraArgs: []string{"--no-such-flag"}})
	if err == nil {
		t.Fatal("Start with a bad apiserver flag: got no error")
	}
	if !strings.Contains(err.Error(), "kube-apiserver did not become ready") || !strings.Contains(err.Error(), "no-such-flag") {
		t.Errorf("error: got %v, want the apiserver's failure with its log tail", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind in TMPDIR: %v", left)
	}
}

// A cluster directory whose owner.pid cannot be written is removed: without
// it, removeStaleDirs would never remove the directory. The write fails in
// a child process whose file size limit is 0.
func TestADirectoryWithoutItsOwnerIsNotLeft(t *testing.T) {
	if os.Getenv("TESTCLUSTER_FSIZE_CHILD") == "1" {
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Println("getrlimit:", err)
			os.Exit(3)
		}
		lim.Cur = 0
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(3)
		}
		_, err := newDir()
		fmt.Println("newDir:", err)
		os.Exit(0)
	}
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), "TESTCLUSTER_FSIZE_CHILD=1", "TMPDIR="+tmp)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "newDir: writing the cluster owner pid") {
		t.Fatalf("child: got %v, %q; want newDir's error writing owner.pid", err, out)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind in TMPDIR: %v", left)
	}
}
