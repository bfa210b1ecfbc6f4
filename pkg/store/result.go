package store

import "errors"

// ErrInvalidEvent is wrapped by the error ApplyEvent returns for an event that
// breaks the vocabulary's rules (InitApply or InitDone without Init, a missing
// object or name, an unknown type). Such an event changes nothing.
var ErrInvalidEvent = errors.New("invalid store event")

// ErrClosed is wrapped by the errors of ApplyEvent after Writer.Close, and of
// WaitUntilReady when the Writer was closed before its first InitDone.
var ErrClosed = errors.New("store writer closed")

// Outcome says what one event did to the cache.
type Outcome uint8

const (
	// RelistStarted: Init opened a fresh, empty relist buffer (dropping any
	// unfinished one); readers keep the old snapshot.
	RelistStarted Outcome = iota + 1
	// Buffered: InitApply put the object in the relist buffer; readers do not see it yet.
	Buffered
	// Relisted: InitDone swapped the buffer in as the live snapshot; Result.Diff says
	// what the watch had missed.
	Relisted
	// Added: Apply inserted an object under a ref that had no entry.
	Added
	// Modified: Apply replaced the entry of the same UID with another resourceVersion.
	Modified
	// Replaced: Apply found another UID under the ref (a missed delete and recreate)
	// and replaced the entry; counted as a UID mismatch.
	Replaced
	// Duplicate: Apply carried the cached (UID, resourceVersion) again; nothing changed.
	Duplicate
	// Deleted: Delete removed the entry of the same UID.
	Deleted
	// StaleDelete: Delete named another UID than the cached one, a late delete of an
	// older instance; ignored and counted as a UID mismatch.
	StaleDelete
	// AbsentDelete: Delete found no entry under the ref (already gone, e.g. the same
	// delete delivered twice or removed by a relist); nothing changed.
	AbsentDelete
	// Ignored: Bookmark; it only moves the reflector's cursor, never stored objects.
	Ignored
)

// String returns the outcome's name as used in notes and traces.
func (o Outcome) String() string {
	names := [...]string{RelistStarted: "RelistStarted", Buffered: "Buffered", Relisted: "Relisted", Added: "Added",
		Modified: "Modified", Replaced: "Replaced", Duplicate: "Duplicate", Deleted: "Deleted",
		StaleDelete: "StaleDelete", AbsentDelete: "AbsentDelete", Ignored: "Ignored"}
	if o <= 0 || int(o) >= len(names) {
		return "Unknown"
	}
	return names[o]
}

// UIDMismatch reports whether the outcome is one the UID guard counts:
// Replaced or StaleDelete.
func (o Outcome) UIDMismatch() bool { return o == Replaced || o == StaleDelete }

// Result is what ApplyEvent did with one event. It is also what subscribers
// receive, for the outcomes that changed the live snapshot.
type Result struct {
	Outcome Outcome
	// Object is the event's object (InitApply, Apply, Delete); nil otherwise.
	Object *Object
	// Previous is the live entry under the object's ref before the event, if any:
	// the replaced or removed object, or the one a stale delete or duplicate left in place.
	Previous *Object
	// Diff is set for Relisted only.
	Diff *RelistDiff
}
