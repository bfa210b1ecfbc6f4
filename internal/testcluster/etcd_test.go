package testcluster

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// An etcd that stops answering fails a call with no deadline of its own
// (a test's context.Background()) at the call's timeout, not never.
func TestAnEtcdCallThatIsNotAnsweredTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c := &Cluster{etcdURL: srv.URL, etcdTimeout: 100 * time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- c.MoveRevision(context.Background()) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("MoveRevision on an etcd that does not answer: got no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("MoveRevision still waits 10 s into an etcd that does not answer")
	}
}
