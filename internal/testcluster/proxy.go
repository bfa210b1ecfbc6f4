package testcluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Proxy is a TCP proxy on 127.0.0.1 in front of the apiserver, for connection
// faults: CutAll resets every open connection at once; Refuse makes new
// connections fail (reset right after accept) until the given time has passed;
// CutAfter resets each new connection a fixed time after it was accepted, as a
// load balancer with a short connection lifetime does; Delay holds the
// server's bytes for a while before the client gets them (the client's bytes
// go through at once).
type Proxy struct {
	target string
	ln     net.Listener

	mu          sync.Mutex
	conns       map[net.Conn]struct{}
	refuseUntil time.Time
	lifetime    time.Duration
	delay       time.Duration
	accepted    int
	closed      bool
	wg          sync.WaitGroup
}

// NewProxy starts a fault proxy in front of this cluster's apiserver.
func (c *Cluster) NewProxy() (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the fault proxy: %w", err)
	}
	p := &Proxy{target: fmt.Sprintf("127.0.0.1:%d", c.apiPort), ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the proxy's listening address ("127.0.0.1:port").
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Config returns a copy of cfg that connects through the proxy. TLS still
// verifies the apiserver's certificate (it is issued for 127.0.0.1).
func (p *Proxy) Config(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Host = "https://" + p.Addr()
	return out
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refusing := time.Now().Before(p.refuseUntil)
		closed := p.closed
		lifetime := p.lifetime
		if !refusing && !closed {
			p.accepted++
		}
		p.mu.Unlock()
		if refusing || closed {
			reset(c)
			continue
		}
		p.wg.Add(1)
		go p.pipe(c, lifetime)
	}
}

func (p *Proxy) pipe(client net.Conn, lifetime time.Duration) {
	defer p.wg.Done()
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		reset(client)
		return
	}
	if !p.track(client, server) {
		reset(client)
		reset(server)
		return
	}
	if lifetime > 0 {
		cut := time.AfterFunc(lifetime, func() {
			reset(client)
			reset(server)
		})
		defer cut.Stop()
	}
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(server, client)
	go func() {
		p.delayedCopy(client, server)
		done <- struct{}{}
	}()
	<-done
	// One direction ended: end both, so neither side hangs half-open.
	_ = client.Close()
	_ = server.Close()
	<-done
	p.untrack(client, server)
}

func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

// reset closes a connection with SO_LINGER 0, so the peer sees a reset rather than a clean EOF.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// CutAll resets every connection open through the proxy and returns how many
// client connections it cut.
func (p *Proxy) CutAll() int {
	p.mu.Lock()
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		reset(c)
	}
	return len(conns) / 2
}

// Delay holds every byte the server sends, on every connection, for d
// before the client gets it (0: at once), in order; the bytes the client
// sends are not delayed. A change applies to the bytes read from then on.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// delayedCopy copies src to dst as io.Copy does, each chunk held for the
// delay in force when it was read.
func (p *Proxy) delayedCopy(dst, src net.Conn) {
	type chunk struct {
		b   []byte
		due time.Time
	}
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				p.mu.Lock()
				d := p.delay
				p.mu.Unlock()
				q <- chunk{buf[:n], time.Now().Add(d)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		if wait := time.Until(c.due); wait > 0 {
			time.Sleep(wait)
		}
		if _, err := dst.Write(c.b); err != nil {
			_ = src.Close() // the reader ends, and q with it
			for range q {
			}
			return
		}
	}
}

// Refuse resets every new connection for d (existing ones are untouched; use
// CutAll as well to take the apiserver away completely).
func (p *Proxy) Refuse(d time.Duration) {
	p.mu.Lock()
	p.refuseUntil = time.Now().Add(d)
	p.mu.Unlock()
}

// CutAfter resets every connection accepted from now on d after it was
// accepted (0: no limit; connections already open keep theirs). Every
// request on such a connection, a watch included, ends there.
func (p *Proxy) CutAfter(d time.Duration) {
	p.mu.Lock()
	p.lifetime = d
	p.mu.Unlock()
}

// Accepted is how many connections the proxy has passed through so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Close stops the proxy and resets all its connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return errors.New("fault proxy already closed")
	}
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.CutAll()
	p.wg.Wait()
	return err
}
