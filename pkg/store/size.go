package store

import (
	"time"
	"unsafe"
)

// Sizes for the bytes-held estimate. They follow Go's memory layout on the
// build's architecture; slack for load factors and size classes is approximated,
// so the estimate is meant to be within tens of percent, not exact.
const (
	objectBytes   = int64(unsafe.Sizeof(Object{}))
	ownerRefBytes = int64(unsafe.Sizeof(OwnerRef{}))
	timeBytes     = int64(unsafe.Sizeof(time.Time{}))
	// entryBytes is one slot of the cache map (Ref key, entry value, control
	// byte) times the average slack of a Go map between growths.
	entryBytes = (int64(unsafe.Sizeof(Ref{})+unsafe.Sizeof(entry{})) + 1) * 3 / 2
	// ownerRefTextBytes is the typical text of one owner reference
	// ("apps/v1", "ReplicaSet", its name and UID), counted rather than read.
	ownerRefTextBytes = 96
)

// estimateBytes approximates the heap one cached object holds, including its
// slot in the cache map. It reads only the object's own fields, so it stays
// cheap when the object is not in the CPU cache.
func estimateBytes(o *Object) int64 {
	n := entryBytes + objectBytes +
		textBytes(o.Namespace) + textBytes(o.Name) + textBytes(o.UID) + textBytes(o.ResourceVersion) +
		int64(cap(o.Body))
	if o.DeletionTimestamp != nil {
		n += timeBytes
	}
	n += textBytes(o.Labels.s)
	n += int64(cap(o.OwnerReferences)) * (ownerRefBytes + ownerRefTextBytes)
	return n
}

// textBytes is a string's data rounded up to the allocator's 8-byte granularity.
func textBytes(s string) int64 { return int64(len(s)+7) &^ 7 }
