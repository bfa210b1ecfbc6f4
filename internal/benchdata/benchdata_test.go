package benchdata_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/benchdata"
)

func TestYAMLTextIsDeterministicSizedAndAwkward(t *testing.T) {
	a, b := benchdata.YAMLText(3, 900_000), benchdata.YAMLText(3, 900_000)
	if a != b {
		t.Error("the same object's text differs between calls")
	}
	if a == benchdata.YAMLText(4, 900_000) {
		t.Error("two objects have the same text")
	}
	if len(a) > 900_000 || len(a) < 899_000 || !strings.HasSuffix(a, "\n") || !utf8.ValidString(a) {
		t.Errorf("got %d bytes (valid UTF-8 %t), want a little under 900000 ending in a line break", len(a), utf8.ValidString(a))
	}
	for _, want := range []string{`"`, `\`, "\t", "<", "&", "ü", "日本語"} {
		if !strings.Contains(a, want) {
			t.Errorf("the text has no %q", want)
		}
	}
}
