package cli

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// resolveResources turns kubectl resource arguments into the distinct
// resources to watch, in argument order: several arguments, each a
// comma-separated list of names (po, pods, deploy, deployments.apps,
// deployments.v1.apps, a CRD plural) or categories (all, or a CRD's), as
// kubectl get resolves them. An error names the argument that failed, and
// nothing resolves unless everything does; more than max resources is refused.
// A second argument that names no resource type after a first that does is
// kubectl get's TYPE NAME, and a usage error that says how to watch NAME.
func resolveResources(flags *genericclioptions.ConfigFlags, list resourceList, max int) ([]reflector.Resource, error) {
	mapper, err := flags.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	dc, err := flags.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	categories := restmapper.NewDiscoveryCategoryExpander(dc)
	var out []reflector.Resource
	seen := map[schema.GroupVersionResource]bool{}
	add := func(r reflector.Resource) {
		if !seen[r.GVR] {
			seen[r.GVR] = true
			out = append(out, r)
		}
	}
	for i, arg := range list.args {
		for _, name := range strings.Split(arg, ",") {
			grs, isCategory := categories.Expand(strings.ToLower(name))
			if !isCategory || len(grs) == 0 {
				r, err := resolveResource(mapper, dc, name)
				var unknown unknownResourceError
				if i == 1 && name == arg && errors.As(err, &unknown) {
					// The first argument resolved: "configmaps c1" is how kubectl
					// get names one object, which a reflector watches through a
					// field selector; or the second is a resource mistyped. Two
					// resources as two arguments ("pods deployments") resolve and
					// are both watched.
					return nil, usageErrorf("%w; if %q is TYPE NAME, %s a resource type, and narrow it to one object with a field selector, e.g. \"%s %s --field-selector metadata.name=%s\"",
						err, list.args[0]+" "+arg, list.verb, list.example, list.args[0], arg)
				}
				if err != nil {
					return nil, err
				}
				add(r)
				continue
			}
			before := len(out)
			for _, gr := range grs {
				gvr, err := mapper.ResourceFor(gr.WithVersion(""))
				if err != nil {
					return nil, fmt.Errorf("category %q: resolving %s: %w", name, gr, err)
				}
				r, err := describeResource(dc, gvr, gr.String())
				if err != nil {
					return nil, fmt.Errorf("category %q: %w", name, err)
				}
				add(r)
			}
			// Counted as watched: several group-resources of a category can
			// be served as one resource.
			if n := len(out) - before; n > max {
				return nil, usageErrorf("category %q expands to %d resources, more than --max-resources=%d", name, n, max)
			}
		}
	}
	if len(out) > max {
		return nil, usageErrorf("%d resources to watch, more than --max-resources=%d", len(out), max)
	}
	return out, nil
}

// resolveResource turns one kubectl resource name (po, pods, deploy,
// deployments.apps, deployments.v1.apps, configmaps.v1 as the tool prints a
// core resource, a CRD plural) into the resource to
// watch, through the RESTMapper and discovery, with kubectl's wording for errors.
func resolveResource(mapper meta.RESTMapper, dc discovery.DiscoveryInterface, arg string) (reflector.Resource, error) {
	gvr, err := live.ResourceFor(mapper, arg)
	if err != nil {
		if meta.IsNoMatchError(err) || strings.Contains(err.Error(), "no matches for") {
			return reflector.Resource{}, unknownResourceError{arg}
		}
		var amb *meta.AmbiguousResourceError
		if errors.As(err, &amb) {
			return reflector.Resource{}, fmt.Errorf("resource type %q is ambiguous: %w; name it fully, e.g. %s", arg, err, qualified(amb.MatchingResources))
		}
		return reflector.Resource{}, err
	}
	return describeResource(dc, gvr, arg)
}

// qualified names each of rs as the tool does (pods.v1, deployments.v1.apps).
func qualified(rs []schema.GroupVersionResource) string {
	var out []string
	for _, r := range rs {
		out = append(out, reflector.Resource{GVR: r}.String())
	}
	return strings.Join(out, " or ")
}

// describeResource finds the resource's kind, scope and verbs; a resource that
// cannot be listed and watched is refused with the reason.
func describeResource(dc discovery.DiscoveryInterface, gvr schema.GroupVersionResource, arg string) (reflector.Resource, error) {
	list, err := dc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return reflector.Resource{}, fmt.Errorf("looking up %s in discovery: %w", gvr.GroupVersion(), err)
	}
	for _, r := range list.APIResources {
		if r.Name != gvr.Resource {
			continue
		}
		var missing []string
		for _, verb := range []string{"list", "watch"} {
			if !slices.Contains(r.Verbs, verb) {
				missing = append(missing, verb)
			}
		}
		if len(missing) > 0 {
			return reflector.Resource{}, fmt.Errorf("the server does not support %s on resource type %q (its verbs: %s)", strings.Join(missing, " or "), arg, strings.Join(r.Verbs, ", "))
		}
		return reflector.Resource{GVR: gvr, Kind: r.Kind, Namespaced: r.Namespaced}, nil
	}
	return reflector.Resource{}, unknownResourceError{arg}
}

// unknownResourceError is a name under which the server serves no resource
// type, in kubectl's words.
type unknownResourceError struct{ name string }

func (e unknownResourceError) Error() string {
	return fmt.Sprintf("the server doesn't have a resource type %q", e.name)
}

// resourceList is a command's resource arguments, with how the command
// names its verb and itself in the hints of its errors.
type resourceList struct {
	args []string
	// verb and example are as resourceArgs takes them.
	verb, example string
}

// resourceArgs checks a command's resource arguments as kubectl reads
// them: one or more, each a resource, a comma-separated list of them, or a
// category; example is the command line that the error suggests ("kubectl
// watchcache pods").
func resourceArgs(args []string, verb, example string) (resourceList, error) {
	if len(args) == 0 {
		return resourceList{}, usageErrorf("you must specify the type of resource to %s, e.g. \"%s pods\" or \"%s pods,deployments.apps\"", verb, example, example)
	}
	for _, arg := range args {
		for _, name := range strings.Split(arg, ",") {
			if strings.TrimSpace(name) == "" {
				return resourceList{}, usageErrorf("%q has an empty resource name: write resources as kubectl does, e.g. pods,deployments.apps", arg)
			}
			if kind, obj, ok := strings.Cut(name, "/"); ok {
				// kubectl get's TYPE/NAME: a reflector watches a resource,
				// and a field selector narrows it to one object.
				return resourceList{}, usageErrorf("%q is TYPE/NAME: %s a resource type, and narrow it to one object with a field selector, e.g. \"%s %s --field-selector metadata.name=%s\"", name, verb, example, kind, obj)
			}
		}
	}
	return resourceList{args: args, verb: verb, example: example}, nil
}

// connected is what a command that talks to a cluster starts from: its
// REST config, the resources its arguments name, and the namespace (""
// for all namespaces).
type connected struct {
	rest      *rest.Config
	resources []reflector.Resource
	namespace string
}

// connect checks the kubeconfig, builds the REST config (with timeout, a
// bound on each request, discovery's included, when neither the kubeconfig
// nor --request-timeout sets one), resolves the resource arguments (at most
// max) and takes the namespace from the flags unless allNamespaces.
func connect(flags *genericclioptions.ConfigFlags, args resourceList, max int, allNamespaces bool, timeout time.Duration) (connected, error) {
	if err := checkKubeconfig(flags); err != nil {
		return connected{}, err
	}
	bound(flags, timeout)
	restCfg, err := flags.ToRESTConfig()
	if err != nil {
		return connected{}, err
	}
	resources, err := resolveResources(flags, args, max)
	if err != nil {
		return connected{}, connectionError(restCfg.Host, err)
	}
	c := connected{rest: restCfg, resources: resources}
	if !allNamespaces {
		if c.namespace, _, err = flags.ToRawKubeConfigLoader().Namespace(); err != nil {
			return connected{}, err
		}
		// -n is checked with the flags; the kubeconfig's context (or a
		// pod's namespace, in the cluster) may name
		// a namespace no namespace can have too.
		if err := checkNamespace("namespace", c.namespace); err != nil {
			return connected{}, fmt.Errorf("the namespace of the kubeconfig (or the pod): %w", err)
		}
	}
	return c, nil
}

// bound makes each request of every config the flags build time out after
// timeout, unless the kubeconfig or --request-timeout sets a bound: discovery
// and the RESTMapper build configs of their own from the flags.
func bound(flags *genericclioptions.ConfigFlags, timeout time.Duration) {
	wrap := flags.WrapConfigFn
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		if wrap != nil {
			c = wrap(c)
		}
		if c.Timeout == 0 {
			c.Timeout = timeout
		}
		return c
	}
}

// checkKubeconfig refuses to run without a cluster to talk to, instead of
// falling back to localhost:8080 as client-go does.
func checkKubeconfig(flags *genericclioptions.ConfigFlags) error {
	if flags.APIServer != nil && *flags.APIServer != "" {
		return nil
	}
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return err
	}
	if len(raw.Clusters) == 0 {
		if _, err := rest.InClusterConfig(); err == nil {
			return nil // in a pod, as kubectl: its service account
		}
		return errors.New("no kubeconfig found (looked at --kubeconfig, $KUBECONFIG and ~/.kube/config): pass --kubeconfig or --server")
	}
	if raw.CurrentContext == "" && (flags.Context == nil || *flags.Context == "") {
		return errors.New(`the kubeconfig has no current context: set one with "kubectl config use-context NAME", or pass --context`)
	}
	return nil
}

// connectionError words a failure to reach the server as kubectl does.
func connectionError(host string, err error) error {
	if utilnet.IsConnectionRefused(err) {
		return fmt.Errorf("the connection to the server %s was refused - did you specify the right host or port?", hostOnly(host))
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return fmt.Errorf("unable to connect to the server %s: %w", hostOnly(host), err)
	}
	return err
}

func hostOnly(host string) string {
	if u, err := url.Parse(host); err == nil && u.Host != "" {
		return u.Host
	}
	return host
}
