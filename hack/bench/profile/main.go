// Command profile runs the plugin's command line in process under a CPU
// profile (and writes a heap profile at its end), for finding where a sync
// spends its time:
//
//	go run ./hack/bench/profile -cpuprofile cpu.pprof -- configmaps -A --no-tui --once --kubeconfig KC
//	go tool pprof -top cpu.pprof
//
// The arguments after -- are the plugin's, as "kubectl watchcache" takes them.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/cli"
)

func main() {
	cpu := flag.String("cpuprofile", "cpu.pprof", "file for the CPU profile")
	heap := flag.String("heapprofile", "", "file for a heap profile taken at the end (none when empty)")
	flag.Parse()
	os.Exit(run(*cpu, *heap, flag.Args()))
}

func run(cpu, heap string, args []string) int {
	f, err := os.Create(cpu)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		return 2
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "error: starting the CPU profile: %v\n", err)
		return 2
	}
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	cmd := cli.NewCommand(streams, "profile")
	cmd.SetArgs(args)
	code := cli.Execute(cmd, streams)
	pprof.StopCPUProfile()
	if heap != "" {
		h, err := os.Create(heap)
		if err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			return 2
		}
		defer h.Close()
		runtime.GC()
		if err := pprof.WriteHeapProfile(h); err != nil {
			fmt.Fprintf(os.Stderr, "error: writing the heap profile: %v\n", err)
			return 2
		}
	}
	return code
}
