package cli

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// resolveResource turns a kubectl resource argument (po, pods, deploy,
// deployments.apps, deployments.v1.apps, a CRD plural) into the resource to
// watch, through the RESTMapper and discovery, with kubectl's wording for errors.
func resolveResource(flags *genericclioptions.ConfigFlags, arg string) (reflector.Resource, error) {
	mapper, err := flags.ToRESTMapper()
	if err != nil {
		return reflector.Resource{}, err
	}
	fullySpecified, groupResource := schema.ParseResourceArg(strings.ToLower(arg))
	var gvr schema.GroupVersionResource
	if fullySpecified != nil {
		if g, err := mapper.ResourceFor(*fullySpecified); err == nil {
			gvr = g
		}
	}
	if gvr.Empty() {
		g, err := mapper.ResourceFor(groupResource.WithVersion(""))
		if err != nil {
			if meta.IsNoMatchError(err) || strings.Contains(err.Error(), "no matches for") {
				return reflector.Resource{}, fmt.Errorf("the server doesn't have a resource type %q", arg)
			}
			var amb *meta.AmbiguousResourceError
			if errors.As(err, &amb) {
				return reflector.Resource{}, fmt.Errorf("resource type %q is ambiguous: %w; name it fully, e.g. %s", arg, err, qualified(amb.MatchingResources))
			}
			return reflector.Resource{}, err
		}
		gvr = g
	}
	dc, err := flags.ToDiscoveryClient()
	if err != nil {
		return reflector.Resource{}, err
	}
	return describeResource(dc, gvr, arg)
}

func qualified(rs []schema.GroupVersionResource) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Resource+"."+r.Version+"."+r.Group)
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
			if !hasVerb(r.Verbs, verb) {
				missing = append(missing, verb)
			}
		}
		if len(missing) > 0 {
			return reflector.Resource{}, fmt.Errorf("the server does not support %s on resource type %q (its verbs: %s)", strings.Join(missing, " or "), arg, strings.Join(r.Verbs, ", "))
		}
		return reflector.Resource{GVR: gvr, Kind: r.Kind, Namespaced: r.Namespaced}, nil
	}
	return reflector.Resource{}, fmt.Errorf("the server doesn't have a resource type %q", arg)
}

func hasVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
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
