// Command etcd is the etcd server used by internal/testcluster, built from the
// pinned go.etcd.io/etcd/server/v3 module so tests need nothing installed by hand.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
