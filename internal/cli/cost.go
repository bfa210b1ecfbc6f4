package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/cost"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// CostOptions are the flags of "kubectl watchcache cost RESOURCE".
type CostOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	AllNamespaces bool
	LabelSelector string
	FieldSelector string
	Sample        int
	Exact         bool
	Need          string
	Output        string
	MaxResources  int

	// sampleFlag is --sample's, to tell it given from its default.
	sampleFlag *pflag.Flag
	// identity names the plugin to the server (--user-agent).
	identity     identity
	resourceArgs resourceList
}

// NewCostOptions returns the defaults.
func NewCostOptions(streams genericiooptions.IOStreams) *CostOptions {
	return &CostOptions{
		// Warnings as kubectl prints them: a short name that could also
		// mean another resource says so.
		ConfigFlags:  genericclioptions.NewConfigFlags(true).WithWarningPrinter(streams),
		IOStreams:    streams,
		Sample:       cost.DefaultSample,
		Need:         cost.NeedFull,
		MaxResources: 30,
	}
}

func newCostCommand(streams genericiooptions.IOStreams, version string) *cobra.Command {
	o := NewCostOptions(streams)
	o.identity.version = version
	cmd := &cobra.Command{
		Use:   "cost RESOURCE[,RESOURCE…]",
		Short: "Measure what an informer of a resource would cost, before you run one",
		Long: "Read the whole list once, page by page (protobuf for built-in kinds), counting every object's\n" +
			"bytes and keeping a uniform random sample (objects of 64 KiB or more apart, up to 50 of them);\n" +
			"build the sample in each form an informer holds\n" +
			"(typed, dynamic, metadata, typed without managedFields, this tool's store) in a real client-go\n" +
			"indexer, measure the heap after GC, and scale it by the list's bytes: per object, steady cache\n" +
			"and its 95% range, peak during the initial sync (paged LIST and streaming list), the initial\n" +
			"list's bytes and time on each wire, and the cheapest form that serves --need. It says how much\n" +
			"was read and how long it took. With --exact every object is measured.",
		Example: "  kubectl watchcache cost pods -A\n" +
			"  kubectl watchcache cost configmaps,secrets -n prod --sample 1000 -o json\n" +
			"  kubectl watchcache cost widgets.example.com -A -l team=a --need metadata",
		RunE:              runOptions(o),
		ValidArgsFunction: completeResources(o.ConfigFlags),
	}
	f := cmd.Flags()
	o.ConfigFlags.AddFlags(f)
	o.identity.addFlags(f, o.ConfigFlags)
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Measure the resources in all namespaces")
	f.StringVarP(&o.LabelSelector, "selector", "l", "", "Label selector, as in kubectl get -l")
	f.StringVar(&o.FieldSelector, "field-selector", "", "Field selector, as in kubectl get --field-selector")
	completeConfigFlags(cmd, o.ConfigFlags)
	f.IntVar(&o.Sample, "sample", o.Sample, fmt.Sprintf("Objects under 64 KiB to sample at random from the list and measure (at most %d); up to 50 larger ones are sampled besides", cost.MaxSample))
	o.sampleFlag = f.Lookup("sample")
	f.BoolVar(&o.Exact, "exact", false, "Measure every object of the list, not a sample (the whole list is held in memory while it is measured)")
	f.StringVar(&o.Need, "need", o.Need, "What the informer's handlers read, for the cheapest form that serves it: full (spec, status) or metadata (names, labels, owners)")
	f.StringVarP(&o.Output, "output", "o", "", "Output format: text or json")
	f.IntVar(&o.MaxResources, "max-resources", o.MaxResources, "Refuse to measure more resources than this (a category such as all can name many)")
	_ = cmd.RegisterFlagCompletionFunc("need", cobra.FixedCompletions([]string{cost.NeedFull, cost.NeedMetadata}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete takes the resource arguments, as "kubectl watchcache RESOURCE" does.
func (o *CostOptions) Complete(args []string) error {
	var err error
	o.resourceArgs, err = resourceArgs(args, "measure", "kubectl watchcache cost")
	return err
}

// Validate checks the flags without contacting the server.
func (o *CostOptions) Validate() error {
	if err := o.identity.validate(); err != nil {
		return err
	}
	if err := validateNamespaceFlag(o.ConfigFlags); err != nil {
		return err
	}
	if o.Sample < 1 || o.Sample > cost.MaxSample {
		return usageErrorf("invalid --sample %d: must be between 1 and %d", o.Sample, cost.MaxSample)
	}
	switch o.Need {
	case cost.NeedFull, cost.NeedMetadata:
	default:
		return usageErrorf("invalid --need %q: want full or metadata", o.Need)
	}
	switch o.Output {
	case "", "text", "json":
	default:
		return usageErrorf("invalid output format %q: want text or json", o.Output)
	}
	if o.Exact && o.sampleFlag != nil && o.sampleFlag.Changed {
		return usageErrorf("--sample and --exact cannot be used together: --exact measures every object")
	}
	if o.MaxResources < 1 {
		return usageErrorf("invalid --max-resources %d: must be at least 1", o.MaxResources)
	}
	return nil
}

// Run resolves the resources, measures them and prints the report.
func (o *CostOptions) Run(ctx context.Context) error {
	c, err := connect(o.ConfigFlags, o.resourceArgs, o.MaxResources, o.AllNamespaces, 2*time.Minute)
	if err != nil {
		return err
	}
	restCfg, resources, ns := c.rest, c.resources, c.namespace
	warnMissingNamespace(ctx, o.ErrOut, restCfg, resources, ns, "there is nothing to measure in it")
	rep, err := cost.Measure(ctx, cost.Options{
		Rest: restCfg, Resources: resources, Namespace: ns,
		LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector,
		Sample: o.Sample, Exact: o.Exact, Need: o.Need,
	})
	// What was asked (before a failure: what the server refused); the text output lists it itself.
	if rep != nil && (err != nil || o.Output == "json") {
		for _, r := range rep.Requests {
			fmt.Fprintf(o.ErrOut, "asked: %s\n", r)
		}
	}
	if err != nil {
		return connectionError(restCfg.Host, err)
	}
	if o.Output == "json" {
		enc := json.NewEncoder(o.Out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("encoding the report: %w", err)
		}
		return nil
	}
	return cost.WriteText(o.Out, rep)
}

// warnMissingNamespace says when the namespace to measure or watch does not
// exist, and meaning, what that means for the command (kubectl get says
// nothing there; a cost of zero would look like a measurement, an empty
// cache like a quiet namespace). It says nothing when it cannot tell (no
// permission to read namespaces, or no answer within a few seconds). It
// returns what it said, without "warning: ", or "".
func warnMissingNamespace(ctx context.Context, errOut io.Writer, cfg *rest.Config, resources []reflector.Resource, ns, meaning string) string {
	if ns == "" || !slices.ContainsFunc(resources, func(r reflector.Resource) bool { return r.Namespaced }) {
		return ""
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return ""
	}
	warning := fmt.Sprintf("namespace %q not found: %s", ns, meaning)
	fmt.Fprintln(errOut, "warning: "+warning)
	return warning
}
