package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// encodingJSONString is s as encoding/json writes it without HTML
// escaping, but for \b and \f, written \u0008 and \u000c as jsonString
// does: each rune (or byte of invalid UTF-8) written alone, as encoding/json
// goes through them.
func encodingJSONString(t *testing.T, s string) string {
	var out strings.Builder
	out.WriteByte('"')
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		piece := s[i : i+size]
		i += size
		switch piece {
		case "\b":
			out.WriteString(`\u0008`)
			continue
		case "\f":
			out.WriteString(`\u000c`)
			continue
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(piece); err != nil {
			t.Fatal(err)
		}
		out.WriteString(strings.TrimSuffix(strings.TrimSuffix(b.String(), "\n"), `"`)[1:])
	}
	out.WriteByte('"')
	return out.String()
}

// jsonString writes what encoding/json writes (the JSON a trace records of
// a protobuf object is read back as JSON), for every kind of character: the
// escaped ones, U+2028 and U+2029, <, > and &, invalid UTF-8 and the
// encoded U+FFFD itself.
func FuzzJSONStringWritesWhatEncodingJSONWrites(f *testing.F) {
	for _, s := range []string{"", "plain", `a"b\c`, "\n\r\t\b\f\x00\x1f\x7f", "<a&b>", "é😀", "\u2028\u2029", "\ufffd",
		"\xff", "a\xc3", "\xe2\x80", "\xed\xa0\x80", "x\u2028y\xffz\"\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(jsonString([]byte("x"), s)), "x"+encodingJSONString(t, s); got != want {
			t.Errorf("jsonString(%q) = %s, want %s", s, got, want)
		}
	})
}
