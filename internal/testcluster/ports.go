package testcluster

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A cluster's servers keep their ports across restarts, so a port that is
// free only for a moment is not enough: while kube-apiserver is down, any
// outgoing connection may get its port as a source port from the kernel's
// ephemeral range, and any listener on ":0" may be given it, and the restart
// then fails with "address already in use". So the ports come from outside
// the ephemeral range (/proc/sys/net/ipv4/ip_local_port_range), where the
// kernel never hands a port out by itself, and each is reserved for the
// cluster's life with a lock file that every test process on the machine
// honours. A process that dies releases its locks with it (its lock files
// stay, unlocked, and are taken again like any other).

// portLockDir holds one lock file per reserved port. It is not under
// $TMPDIR: every test process on the machine must see the same locks, and
// some tests move TMPDIR.
const portLockDir = "/tmp/watchcache-testcluster-ports"

// lowestPort is the lowest port handed out: below it live well-known and
// registered services a developer may run.
const lowestPort = 10000

// minPortRange is the fewest ports a range outside the ephemeral one must
// have to be used; with fewer, ports come from the ephemeral range as before.
const minPortRange = 1000

// portRange is where reserved ports are picked: the larger of the ranges
// below and above the ephemeral one. ok is false when neither is large enough.
func portRange() (lo, hi int, ok bool) {
	elo, ehi := 32768, 60999 // Linux's default
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			a, errA := strconv.Atoi(f[0])
			z, errZ := strconv.Atoi(f[1])
			if errA == nil && errZ == nil && a <= z {
				elo, ehi = a, z
			}
		}
	}
	below, above := elo-lowestPort, 65535-ehi
	switch {
	case below >= above && below >= minPortRange:
		return lowestPort, elo - 1, true
	case above >= minPortRange:
		return ehi + 1, 65535, true
	}
	return 0, 0, false
}

// portReservation is a port held for a cluster: its lock file stays open
// (and locked) until release.
type portReservation struct {
	port int
	lock *os.File // nil when the port came from the ephemeral range
}

// release removes the lock file and then unlocks it, so no file is left
// behind; reservePort checks that the file it locked is still the one at
// the path, so it never holds a lock on a removed file.
func (r portReservation) release() {
	if r.lock != nil {
		_ = os.Remove(r.lock.Name())
		_ = r.lock.Close() // closing drops the flock
	}
}

// reservePort picks a port no other cluster on this machine holds and that is
// free now, and locks it for the caller until release.
func reservePort() (portReservation, error) {
	lo, hi, ok := portRange()
	if !ok {
		p, err := freePort()
		return portReservation{port: p}, err
	}
	dir := portLockDir
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return portReservation{}, fmt.Errorf("creating the port lock directory: %w", err)
	}
	_ = os.Chmod(dir, os.ModePerm|os.ModeSticky) // as /tmp: every user's tests lock here (fails harmlessly if another user made it)
	var last error
	for i := 0; i < 200; i++ {
		port := lo + rand.IntN(hi-lo+1)
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)+".lock"), os.O_CREATE|os.O_RDONLY, 0o644) // another user's lock is read-only to us, and flock needs no more
		if err != nil {
			return portReservation{}, fmt.Errorf("opening a port lock: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				continue // another cluster holds it
			}
			return portReservation{}, fmt.Errorf("locking port %d: %w", port, err)
		}
		if !lockedFileIsAt(f) {
			_ = f.Close() // its holder removed it as we locked it
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			_ = f.Close()
			last = err
			continue // something outside the tests uses it
		}
		_ = l.Close()
		return portReservation{port: port, lock: f}, nil
	}
	return portReservation{}, fmt.Errorf("finding a free port in %d-%d: %w", lo, hi, last)
}

// lockedFileIsAt says f, just locked, is still the file at its path: not
// removed by the holder that released it between our open and our lock.
func lockedFileIsAt(f *os.File) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(f.Name())
	return err == nil && os.SameFile(held, now)
}
