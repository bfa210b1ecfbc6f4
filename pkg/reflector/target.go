package reflector

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// This file names what a Source serves (Target, Resource) and the encoding
// it asks for (Wire): the words the Source seam, a trace's header and the
// dashboard share. Package live's Source is the Source that speaks them
// to an API server.

// Resource names what the reflector lists and watches. In JSON (a trace
// header's `resource`) it is {"group", "version", "resource", "kind", "namespaced"}.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// String is the resource's full name, "resource.version.group":
// "configmaps.v1", "deployments.v1.apps".
func (r Resource) String() string {
	s := r.GVR.Resource + "." + r.GVR.Version
	if r.GVR.Group != "" {
		s += "." + r.GVR.Group
	}
	return s
}

// Secrets says the resource is the core group's Secrets, whose values are
// never recorded or shown unless the user asks.
func (r Resource) Secrets() bool { return r.GVR.Group == "" && r.GVR.Resource == "secrets" }

// resourceJSON is Resource's JSON form.
type resourceJSON struct {
	Group      string `json:"group"`
	Version    string `json:"version"`
	Resource   string `json:"resource"`
	Kind       string `json:"kind"`
	Namespaced bool   `json:"namespaced"`
}

// MarshalJSON implements json.Marshaler.
func (r Resource) MarshalJSON() ([]byte, error) {
	return json.Marshal(resourceJSON{Group: r.GVR.Group, Version: r.GVR.Version, Resource: r.GVR.Resource, Kind: r.Kind, Namespaced: r.Namespaced})
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *Resource) UnmarshalJSON(b []byte) error {
	var j resourceJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = Resource{GVR: schema.GroupVersionResource{Group: j.Group, Version: j.Version, Resource: j.Resource}, Kind: j.Kind, Namespaced: j.Namespaced}
	return nil
}

// Target is one resource in one scope with its selectors.
type Target struct {
	Resource Resource
	// Namespace is "" for all namespaces (or for a cluster-scoped resource).
	Namespace     string
	LabelSelector string
	FieldSelector string
}

// Wire is the encoding a Source asks the API server for: what package live's
// Source asks for (live.ResolveWire), what a trace header records and what
// the dashboard shows.
type Wire string

const (
	// WireAuto is protobuf where the server speaks it — built-in resources
	// (see live.BuiltIn) and metadata-only requests for any resource — and
	// JSON otherwise (custom resources), unless whole objects are kept (JSON).
	WireAuto Wire = "auto"
	// WireProtobuf asks for protobuf, with JSON as the server's fallback.
	WireProtobuf Wire = "protobuf"
	// WireJSON asks for JSON only.
	WireJSON Wire = "json"
)
