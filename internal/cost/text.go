package cost

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
)

// formLabel is form as the text output names it.
func formLabel(form string) string {
	switch form {
	case FormTyped:
		return "typed (client-go informer)"
	case FormDynamic:
		return "dynamic (unstructured)"
	case FormMetadata:
		return "metadata (PartialObjectMetadata)"
	case FormTypedNoManagedFields:
		return "typed, managedFields stripped"
	case FormDynamicNoManagedFields:
		return "dynamic, managedFields stripped"
	case FormWatchcache:
		return "kubectl-watchcache's store"
	}
	return form
}

// WriteText prints the report for people.
func WriteText(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }
	for i, r := range rep.Resources {
		if i > 0 {
			p("\n")
		}
		where := "all namespaces"
		switch {
		case r.ClusterScoped:
			where = "cluster-scoped"
		case r.Namespace != "":
			where = "namespace " + r.Namespace
		}
		fmt.Fprintf(w, "%s (%s): %s, read whole once in %s (%s of %s, %.2fs); %d measured",
			r.Resource, where, format.PluralUngrouped(r.Objects, "object"), format.PluralUngrouped(int64(r.Read.Pages), "page"), format.Bytes(r.Read.Bytes), r.Read.Wire, r.Read.Seconds, r.Sampled)
		if int64(r.Sampled) < r.Objects {
			fmt.Fprintf(w, ", a random sample")
		}
		fmt.Fprintln(w)
		p("\twire\tbytes/object\tinitial list\tlist time\t\n")
		p("\tjson\t%s\t%s\t%.2fs\t\n", format.Bytes(r.BytesPerObject.JSON), format.Bytes(r.ListBytes.JSON), r.ListSeconds.JSON)
		if r.BytesPerObject.Protobuf != nil {
			p("\tprotobuf\t%s\t%s\t%.2fs\t\n", format.Bytes(*r.BytesPerObject.Protobuf), format.Bytes(*r.ListBytes.Protobuf), *r.ListSeconds.Protobuf)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
		writeHeaps(tw, &r.Heap)
		if err := tw.Flush(); err != nil {
			return err
		}
		if c := r.Cheapest; c != nil {
			if c.Form == c.Against {
				fmt.Fprintf(w, "cheapest that serves --need %s: %s, %s (no saving)\n", c.Need, formLabel(c.Form), format.Bytes(c.Total))
			} else {
				fmt.Fprintf(w, "cheapest that serves --need %s: %s, %s, saving %s (%.1f%%) against the %s informer\n",
					c.Need, formLabel(c.Form), format.Bytes(c.Total), format.Bytes(c.Saving), c.SavingPercent, c.Against)
			}
		}
	}
	if t := rep.Totals; t != nil {
		fmt.Fprintf(w, "\nall %d resources: %d objects, initial lists %s in JSON", len(rep.Resources), t.Objects, format.Bytes(t.ListBytes.JSON))
		if t.ListBytes.Protobuf != nil {
			fmt.Fprintf(w, ", %s in protobuf", format.Bytes(*t.ListBytes.Protobuf))
		}
		fmt.Fprintln(w)
		writeHeaps(tw, &t.Heap)
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\nasked of the server:")
	for i, r := range rep.Requests {
		// A long list's pages: the first few and the last say what was asked.
		if len(rep.Requests) > maxRequestsShown && i >= maxRequestsShown-1 && i < len(rep.Requests)-1 {
			if i == maxRequestsShown-1 {
				fmt.Fprintf(w, "  … %d more (-o json lists every one)\n", len(rep.Requests)-maxRequestsShown)
			}
			continue
		}
		fmt.Fprintf(w, "  %s\n", r)
	}
	return nil
}

// maxRequestsShown is how many requests the text output lists.
const maxRequestsShown = 8

func writeHeaps(tw *tabwriter.Writer, h *Heaps) {
	fmt.Fprintf(tw, "\tform\tper object\tsteady cache\t95%% range\tpeak, paged LIST\tpeak, streaming list\t\n")
	for _, f := range h.forms() {
		x := *f.p
		if x == nil {
			continue
		}
		rng := "-"
		if x.Range != nil {
			rng = format.Bytes(x.Range[0]) + " – " + format.Bytes(x.Range[1])
		}
		fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\t%s\t%s\t\n", formLabel(f.name), format.Bytes(x.PerObject), format.Bytes(x.Total), rng, format.Bytes(x.PeakList), format.Bytes(x.PeakStream))
	}
}
