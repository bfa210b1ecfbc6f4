package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// IsLoopback reports whether the listen address addr ("host:port") binds
// only loopback interfaces: localhost, 127.0.0.0/8 or ::1. An empty host
// (":9090") binds every interface.
func IsLoopback(addr string) (bool, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("invalid address %q: %w", addr, err)
	}
	// A port past 65535 (or an unknown service name) is refused here, as a
	// bad command line, not by the listen that would follow.
	if _, err := net.LookupPort("tcp", port); err != nil {
		return false, fmt.Errorf("invalid address %q: %w", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// Server serves a Metrics registry over HTTP at /metrics.
type Server struct {
	srv     *http.Server
	ln      net.Listener
	asked   string // the host asked for: "" or "0.0.0.0" binds every interface
	done    chan error
	metrics atomic.Pointer[http.Handler] // the process's own metrics until Publish
}

// Serve listens on addr at once (so a taken port is an error here) and
// serves m at /metrics until Close.
func Serve(addr string, m *Metrics) (*Server, error) {
	s, err := Listen(addr, nil)
	if err == nil {
		s.Publish(m)
	}
	return s, err
}

// Listen listens on addr at once and, when ready is set, answers /healthz
// (200 while it serves) and /readyz (200 once ready returns nil, 503 with
// its error before): a pod's probes. Until Publish gives it the registry,
// /metrics serves the process's and the Go runtime's metrics and no series
// of the run: a scrape never fails because it came first.
func Listen(addr string, ready func() error) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	host, _, _ := net.SplitHostPort(addr)
	s := &Server{ln: ln, asked: host, done: make(chan error, 1)}
	h := handlerFor(processRegistry())
	s.metrics.Store(&h)
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) { (*s.metrics.Load()).ServeHTTP(w, r) })
	if ready != nil {
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = fmt.Fprintln(w, "ok")
		})
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			if err := ready(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = fmt.Fprintf(w, "not ready: %v\n", err)
				return
			}
			_, _ = fmt.Fprintln(w, "ok")
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintln(w, "kubectl watchcache: metrics at /metrics")
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Publish serves m at /metrics from now on.
func (s *Server) Publish(m *Metrics) {
	h := m.Handler()
	s.metrics.Store(&h)
}

// URL is the metrics endpoint as a client on this host reaches it:
// "http://127.0.0.1:9090/metrics", also when the server binds every
// interface (":9090", where Addr is "[::]:9090").
func (s *Server) URL() string { return "http://" + ClientAddress(s.ln.Addr(), s.asked) + "/metrics" }

// ClientAddress is the address a client on this host reaches a listener
// bound at a (asked for as host asked) at: a itself, or loopback when it
// binds every interface, in the family asked for ("::" gives ::1, "" and
// 0.0.0.0 give 127.0.0.1; Go binds both families for either).
func ClientAddress(a net.Addr, asked string) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	if ip := net.ParseIP(asked); ip != nil && ip.To4() == nil {
		return net.JoinHostPort("::1", strconv.Itoa(tcp.Port))
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}

// Close stops the server, letting a scrape in progress finish for up to a second.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serveErr := <-s.done; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	if err != nil {
		return fmt.Errorf("metrics: stopping the server: %w", err)
	}
	return nil
}
