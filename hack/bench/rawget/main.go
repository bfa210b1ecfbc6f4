// Command rawget is the floor of hack/bench's initial-sync comparison: the
// requests a client must make, read and thrown away, by a process that links
// nothing but the standard library. It negotiates HTTP/2 and gzip as
// client-go does. The bearer token comes from $BENCH_TOKEN.
//
//	rawget -url https://127.0.0.1:6443/api/v1/configmaps -ca ca.crt             # one GET of the whole list
//	rawget -url … -ca ca.crt -limit 500                                         # every page, following continue tokens
//	rawget -url … -ca ca.crt -watchlist                                         # a streaming list, up to its initial-events-end bookmark
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/hack/bench/internal/probe"
)

func main() {
	var o options
	flag.StringVar(&o.url, "url", "", "the collection URL")
	flag.StringVar(&o.caFile, "ca", "", "PEM file of the server's CA")
	flag.Int64Var(&o.limit, "limit", 0, "page size: follow continue tokens through pages of this many items (0: one GET)")
	flag.BoolVar(&o.watchList, "watchlist", false, "read a streaming list (sendInitialEvents) instead of a LIST")
	timeout := flag.Duration("timeout", 5*time.Minute, "give up after this long")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	o.token = os.Getenv("BENCH_TOKEN")
	if err := run(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "rawget: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	url, caFile, token string
	limit              int64
	watchList          bool
}

func run(ctx context.Context, o options) error {
	if o.url == "" || o.caFile == "" || o.token == "" {
		return errors.New("-url, -ca and $BENCH_TOKEN are required")
	}
	ca, err := os.ReadFile(o.caFile)
	if err != nil {
		return fmt.Errorf("reading the CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return fmt.Errorf("%s holds no PEM certificate", o.caFile)
	}
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2: true,
	}}
	var n int64
	switch {
	case o.watchList:
		n, err = readWatchList(ctx, client, o)
	default:
		n, err = readPages(ctx, client, o)
	}
	if err != nil {
		return err
	}
	rep := probe.Report{SyncedAt: time.Now().UnixNano(), Bytes: n}
	return rep.Print(os.Stdout)
}

func get(ctx context.Context, client *http.Client, o options, query url.Values) (*http.Response, error) {
	u := o.url
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("building the request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+o.token)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("GET %s: %s: %s", u, resp.Status, body)
	}
	return resp, nil
}

// continueToken matches the list's continue token; the apiserver writes the
// list metadata before the items.
const continueToken = `^\{[^\[]*?"metadata":\{[^}]*?"continue":"([^"]*)"`

// readPages reads the list, page by page when o.limit is set, and returns the bytes read.
func readPages(ctx context.Context, client *http.Client, o options) (int64, error) {
	var total int64
	token := ""
	continueRE := regexp.MustCompile(continueToken)
	for {
		q := url.Values{}
		if o.limit > 0 {
			q.Set("limit", strconv.FormatInt(o.limit, 10))
		}
		if token != "" {
			q.Set("continue", token)
		}
		resp, err := get(ctx, client, o, q)
		if err != nil {
			return total, err
		}
		head := make([]byte, 4096)
		k, err := io.ReadFull(resp.Body, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			resp.Body.Close()
			return total, fmt.Errorf("reading the list: %w", err)
		}
		rest, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return total, fmt.Errorf("reading the list: %w", err)
		}
		total += int64(k) + rest
		m := continueRE.FindSubmatch(head[:k])
		if o.limit == 0 || m == nil || len(m[1]) == 0 {
			return total, nil
		}
		token = string(m[1])
	}
}

// initialEventsEnd is the annotation of the bookmark that ends a streaming list.
const initialEventsEnd = `"k8s.io/initial-events-end":"true"`

// readWatchList reads a streaming list until its initial-events-end bookmark.
func readWatchList(ctx context.Context, client *http.Client, o options) (int64, error) {
	q := url.Values{"watch": {"true"}, "sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"}, "allowWatchBookmarks": {"true"}}
	resp, err := get(ctx, client, o, q)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var total int64
	buf := make([]byte, 64<<10)
	carry := 0 // bytes kept from the previous read, in case the marker spans two reads
	for {
		k, err := resp.Body.Read(buf[carry:])
		total += int64(k)
		if bytes.Contains(buf[:carry+k], []byte(initialEventsEnd)) {
			return total, nil
		}
		if err != nil {
			return total, fmt.Errorf("the stream ended before its initial-events-end bookmark: %w", err)
		}
		n := carry + k
		carry = min(n, len(initialEventsEnd)-1)
		copy(buf, buf[n-carry:n])
	}
}
