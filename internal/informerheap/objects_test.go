package informerheap

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Two populations built alike are the same bytes: a cost measured on one
// run is measured on the same objects as on the next.
func TestObjectsBuiltAlikeAreTheSameBytes(t *testing.T) {
	for _, shape := range []Shape{Small, Helm, Large} {
		var first []byte
		for run := range 10 {
			var b bytes.Buffer
			for i := range 3 {
				for _, o := range []any{configMap("cfg", "ns-00", i, shape, "p"), deployment("app", "ns-00", i, shape, "p")} {
					if err := json.NewEncoder(&b).Encode(o); err != nil {
						t.Fatal(err)
					}
				}
			}
			if run == 0 {
				first = b.Bytes()
			} else if !bytes.Equal(b.Bytes(), first) {
				t.Fatalf("shape %d: build %d differs from the first", shape, run)
			}
		}
	}
}
