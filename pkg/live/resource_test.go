package live

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestResourceForTakesKubectlsNamesAndTheTools(t *testing.T) {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deploy := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	for arg, want := range map[string]schema.GroupVersionResource{
		"configmaps": cm, "ConfigMaps": cm, "configmaps.v1": cm, "configmaps.v1.": cm,
		"deployments.apps": deploy, "deployments.v1.apps": deploy,
	} {
		if got, err := ResourceFor(m, arg); err != nil || got != want {
			t.Errorf("%s: got %v, %v; want %v", arg, got, err, want)
		}
	}
	for _, arg := range []string{"configmaps.v2", "flurbs", "deployments.v1.nope"} {
		if got, err := ResourceFor(m, arg); err == nil {
			t.Errorf("%s: got %v, want an error", arg, got)
		}
	}
}
