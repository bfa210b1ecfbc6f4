package summary

import (
	"strings"
	"testing"
)

// A resource that never completed a list has no resourceVersion: its line
// says so instead of ending on "at resourceVersion " and nothing.
func TestAResourceWithoutAListSaysSoNotAnEmptyResourceVersion(t *testing.T) {
	for _, tc := range []struct {
		rv, want string
	}{
		{"", "resource configmaps: 0 objects (no list completed)\n"},
		{"42", "resource configmaps: 1 object at resourceVersion 42\n"},
	} {
		s := Summary{Resource: "configmaps"}
		if tc.rv != "" {
			s.Objects, s.ResourceVersion = 1, tc.rv
		}
		var b strings.Builder
		if err := s.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("rv %q: got\n%s\nwant a line %q", tc.rv, b.String(), tc.want)
		}
	}
}
