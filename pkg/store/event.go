// Package store owns the reflector's cache: one Writer that applies watcher
// events (Init, InitApply, InitDone, Apply, Delete, Bookmark) and any number of
// cheap Store read handles that see consistent snapshots. It implements the
// atomic relist swap, the UID guard against stale deletes, idempotent applies,
// readiness and subscriber fan-out. It imports nothing else from this module.
package store

import "time"

// EventType is one step of the watcher vocabulary the Writer applies.
type EventType uint8

const (
	// Init starts a (re)list: a fresh buffer is opened while readers keep the old snapshot.
	Init EventType = iota + 1
	// InitApply adds one listed object to the buffer opened by Init.
	InitApply
	// InitDone swaps the buffer in as the live snapshot in one step and yields the relist diff.
	InitDone
	// Apply inserts or replaces one object in the live snapshot (ADDED or MODIFIED).
	Apply
	// Delete removes one object from the live snapshot, guarded by its UID.
	Delete
	// Bookmark only moves the cursor; it never changes stored objects.
	Bookmark
)

// String returns the event type's name as used in notes and traces.
func (t EventType) String() string {
	names := [...]string{Init: "Init", InitApply: "InitApply", InitDone: "InitDone", Apply: "Apply",
		Delete: "Delete", Bookmark: "Bookmark"}
	if int(t) >= len(names) || names[t] == "" {
		return "Unknown"
	}
	return names[t]
}

// Event is one step for the Writer. Object is set for InitApply, Apply and
// Delete; ResourceVersion is set for Bookmark (and may be set for InitDone to
// the list's collection resourceVersion).
type Event struct {
	Type            EventType
	Object          *Object
	ResourceVersion string
}

// Ref addresses an object inside one resource's cache. The address can be
// reused by a later instance: the UID, not the Ref, is the identity.
type Ref struct {
	Namespace string
	Name      string
}

// String renders the ref as kubectl does: "namespace/name", or "name" when cluster-scoped.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// OwnerRef is the compact form of a metav1.OwnerReference.
type OwnerRef struct {
	APIVersion string
	Kind       string
	Name       string
	UID        string
	Controller bool
}

// Object is the compact form of one cached Kubernetes object: identity and
// metadata always, the encoded body only when the reflector was asked to keep it.
// An Object handed to the Writer must not be modified afterwards.
type Object struct {
	Namespace         string
	Name              string
	UID               string
	ResourceVersion   string
	Generation        int64
	CreationTimestamp time.Time
	DeletionTimestamp *time.Time
	Labels            Labels
	OwnerReferences   []OwnerRef
	// Body is the encoded object (JSON) when full objects are kept; nil otherwise.
	Body []byte
}

// Ref returns the object's address.
func (o *Object) Ref() Ref { return Ref{Namespace: o.Namespace, Name: o.Name} }

// ShortUID keeps the first 8 characters of a UID, enough to tell two
// instances of a name apart on a screen; "-" for none.
func ShortUID(uid string) string {
	if uid == "" {
		return "-"
	}
	if len(uid) > 8 {
		return uid[:8]
	}
	return uid
}
