package store

import (
	"encoding/binary"
	"iter"
	"maps"
	"math/bits"
	"slices"
	"strings"
)

// Labels are an object's labels, kept in one string: each label is its key
// then its value, each written as its length (a uvarint) then its bytes,
// with the keys in increasing order and each key once. A cache of 50,000
// objects with six labels each holds about 16 MiB less than with a map per
// object (docs/benchmarks.md, "Labels in one string"), and a decoder writes
// them with the object's other strings, in the one allocation it makes for
// them all (WriteLabel, LabelLen). The zero Labels has no labels. Reading
// one label walks the labels before it: objects have a few.
type Labels struct{ s string }

// MakeLabels returns m as Labels (none for an empty or nil m).
func MakeLabels(m map[string]string) Labels {
	if len(m) == 0 {
		return Labels{}
	}
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b = AppendLabel(b, k, m[k])
	}
	return Labels{s: string(b)}
}

// AppendLabel appends one label to b in Labels' encoding. Append a set's
// labels in increasing order of their keys, each key once, then make the
// Labels with LabelsOf.
func AppendLabel[S string | []byte](b []byte, key, value S) []byte {
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(value)))
	return append(b, value...)
}

// LabelLen is the length of one label in Labels' encoding, of a key of
// keyLen bytes and a value of valueLen.
func LabelLen(keyLen, valueLen int) int {
	return uvarintLen(keyLen) + keyLen + uvarintLen(valueLen) + valueLen
}

func uvarintLen(n int) int { return (bits.Len(uint(n)|1) + 6) / 7 }

// WriteLabel writes one label to b as AppendLabel appends it.
func WriteLabel(b *strings.Builder, key, value []byte) {
	var n [binary.MaxVarintLen64]byte
	b.Write(binary.AppendUvarint(n[:0], uint64(len(key))))
	b.Write(key)
	b.Write(binary.AppendUvarint(n[:0], uint64(len(value))))
	b.Write(value)
}

// LabelsOf returns the Labels that s encodes, s being what AppendLabel
// appended, in order. It reports false, and no labels, when s is not such
// an encoding (a length runs past the end, or the keys are not in
// increasing order).
func LabelsOf(s string) (Labels, bool) {
	var prev string
	for rest, first := s, true; rest != ""; first = false {
		k, _, next, ok := cut(rest)
		if !ok || (!first && k <= prev) {
			return Labels{}, false
		}
		prev, rest = k, next
	}
	return Labels{s: s}, true
}

// cut reads the first label of s.
func cut(s string) (key, value, rest string, ok bool) {
	if key, s, ok = field(s); !ok {
		return "", "", "", false
	}
	value, rest, ok = field(s)
	return key, value, rest, ok
}

// field reads one length-prefixed string.
func field(s string) (f, rest string, ok bool) {
	var n uint64
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		n |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			s = s[i+1:]
			if n > uint64(len(s)) {
				return "", "", false
			}
			return s[:n], s[n:], true
		}
	}
	return "", "", false
}

// All yields the labels in increasing order of their keys.
func (l Labels) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for rest := l.s; rest != ""; {
			k, v, next, ok := cut(rest)
			if !ok || !yield(k, v) {
				return
			}
			rest = next
		}
	}
}

// Get returns the value of the label key, if the object has it.
func (l Labels) Get(key string) (string, bool) {
	for k, v := range l.All() {
		switch strings.Compare(k, key) {
		case 0:
			return v, true
		case 1:
			return "", false
		}
	}
	return "", false
}

// Len is the number of labels.
func (l Labels) Len() int {
	n := 0
	for range l.All() {
		n++
	}
	return n
}

// Map returns the labels as a new map (nil when there are none).
func (l Labels) Map() map[string]string {
	if l.s == "" {
		return nil
	}
	return maps.Collect(l.All())
}

// String renders the labels as a label selector would write them:
// "app=web,tier=frontend", in the order of their keys.
func (l Labels) String() string {
	var b strings.Builder
	for k, v := range l.All() {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String()
}
