package request_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

func TestQueryHoldsWhatIsSetAndNothingElse(t *testing.T) {
	for _, tc := range []struct {
		r    request.Request
		want string
	}{
		{request.Request{}, ""},
		{request.Request{Options: request.Options{Limit: 500, Continue: "c", ResourceVersion: "0"}, LabelSelector: "app=a"},
			"continue=c&labelSelector=app%3Da&limit=500&resourceVersion=0"},
		{request.Request{Watch: true, Options: request.Options{ResourceVersion: "12", ResourceVersionMatch: "NotOlderThan",
			SendInitialEvents: true, AllowWatchBookmarks: true, TimeoutSeconds: 300}, FieldSelector: "a=b"},
			"allowWatchBookmarks=true&fieldSelector=a%3Db&resourceVersion=12&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=300&watch=true"},
	} {
		if got := tc.r.Query().Encode(); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.r, got, tc.want)
		}
	}
}

func TestAcceptIsWhatClientGoSends(t *testing.T) {
	const meta, metaList = ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1", ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	for _, tc := range []struct {
		r    request.Request
		want string
	}{
		{request.Request{}, "application/json"},
		{request.Request{Watch: true, Protobuf: true}, request.ContentTypeProtobuf + ", application/json"},
		{request.Request{MetadataOnly: true}, "application/json" + metaList + ",application/json"},
		{request.Request{MetadataOnly: true, Watch: true}, "application/json" + meta + ",application/json"},
		{request.Request{MetadataOnly: true, Protobuf: true}, request.ContentTypeProtobuf + metaList + ",application/json" + metaList + ",application/json"},
	} {
		if got := tc.r.Accept(); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.r, got, tc.want)
		}
	}
}

func TestGetAsksForTheCollectionWithTheQueryAndAccept(t *testing.T) {
	base, err := url.Parse("https://example.com:6443/prefix")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ group, version, namespace, resource, want string }{
		{"", "v1", "", "configmaps", "https://example.com:6443/prefix/api/v1/configmaps?limit=5"},
		{"", "v1", "ns", "configmaps", "https://example.com:6443/prefix/api/v1/namespaces/ns/configmaps?limit=5"},
		{"apps", "v1", "ns", "deployments", "https://example.com:6443/prefix/apis/apps/v1/namespaces/ns/deployments?limit=5"},
	} {
		r := request.Request{Options: request.Options{Limit: 5}, Protobuf: true}
		req, err := r.Get(context.Background(), request.CollectionURL(base, tc.group, tc.version, tc.namespace, tc.resource))
		if err != nil {
			t.Fatal(err)
		}
		if req.Method != "GET" || req.URL.String() != tc.want || req.Header.Get("Accept") != r.Accept() {
			t.Errorf("%s %s: %s %s (Accept %q), want GET %s", tc.group, tc.resource, req.Method, req.URL, req.Header.Get("Accept"), tc.want)
		}
	}
	if base.String() != "https://example.com:6443/prefix" {
		t.Errorf("CollectionURL changed its base: %s", base)
	}
}
