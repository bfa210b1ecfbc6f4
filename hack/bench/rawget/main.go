// Command rawget is the floor of hack/bench's initial-sync comparison: the
// requests a client must make, read and thrown away, by a process that links
// nothing but the standard library. By default it negotiates HTTP/2 and gzip as
// client-go does, makes its requests as the plugin does (package request,
// standard library only), and links protowire only to find a protobuf
// page's continue token. The bearer token comes from $BENCH_TOKEN.
//
//	rawget -url https://127.0.0.1:6443/api/v1/configmaps -ca ca.crt             # one GET of the whole list
//	rawget -url … -ca ca.crt -limit 500                                         # every page, following continue tokens
//	rawget -url … -ca ca.crt -watchlist                                         # a streaming list, up to its initial-events-end bookmark
//	rawget -url … -ca ca.crt -disable-compression                               # without asking for gzip
//	rawget -url … -ca ca.crt -wire protobuf -metadata-only                      # the same requests in protobuf, of PartialObjectMetadata
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
	"syscall"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kubectl-watchcache/kubectl-watchcache/hack/bench/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

func main() {
	var o options
	flag.Func("url", "the collection URL", func(s string) (err error) {
		o.url, err = url.Parse(s)
		return err
	})
	flag.StringVar(&o.caFile, "ca", "", "PEM file of the server's CA")
	flag.Int64Var(&o.limit, "limit", 0, "page size: follow continue tokens through pages of this many items (0: one GET)")
	flag.BoolVar(&o.watchList, "watchlist", false, "read a streaming list (sendInitialEvents) instead of a LIST")
	flag.StringVar(&o.wire, "wire", "json", "encoding to ask for: json or protobuf")
	flag.BoolVar(&o.metadataOnly, "metadata-only", false, "ask for PartialObjectMetadata, as the plugin's --metadata-only does")
	flag.BoolVar(&o.disableCompression, "disable-compression", false, "do not ask for gzip, as kubectl's --disable-compression")
	flag.StringVar(&o.resourceVersion, "resource-version", "", "resourceVersion of the LIST (0: from the watch cache)")
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
	url                *url.URL
	caFile, token      string
	limit              int64
	disableCompression bool
	watchList          bool
	wire               string
	metadataOnly       bool
	resourceVersion    string
}

func run(ctx context.Context, o options) error {
	if o.url == nil || o.caFile == "" || o.token == "" {
		return errors.New("-url, -ca and $BENCH_TOKEN are required")
	}
	if o.wire != "json" && o.wire != "protobuf" {
		return fmt.Errorf("-wire %q: want json or protobuf", o.wire)
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
		TLSClientConfig:    &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2:  true,
		DisableCompression: o.disableCompression,
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

// get sends r, the plugin's request for the same (package request builds
// both), to the collection at o.url.
func get(ctx context.Context, client *http.Client, o options, r request.Request) (*http.Response, error) {
	r.Protobuf, r.MetadataOnly = o.wire == "protobuf", o.metadataOnly
	req, err := r.Get(ctx, o.url)
	if err != nil {
		return nil, fmt.Errorf("building the request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+o.token)
	u := req.URL.String()
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
		resp, err := get(ctx, client, o, request.Request{Options: request.Options{Limit: o.limit, Continue: token, ResourceVersion: o.resourceVersion}})
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
		if o.wire == "protobuf" {
			token = protobufContinue(head[:k])
		} else if m := continueRE.FindSubmatch(head[:k]); m != nil {
			token = string(m[1])
		} else {
			token = ""
		}
		if o.limit == 0 || token == "" {
			return total, nil
		}
	}
}

// initialEventsEnd is the annotation of the bookmark that ends a streaming
// list, as JSON writes it; protobuf writes the map entry's key (field 1, 25
// bytes) and value (field 2, 4 bytes).
const (
	initialEventsEnd         = `"k8s.io/initial-events-end":"true"`
	initialEventsEndProtobuf = "\x0a\x19k8s.io/initial-events-end\x12\x04true"
)

// protobufContinue finds the continue token in the head of a protobuf list:
// "k8s\x00", a runtime.Unknown whose raw field (2) is the list, whose first
// field is its ListMeta (1), whose field 3 is the token.
func protobufContinue(head []byte) string {
	b, ok := bytes.CutPrefix(head, []byte("k8s\x00"))
	if !ok {
		return ""
	}
	// field returns the value of the first length-delimited field num in b, cut to what b holds.
	field := func(b []byte, num protowire.Number, whole bool) []byte {
		for len(b) > 0 {
			n, typ, k := protowire.ConsumeTag(b)
			if k < 0 {
				return nil
			}
			b = b[k:]
			if typ != protowire.BytesType {
				if k = protowire.ConsumeFieldValue(n, typ, b); k < 0 {
					return nil
				}
				b = b[k:]
				continue
			}
			size, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return nil
			}
			b = b[k:]
			if n == num {
				return b[:min(uint64(len(b)), size)]
			}
			if whole && size > uint64(len(b)) {
				return nil
			}
			b = b[min(uint64(len(b)), size):]
		}
		return nil
	}
	list := field(b, 2, true)
	meta := field(list, 1, true)
	return string(field(meta, 3, true))
}

// readWatchList reads a streaming list until its initial-events-end bookmark.
func readWatchList(ctx context.Context, client *http.Client, o options) (int64, error) {
	resp, err := get(ctx, client, o, request.Request{Watch: true, Options: request.Options{SendInitialEvents: true, ResourceVersionMatch: "NotOlderThan", AllowWatchBookmarks: true}})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var total int64
	marker := []byte(initialEventsEnd)
	if o.wire == "protobuf" {
		marker = []byte(initialEventsEndProtobuf)
	}
	buf := make([]byte, 64<<10)
	carry := 0 // bytes kept from the previous read, in case the marker spans two reads
	for {
		k, err := resp.Body.Read(buf[carry:])
		total += int64(k)
		if bytes.Contains(buf[:carry+k], marker) {
			return total, nil
		}
		if err != nil {
			return total, fmt.Errorf("the stream ended before its initial-events-end bookmark: %w", err)
		}
		n := carry + k
		carry = min(n, len(marker)-1)
		copy(buf, buf[n-carry:n])
	}
}
