package live

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ResourceFor resolves one resource name as kubectl does, through mapper (a
// shortcut expander, for short names such as cm): a plural, RESOURCE.GROUP,
// RESOURCE.VERSION.GROUP, and RESOURCE.VERSION of the core group
// (configmaps.v1, as the tool prints it). The error is the mapper's, for
// the name taken as RESOURCE.GROUP.
func ResourceFor(mapper meta.RESTMapper, arg string) (schema.GroupVersionResource, error) {
	full, gr := schema.ParseResourceArg(strings.ToLower(arg))
	if full != nil {
		if gvr, err := mapper.ResourceFor(*full); err == nil {
			return gvr, nil
		}
	}
	gvr, err := mapper.ResourceFor(gr.WithVersion(""))
	if err != nil && strings.Count(arg, ".") == 1 {
		// configmaps.v1: a core resource's version, not a group.
		if core, e := mapper.ResourceFor(schema.GroupVersionResource{Version: gr.Group, Resource: gr.Resource}); e == nil {
			return core, nil
		}
	}
	return gvr, err
}
