package testdeps

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// StartPrometheus runs Debian's prometheus on loopback with config (its
// YAML: scrape jobs, rule files) and its data in a temporary directory. It
// is stopped when the test ends, its configuration and log shown if the
// test failed, and it dies with the test process. It returns the server's
// base URL ("http://127.0.0.1:PORT") once /-/ready answers, within a minute.
func StartPrometheus(t testing.TB, config string) string {
	t.Helper()
	bin, err := Prometheus().Path()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	logPath := filepath.Join(dir, "prometheus.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // dies with the test process
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("prometheus's configuration:\n%s\nits log:\n%s", config, b)
		}
	})
	base := "http://" + addr
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("prometheus exited:\n%s", b)
		default:
		}
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus at %s was not ready within a minute", base)
		}
	}
}
