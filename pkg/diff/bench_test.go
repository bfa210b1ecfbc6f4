package diff_test

import (
	"testing"

	"github.com/wI2L/jsondiff"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
)

// The two ways to diff a scaled Deployment's versions, side by side: this
// package's Compare (merge-keyed paths, values, managers, timestamp-only),
// and github.com/wI2L/jsondiff, a well-kept JSON Patch (RFC 6902) differ,
// which gives index paths and no owners: the work it leaves (keying list
// items by their merge key, reading managedFields) is not in its figure.
func BenchmarkCompareDeployment(b *testing.B) {
	old, new := []byte(deployOld), []byte(deployNew)
	b.SetBytes(int64(len(old) + len(new)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := diff.Compare(old, new, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSONDiffDeployment(b *testing.B) {
	old, new := []byte(deployOld), []byte(deployNew)
	b.SetBytes(int64(len(old) + len(new)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsondiff.CompareJSON(old, new, jsondiff.Invertible()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompareHeartbeat(b *testing.B) {
	old, new := []byte(cm("1", "2026-12-02T10:00:00Z", "a")), []byte(cm("2", "2026-12-02T10:00:01Z", "a"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := diff.Compare(old, new, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSONDiffHeartbeat(b *testing.B) {
	old, new := []byte(cm("1", "2026-12-02T10:00:00Z", "a")), []byte(cm("2", "2026-12-02T10:00:01Z", "a"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsondiff.CompareJSON(old, new); err != nil {
			b.Fatal(err)
		}
	}
}
