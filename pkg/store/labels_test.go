package store

import (
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestLabelsKeepEveryLabelOfAMapInTheOrderOfTheirKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		m := map[string]string{}
		for range r.IntN(20) {
			// Keys and values of every length class of the uvarint, empty included.
			m[strconv.Itoa(r.IntN(50))+string(make([]byte, r.IntN(3)*100))] = string(make([]byte, r.IntN(300)))
		}
		l := MakeLabels(m)
		if got := l.Map(); !maps.Equal(got, m) || (len(m) == 0) != (got == nil) {
			t.Fatalf("MakeLabels(%d labels).Map() has %d labels, not the same", len(m), len(got))
		}
		if l.Len() != len(m) {
			t.Fatalf("Len: got %d, want %d", l.Len(), len(m))
		}
		prev := ""
		first := true
		for k, v := range l.All() {
			if !first && k <= prev {
				t.Fatalf("All: key %q after %q", k, prev)
			}
			if got, ok := l.Get(k); !ok || got != v {
				t.Fatalf("Get(%q): got %q %v, want %q", k, got, ok, v)
			}
			prev, first = k, false
		}
		if _, ok := l.Get("absent"); ok {
			t.Fatal(`Get("absent") found a label`)
		}
		size := 0
		var written strings.Builder
		for k, v := range l.All() {
			size += LabelLen(len(k), len(v))
			WriteLabel(&written, []byte(k), []byte(v))
		}
		if size != len(l.s) || written.String() != l.s {
			t.Fatalf("LabelLen sums to %d and WriteLabel wrote %d bytes, for an encoding of %d", size, written.Len(), len(l.s))
		}
		if again, ok := LabelsOf(l.s); !ok || again != l {
			t.Fatalf("LabelsOf of an encoding: got %v %v", again, ok)
		}
	}
}

func TestLabelsOfRefusesWhatAppendLabelDidNotWriteInOrder(t *testing.T) {
	ok := string(AppendLabel(AppendLabel(nil, "a", "1"), "b", "2"))
	for name, s := range map[string]string{
		"keys out of order": string(AppendLabel(AppendLabel(nil, "b", "2"), "a", "1")),
		"a key twice":       string(AppendLabel(AppendLabel(nil, "a", "1"), "a", "2")),
		"cut short":         ok[:len(ok)-1],
		"a length too long": "\x05ab",
		"a value missing":   "\x01a",
		"an endless length": "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
	} {
		if l, good := LabelsOf(s); good || l != (Labels{}) {
			t.Errorf("%s: LabelsOf(%q) = %v, %v; want no labels, false", name, s, l, good)
		}
	}
	if l, good := LabelsOf(ok); !good || l.String() != "a=1,b=2" {
		t.Errorf("LabelsOf(a=1,b=2) = %q, %v", l, good)
	}
}
