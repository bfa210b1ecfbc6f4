package dashboard

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/rates"
)

// labelDelivery is the delivery line's label in the health section.
const labelDelivery = "delivery"

// probeSparkWidth is how many of the probe's last samples the sparkline shows.
const probeSparkWidth = 20

// showsDelivery says whether the health section has a delivery line: with
// a probe (as the shown dashboard's poll last read it), or once the
// passive estimate counted an event.
func (m *Model) showsDelivery() bool {
	return m.Chrome.Probe.On || m.Stats.Lag.Counts.Total() > 0
}

// deliveryLine is the health section's delivery line: the probe's p50 and
// p99 over the last minute with a sparkline of its last samples, and the
// passive estimate's buckets (good to about ±2 s). Where it does not fit,
// the sparkline goes first, then the precision, then the probe's p50: the
// late buckets stay.
func (m *Model) deliveryLine(width int) string {
	s := m.deliveryParts(0)
	for left := 1; left <= 3 && ansi.StringWidth(s) > width; left++ {
		s = m.deliveryParts(left)
	}
	return common.Clip(s, width)
}

// deliveryParts is the delivery line with the first left of the sparkline,
// the estimate's precision and the probe's p50 left out.
func (m *Model) deliveryParts(left int) string {
	spark, precision, p50 := left < 1, left < 2, left < 3
	st := m.St
	var parts []string
	if p := m.Chrome.Probe; p.On {
		if p.Count == 0 {
			parts = append(parts, st.Faint.Render("probe: no sample yet"))
		} else {
			sev := common.SevNone
			switch {
			case p.MinuteP99 >= 2*time.Second:
				sev = common.SevBad
			case p.MinuteP99 >= 500*time.Millisecond:
				sev = common.SevWarn
			}
			vals := make([]int64, len(p.Recent))
			for i, d := range p.Recent {
				vals[i] = int64(d)
			}
			figures := "p99 " + format.Latency(p.MinuteP99)
			if p50 {
				figures = "p50 " + format.Latency(p.MinuteP50) + " · " + figures
			}
			part := st.Label.Render("probe ") + st.Sev(sev, figures)
			if spark {
				part += " " + st.Spark.Render(rates.Sparkline(vals, probeSparkWidth))
			}
			parts = append(parts, part)
		}
	}
	if c := m.Stats.Lag.Counts; c.Total() > 0 {
		part := st.Label.Render("lag ") + lagBuckets(m.St, c)
		if precision {
			part += st.Faint.Render(" (±2s)")
		}
		parts = append(parts, part)
	}
	return " " + st.Label.Render(fmt.Sprintf("%-*s", gaugeLabelCols-1, labelDelivery)) + strings.Join(parts, st.Label.Render(" · "))
}

// lagBuckets are the passive estimate's buckets, "<2s 12 2-5s 1 …", the
// late ones graded.
func lagBuckets(st common.Styles, c reflector.LagCounts) string {
	var b strings.Builder
	for i, n := range c {
		if i > 0 {
			b.WriteByte(' ')
		}
		text := reflector.LagBucketName(i) + " " + format.Count(n)
		switch {
		case n == 0:
			b.WriteString(st.Faint.Render(text))
		case i >= 3:
			b.WriteString(st.Bad.Render(text))
		case i == 2:
			b.WriteString(st.Warn.Render(text))
		default:
			b.WriteString(st.Value.Render(text))
		}
	}
	return b.String()
}
