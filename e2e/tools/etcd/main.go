// Command etcd is a thin main around etcd's own entry point, so the e2e
// suite can build a real etcd from the Go module proxy.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
