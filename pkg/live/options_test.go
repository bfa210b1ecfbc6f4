package live_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

var configMaps = reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}

func TestWireAutoIsProtobufForBuiltInsAndMetadataAndJSONForFullObjectsAndCRDs(t *testing.T) {
	widgets := reflector.Resource{GVR: configMaps.GVR, Kind: "Widget", Namespaced: true}
	widgets.GVR.Group, widgets.GVR.Resource = "example.com", "widgets"
	gateways := reflector.Resource{Kind: "Gateway", Namespaced: true}
	gateways.GVR.Group, gateways.GVR.Version, gateways.GVR.Resource = "gateway.networking.k8s.io", "v1", "gateways"
	deployments := reflector.Resource{Kind: "Deployment", Namespaced: true}
	deployments.GVR.Group, deployments.GVR.Version, deployments.GVR.Resource = "apps", "v1", "deployments"
	for _, tc := range []struct {
		res  reflector.Resource
		o    live.Options
		want reflector.Wire
	}{
		{configMaps, live.Options{}, reflector.WireProtobuf},
		{deployments, live.Options{Wire: reflector.WireAuto}, reflector.WireProtobuf},
		{widgets, live.Options{}, reflector.WireJSON},
		{gateways, live.Options{}, reflector.WireJSON},
		{widgets, live.Options{MetadataOnly: true}, reflector.WireProtobuf},
		{configMaps, live.Options{KeepBody: true}, reflector.WireJSON},
		{configMaps, live.Options{FullObjects: true, MetadataOnly: true}, reflector.WireJSON},
		{configMaps, live.Options{Wire: reflector.WireJSON}, reflector.WireJSON},
		{widgets, live.Options{Wire: reflector.WireProtobuf}, reflector.WireProtobuf},
	} {
		if got, err := live.ResolveWire(tc.res, tc.o); got != tc.want || err != nil {
			t.Errorf("%s %+v: %s, %v; want %s", tc.res, tc.o, got, err, tc.want)
		}
	}
	if _, err := live.ResolveWire(configMaps, live.Options{Wire: reflector.WireProtobuf, KeepBody: true}); err == nil {
		t.Error("protobuf with full objects kept: no error")
	}
	if _, err := live.ResolveWire(configMaps, live.Options{Wire: "xml"}); err == nil {
		t.Error("an unknown wire: no error")
	}
}
