package testcluster

import (
	"sync"
	"testing"
	"time"
)

// TestMainRunsMoreParallelTestsThanCores: under Main, four parallel tests
// (more than go test's default of GOMAXPROCS on two cores) all run at once:
// each waits until every one has started. With -parallel 2 the third would
// wait for a slot that the first two never give back, and the test fails at
// its deadline.
func TestMainRunsMoreParallelTestsThanCores(t *testing.T) {
	const n = 4
	var started sync.WaitGroup
	started.Add(n)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	for i := range n {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			started.Done()
			select {
			case <-all:
			case <-time.After(time.Minute):
				t.Errorf("parallel test %d: the %d parallel tests did not all run at once (-test.parallel too low)", i, n)
			}
		})
	}
}
