package jsonscan_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/jsonscan"
)

// documents are inputs whose validity encoding/json decides; the scanner must agree.
var documents = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `"x"`, `""`,
	`{"a":1,"b":[1,2,{"c":null}],"d":"e\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}`,
	` { "a" : [ 1 , 2 ] } `, "{\"a\":\n1}\n",
	`{"a":1,}`, `[1,]`, `{,}`, `[,1]`, `{"a" 1}`, `{"a":1 "b":2}`, `[1 2]`, `{"a":}`, `{1:2}`,
	`01`, `-`, `1.`, `1e`, `.5`, `+1`, `tru`, `nul`, `"\x"`, `"\u12g4"`, "\"a\tb\"", `"unterminated`,
	`{"a":1}}`, `{"a":1} x`, `[`, `{`, `{"a"`, `{"a":`, `{"a":1`, `[1`, `[1,`, ``, ` `,
	"\"\xff\xfe\"", `{"k\u00e9y":"v"}`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
}

func skipAll(data []byte) error {
	var s jsonscan.Scanner
	s.Reset(data)
	s.Skip()
	return s.End()
}

func TestSkipAcceptsExactlyWhatEncodingJSONAccepts(t *testing.T) {
	for _, doc := range documents {
		name := doc
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			got, want := skipAll([]byte(doc)) == nil, json.Valid([]byte(doc))
			if got != want {
				t.Errorf("valid: got %t, want %t (%v)", got, want, skipAll([]byte(doc)))
			}
		})
	}
}

func FuzzSkipAcceptsExactlyWhatEncodingJSONAccepts(f *testing.F) {
	for _, doc := range documents {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := skipAll(data)
		if got, want := err == nil, json.Valid(data); got != want {
			t.Errorf("%q: valid: got %t (%v), want %t", data, got, err, want)
		}
	})
}

func FuzzStringDecodesAsEncodingJSON(f *testing.F) {
	for _, s := range []string{`"plain"`, `"e\"\\\/\b\f\n\r\t"`, `"\u00e9\ud83d\ude00"`, `"\ud83d"`, `"\udc00x"`, "\"\xff\"", `"é"`, `null`, `1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want *string
		wantErr := json.Unmarshal(data, &want)
		var s jsonscan.Scanner
		s.Reset(data)
		got, ok := s.String()
		err := s.End()
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: error: got %v, want %v", data, err, wantErr)
		}
		if err != nil {
			return
		}
		if ok != (want != nil) || (ok && string(got) != *want) {
			t.Errorf("%q: got %q (%t), want %v", data, got, ok, want)
		}
		var s2 jsonscan.Scanner
		s2.Reset(data)
		appended, _ := s2.AppendString([]byte("prefix:"))
		if ok && string(appended) != "prefix:"+*want {
			t.Errorf("%q: AppendString: got %q, want %q", data, appended, "prefix:"+*want)
		}
	})
}

func TestInt64ReadsIntegersAndRejectsTheRest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
		err  bool
	}{
		{"42", 42, true, false},
		{"-9223372036854775808", -9223372036854775808, true, false},
		{"9223372036854775808", 0, false, true},
		{"1.5", 0, false, true},
		{"1e3", 0, false, true},
		{"null", 0, false, false},
		{`"1"`, 0, false, true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var s jsonscan.Scanner
			s.Reset([]byte(tc.in))
			got, ok := s.Int64()
			err := s.End()
			if got != tc.want || ok != tc.ok || (err != nil) != tc.err {
				t.Errorf("got (%d, %t, %v), want (%d, %t, error %t)", got, ok, err, tc.want, tc.ok, tc.err)
			}
		})
	}
}

func TestMembersAndElementsWalkTheDocumentInOrder(t *testing.T) {
	doc := []byte(`{"kind":"List","items":[{"name":"a"},{"name":"b\u0021"},null],"skip":{"x":[1,{"y":2}]},"flag":true}`)
	var s jsonscan.Scanner
	s.Reset(doc)
	var got []string
	if s.Object() {
		for key, ok := s.Key(); ok; key, ok = s.Key() {
			switch string(key) {
			case "items":
				for s.Array(); s.Next(); {
					if s.Object() {
						for _, ok := s.Key(); ok; _, ok = s.Key() {
							v, _ := s.String()
							got = append(got, string(v))
						}
					} else {
						got = append(got, "<null>")
					}
				}
			case "flag":
				v, ok := s.Bool()
				got = append(got, map[bool]string{true: "true", false: "false"}[v && ok])
			default:
				got = append(got, string(key)+"="+string(s.Raw()))
			}
		}
	}
	if err := s.End(); err != nil {
		t.Fatal(err)
	}
	want := `kind="List" a b! <null> skip={"x":[1,{"y":2}]} true`
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestATruncatedInputIsShortAndAMalformedOneIsASyntaxError(t *testing.T) {
	for _, in := range []string{`{"a":[1,2`, `{"a":"b`, `{"a":tr`, `{"a"`, `[`, ``} {
		if err := skipAll([]byte(in)); !errors.Is(err, jsonscan.ErrShort) {
			t.Errorf("%q: got %v, want ErrShort", in, err)
		}
	}
	var se *jsonscan.SyntaxError
	if err := skipAll([]byte(`{"a":x}`)); !errors.As(err, &se) || se.Offset != 5 {
		t.Errorf("got %v, want a SyntaxError at byte 5", err)
	}
}

func TestTypeMismatchesAreErrors(t *testing.T) {
	var s jsonscan.Scanner
	s.Reset([]byte(`{"a":1}`))
	if s.Array() || s.Err() == nil || !strings.Contains(s.Err().Error(), "want an array, got an object") {
		t.Errorf("got %v, want a type error", s.Err())
	}
}

func TestCompactReportsWhitespaceBetweenTokens(t *testing.T) {
	for in, want := range map[string]bool{`{"a":[1,"b c"]}`: true, `{"a": 1}`: false, "{\"a\":1}\n": true} {
		var s jsonscan.Scanner
		s.Reset([]byte(in))
		s.Skip()
		if s.Compact() != want {
			t.Errorf("%q: Compact: got %t, want %t", in, s.Compact(), want)
		}
	}
}

// BenchmarkSkip skips a 1.6 kB ConfigMap as served by kube-apiserver (the reflector's fixture).
func BenchmarkSkip(b *testing.B) {
	data, err := os.ReadFile("../../wire/testdata/configmap.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := skipAll(data); err != nil {
			b.Fatal(err)
		}
	}
}
