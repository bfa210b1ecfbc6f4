package testcluster

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A reserved port is outside the kernel's ephemeral range, so no outgoing
// connection or ":0" listener can be given it while a server is down, and its
// lock keeps every other cluster off it until it is released.
func TestReservedPortsAreOutsideTheEphemeralRangeAndLocked(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Fatalf("reading the ephemeral range: %v", err)
	}
	f := strings.Fields(string(b))
	elo, _ := strconv.Atoi(f[0])
	ehi, _ := strconv.Atoi(f[1])

	seen := map[int]bool{}
	var held []portReservation
	defer func() {
		for _, r := range held {
			r.release()
		}
	}()
	for i := 0; i < 20; i++ {
		r, err := reservePort()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, r)
		if r.lock == nil {
			t.Fatalf("port %d came from the ephemeral range %d-%d", r.port, elo, ehi)
		}
		if r.port >= elo && r.port <= ehi {
			t.Fatalf("port %d is inside the ephemeral range %d-%d", r.port, elo, ehi)
		}
		if seen[r.port] {
			t.Fatalf("port %d reserved twice", r.port)
		}
		seen[r.port] = true
	}

	r := held[0]
	path := filepath.Join(portLockDir, strconv.Itoa(r.port)+".lock")
	other, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("locking a reserved port's file: got %v, want EWOULDBLOCK", err)
	}
	r.release()
	held = held[1:]
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a released port's lock file: got %v, want it removed", err)
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("locking a released port's file: %v", err)
	}
	if lockedFileIsAt(other) {
		t.Fatal("a lock taken on a removed file counts as the port's")
	}
}

// A server start that fails (its port taken between the reservation and
// the bind) is retried on fresh ports; the ports of the failed attempts are
// released then, not held until the cluster stops.
func TestAFailedStartsPortsAreReleasedBeforeTheRetry(t *testing.T) {
	c := &Cluster{}
	defer c.releasePortsAfter(0)
	var tried []portReservation
	attempts := 0
	err := c.retryPorts(func() error {
		attempts++
		p, err := c.reservePort()
		if err != nil {
			return err
		}
		c.mu.Lock()
		tried = append(tried, c.ports[len(c.ports)-1])
		c.mu.Unlock()
		if attempts < portAttempts {
			return errors.New("address already in use on " + strconv.Itoa(p))
		}
		return nil
	}, func() {})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ports) != 1 || c.ports[0].port != tried[len(tried)-1].port {
		t.Fatalf("the cluster holds %v, want only the last attempt's port %d", c.ports, tried[len(tried)-1].port)
	}
	for _, r := range tried[:len(tried)-1] {
		if r.lock == nil {
			continue
		}
		if _, err := os.Stat(r.lock.Name()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the failed attempt's port %d is still locked (%s: %v)", r.port, r.lock.Name(), err)
		}
	}
}
