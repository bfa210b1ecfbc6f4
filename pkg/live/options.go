package live

import (
	"fmt"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Options shape what a Source asks for and keeps.
type Options struct {
	// MetadataOnly asks the server for PartialObjectMetadata, so only
	// metadata crosses the wire.
	MetadataOnly bool
	// KeepBody keeps each object's JSON in the store (full-object mode).
	KeepBody bool
	// FullObjects says something records whole objects as served (a trace
	// with --trace-objects full): like KeepBody, it needs JSON on the wire.
	FullObjects bool
	// DropRaw leaves [reflector.Item].Raw nil, except with KeepBody, where
	// it is the object's Body: only a trace recorder and --diff's differ
	// read Raw, and without them each object's JSON need not be copied (a
	// LIST page would otherwise be held whole, as copies, until it is applied).
	DropRaw bool
	// Wire is the encoding to ask for; "" is [reflector.WireAuto].
	Wire reflector.Wire
	// Names names the FlowSchema and PriorityLevel of a 429's
	// [reflector.Throttle] (nil: UIDs only). One is shared by a run's Sources.
	Names *FlowControlNames
	// Warnings receives the API server's Warning headers (a deprecated
	// API, say), as client-go's REST clients hand them to
	// rest.Config.WarningHandler; nil ignores them.
	Warnings rest.WarningHandler
}

// BuiltIn reports whether res is compiled into the API server, so that it is
// served in protobuf: its group, version and kind are registered in
// client-go's scheme (k8s.io/client-go/kubernetes/scheme), the types for
// which client-go's typed clients ask for protobuf. Custom resources are not
// (the apiextensions server encodes them in JSON only: it answers a request
// for protobuf alone with 406 Not Acceptable), nor are aggregated APIs,
// whatever their group's name (gateway.networking.k8s.io is a CRD), nor
// built-in kinds newer than this client's client-go (asked in JSON: safe).
func BuiltIn(res reflector.Resource) bool {
	if res.Kind == "" {
		return false
	}
	return scheme.Scheme.Recognizes(res.GVR.GroupVersion().WithKind(res.Kind))
}

// ResolveWire is the encoding a Source with o asks for when listing and
// watching res: JSON when whole objects are kept (KeepBody, FullObjects),
// for they are kept as JSON; otherwise, for [reflector.WireAuto], protobuf for
// metadata-only requests (PartialObjectMetadata is served in protobuf for
// every resource, custom ones included) and for built-in resources, JSON for
// the rest. Asking for protobuf while keeping whole objects is an error.
func ResolveWire(res reflector.Resource, o Options) (reflector.Wire, error) {
	fullJSON := o.KeepBody || o.FullObjects
	switch o.Wire {
	case "", reflector.WireAuto:
		if !fullJSON && (o.MetadataOnly || BuiltIn(res)) {
			return reflector.WireProtobuf, nil
		}
		return reflector.WireJSON, nil
	case reflector.WireProtobuf:
		if fullJSON {
			return "", fmt.Errorf("wire %s cannot keep or record full objects: they are kept as JSON, so they are asked for in JSON", o.Wire)
		}
		return reflector.WireProtobuf, nil
	case reflector.WireJSON:
		return reflector.WireJSON, nil
	}
	return "", fmt.Errorf("unknown wire %q (want auto, protobuf or json)", o.Wire)
}
