package live

import (
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

// NewFlowControlNamesOnClock is NewFlowControlNames on clk; afterRead is
// called after each lookup has ended (its listeners told), finishWaits
// when Finish waits (on clk) for a Retry-After to run.
func NewFlowControlNamesOnClock(cfg *rest.Config, clk clock.WithDelayedExecution, afterRead func(), finishWaits func(time.Duration)) (*FlowControlNames, error) {
	n, err := newFlowControlNames(cfg, clk)
	if err != nil {
		return nil, err
	}
	n.afterRead, n.finishWaits = afterRead, finishWaits
	return n, nil
}
