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
	// Labels maps: a header, then groups of 8 slots of (string, string) + control
	// byte (a map of up to 8 entries is one group), and the text of each label,
	// counted at a typical 40 bytes ("app.kubernetes.io/name": "web-7f9c")
	// rather than read: reading every label of every applied object costs more
	// than the estimate is worth.
	mapHeaderBytes  = 48
	labelSlotBytes  = int64(2*unsafe.Sizeof("")) + 1
	labelGroupSlots = 8
	labelTextBytes  = 40
	// ownerRefTextBytes is the typical text of one owner reference
	// ("apps/v1", "ReplicaSet", its name and UID), counted rather than read.
	ownerRefTextBytes = 96
)

// estimateBytes approximates the heap one cached object holds, including its
// slot in the cache map. It reads only the object's own fields and the labels
// map's header, so it stays cheap when the object is not in the CPU cache.
func estimateBytes(o *Object) int64 {
	n := entryBytes + objectBytes +
		textBytes(o.Namespace) + textBytes(o.Name) + textBytes(o.UID) + textBytes(o.ResourceVersion) +
		int64(cap(o.Body))
	if o.DeletionTimestamp != nil {
		n += timeBytes
	}
	if o.Labels != nil {
		labels := int64(len(o.Labels))
		slots := int64(labelGroupSlots)
		for slots*7/8 < labels && labels > labelGroupSlots {
			slots *= 2
		}
		n += mapHeaderBytes + slots*labelSlotBytes + labels*labelTextBytes
	}
	n += int64(cap(o.OwnerReferences)) * (ownerRefBytes + ownerRefTextBytes)
	return n
}

// textBytes is a string's data rounded up to the allocator's 8-byte granularity.
func textBytes(s string) int64 { return int64(len(s)+7) &^ 7 }
