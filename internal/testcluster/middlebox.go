package testcluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// Middlebox is an HTTP proxy on 127.0.0.1 in front of the apiserver, as
// `kubectl proxy` or a caching proxy sits between a client and the server:
// clients speak plain HTTP to it, and it forwards their requests (with their
// own bearer token, or the admin's when they send none) over TLS. It passes
// everything unchanged until a test asks for a fault in the JSON watch
// streams it carries: DropDeletes loses every DELETED event, as a lossy
// proxy would; ResendOld serves an event it carried earlier again, as a
// proxy serving stale data would. Only JSON watches are changed (a
// protobuf stream is passed as it is).
type Middlebox struct {
	srv *http.Server
	ln  net.Listener

	mu          sync.Mutex
	dropDeletes bool
	resend      bool
	oldest      []byte // the first ADDED or MODIFIED event carried
	dropped     int
	resent      int
}

// NewMiddlebox starts a middlebox in front of this cluster's apiserver.
func (c *Cluster) NewMiddlebox() (*Middlebox, error) {
	upstream, err := url.Parse(c.URL())
	if err != nil {
		return nil, fmt.Errorf("middlebox: %w", err)
	}
	rt, err := rest.TransportFor(c.Config())
	if err != nil {
		return nil, fmt.Errorf("middlebox transport: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the middlebox: %w", err)
	}
	m := &Middlebox{ln: ln}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(upstream)
			r.Out.Host = upstream.Host
			// The transport asks for gzip itself and hands the body on
			// decoded, so the watch filter reads JSON.
			r.Out.Header.Del("Accept-Encoding")
		},
		Transport:      rt,
		FlushInterval:  -1, // a watch's events go on as they come
		ModifyResponse: m.modify,
	}
	m.srv = &http.Server{Handler: rp}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// Config returns a copy of cfg that reaches the apiserver through the
// middlebox: plain HTTP to 127.0.0.1, cfg's bearer token kept.
func (m *Middlebox) Config(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Host = "http://" + m.ln.Addr().String()
	out.TLSClientConfig = rest.TLSClientConfig{}
	return out
}

// DropDeletes loses (on) or passes (off) every DELETED event of the JSON
// watches from now on.
func (m *Middlebox) DropDeletes(on bool) {
	m.mu.Lock()
	m.dropDeletes = on
	m.mu.Unlock()
}

// ResendOld serves, right after the next ADDED or MODIFIED event of a JSON
// watch, the first such event the middlebox ever carried again (older than
// anything the client has seen since). It does so once.
func (m *Middlebox) ResendOld() {
	m.mu.Lock()
	m.resend = true
	m.mu.Unlock()
}

// Counts are how many events the middlebox dropped and served again.
func (m *Middlebox) Counts() (dropped, resent int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dropped, m.resent
}

// Close stops the middlebox and ends the requests it carries.
func (m *Middlebox) Close() error {
	if err := m.srv.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("closing the middlebox: %w", err)
	}
	return nil
}

func (m *Middlebox) modify(resp *http.Response) error {
	q := resp.Request.URL.Query()
	if w := q.Get("watch"); (w != "true" && w != "1") || resp.StatusCode != http.StatusOK ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return nil
	}
	pr, pw := io.Pipe()
	body := resp.Body
	go func() {
		err := m.filter(pw, body)
		_ = body.Close()
		_ = pw.CloseWithError(err)
	}()
	resp.Body = pr
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return nil
}

// filter copies a JSON watch stream (one event object after another, with
// or without a newline between them) from src to dst, applying the faults
// in force as each event passes.
func (m *Middlebox) filter(dst io.Writer, src io.Reader) error {
	dec := json.NewDecoder(src)
	for {
		var ev json.RawMessage
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if out := m.pass(append(ev, '\n')); len(out) > 0 {
			if _, err := dst.Write(out); err != nil {
				return err
			}
		}
	}
}

// pass is what the middlebox sends on for one event line.
func (m *Middlebox) pass(line []byte) []byte {
	deleted := bytes.HasPrefix(line, []byte(`{"type":"DELETED"`))
	changed := bytes.HasPrefix(line, []byte(`{"type":"ADDED"`)) || bytes.HasPrefix(line, []byte(`{"type":"MODIFIED"`))
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case deleted && m.dropDeletes:
		m.dropped++
		return nil
	case changed && m.oldest == nil:
		m.oldest = bytes.Clone(line)
	case changed && m.resend:
		m.resend = false
		m.resent++
		return append(bytes.Clone(line), m.oldest...)
	}
	return line
}
