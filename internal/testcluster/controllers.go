package testcluster

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// StartControllerManager starts the matching kube-controller-manager
// against the cluster, as the admin, running only the named controllers
// ("deployment", "replicaset"…): a Deployment then gets its status and
// its ReplicaSets, written by the controllers' own field managers, as on a
// real cluster. Pods need "serviceaccount" too (it creates each namespace's
// default ServiceAccount), and are never scheduled: there is no scheduler
// and no node. It stops with the cluster; its log is kube-controller-manager.log
// in the cluster's directory. kubeconfig is how it reaches the server: ""
// for the cluster's own (an observing proxy's, to watch its traffic).
func (c *Cluster) StartControllerManager(kubeconfig string, controllers ...string) error {
	if len(controllers) == 0 {
		return fmt.Errorf("starting kube-controller-manager: name at least one controller")
	}
	if kubeconfig == "" {
		kubeconfig = c.kubeconf
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--secure-port=0",
		"--concurrent-deployment-syncs=5",
		"--v=1",
	}
	p, err := startProcess(c.sp, "kube-controller-manager", filepath.Join(c.dir, "kube-controller-manager.log"), c.bins.KubeControllerManager, args)
	if err != nil {
		return err
	}
	c.atStop(func() { p.stop(5 * time.Second) })
	// It has no port to probe: a quick exit (a bad flag, no server) is the failure to catch.
	select {
	case <-p.exited:
		return fmt.Errorf("kube-controller-manager exited at once: %v\n%s", p.err, p.tail(30))
	case <-time.After(2 * time.Second):
	}
	return nil
}
