package ring

import (
	"slices"
	"testing"
)

// A ring keeps the last elements, oldest first, and grows only as they
// come, never past its size.
func TestARingKeepsTheLastElementsOldestFirst(t *testing.T) {
	r := New[int](3)
	if got := r.Items(); got != nil || cap(r.buf) != 0 {
		t.Errorf("an empty ring's items: %v (room for %d), want nil and no room", got, cap(r.buf))
	}
	for i := 1; i <= 2; i++ {
		r.Push(i)
	}
	if got := r.Items(); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("two in a ring of 3: %v, want [1 2]", got)
	}
	for i := 3; i <= 7; i++ {
		r.Push(i)
	}
	if got := r.Items(); !slices.Equal(got, []int{5, 6, 7}) || cap(r.buf) != 3 || r.Len() != 3 || *r.At(0) != 5 {
		t.Errorf("seven in a ring of 3: %v (room for %d), want [5 6 7] in room for 3", got, cap(r.buf))
	}
	big := New[int](1024)
	for i := range 1500 {
		big.Push(i)
	}
	if cap(big.buf) != 1024 || *big.At(0) != 476 {
		t.Errorf("a full ring of 1024 has room for %d, its oldest %d", cap(big.buf), *big.At(0))
	}
	z := New[int](0)
	z.Push(7)
	if z.Len() != 1 || *z.At(0) != 7 {
		t.Errorf("a ring of size 0 holds %d, want one element", z.Len())
	}
}
