//go:build tools

// Package tools pins the test-cluster binaries (kube-apiserver, etcd, the
// kubectl the plugin tests run it through, and kube-controller-manager) that
// internal/testcluster builds from Go modules. It is never compiled into the plugin.
package tools

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain" // built by ./cmd/etcd
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
