package jsonscan_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/benchdata"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/jsonscan"
)

// This file compares the scanner with github.com/go-json-experiment/json's
// jsontext.Decoder on the same inputs and the same work, side by side:
//
//	go test -run XXX -bench Scanners -count 5 ./pkg/internal/jsonscan/
//
// jsontext is set up to accept what encoding/json and the API server accept
// (duplicate names, invalid UTF-8), as the scanner does.
func jsontextOptions() []jsontext.Options {
	return []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
}

// compareInputs are a 1.6 kB ConfigMap as served by kube-apiserver and the
// same ConfigMap holding ~900 kB of YAML-like text (escapes, non-ASCII).
func compareInputs(tb testing.TB) map[string][]byte {
	small, err := os.ReadFile("../../wire/testdata/configmap.json")
	if err != nil {
		tb.Fatal(err)
	}
	small = bytes.TrimSpace(small)
	big, err := benchdata.WithData(small, "values.yaml", benchdata.YAMLText(7, 900_000))
	if err != nil {
		tb.Fatal(err)
	}
	return map[string][]byte{"small": small, "big": big}
}

// scanMetadata is package wire's work on one object: find metadata, decode
// its identity strings and labels, skip (and validate) everything else.
func scanMetadata(s *jsonscan.Scanner, out []byte) []byte {
	if s.Object() {
		for key, ok := s.Key(); ok; key, ok = s.Key() {
			if string(key) != "metadata" {
				s.Skip()
				continue
			}
			if !s.Object() {
				continue
			}
			for key, ok := s.Key(); ok; key, ok = s.Key() {
				switch string(key) {
				case "name", "namespace", "uid", "resourceVersion":
					out, _ = s.AppendString(out)
				case "labels":
					if s.Object() {
						for key, ok := s.Key(); ok; key, ok = s.Key() {
							out = append(out, key...)
							out, _ = s.AppendString(out)
						}
					}
				default:
					s.Skip()
				}
			}
		}
	}
	return out
}

// jsontextName reads an object member's name into scratch, unquoted.
func jsontextName(d *jsontext.Decoder, scratch []byte) ([]byte, error) {
	v, err := d.ReadValue()
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1], nil
	}
	return jsontext.AppendUnquote(scratch[:0], v)
}

// jsontextString appends a string value, unquoted, to out.
func jsontextString(d *jsontext.Decoder, out []byte) ([]byte, error) {
	v, err := d.ReadValue()
	if err != nil {
		return out, err
	}
	if v.Kind() != '"' {
		return out, fmt.Errorf("want a string, got %s", v.Kind())
	}
	return jsontext.AppendUnquote(out, v)
}

// jsontextMetadata is scanMetadata with jsontext.
func jsontextMetadata(d *jsontext.Decoder, out, scratch []byte) ([]byte, error) {
	if _, err := d.ReadToken(); err != nil { // '{'
		return out, err
	}
	for d.PeekKind() == '"' {
		key, err := jsontextName(d, scratch)
		if err != nil {
			return out, err
		}
		if string(key) != "metadata" {
			if err := d.SkipValue(); err != nil {
				return out, err
			}
			continue
		}
		if _, err := d.ReadToken(); err != nil {
			return out, err
		}
		for d.PeekKind() == '"' {
			key, err := jsontextName(d, scratch)
			if err != nil {
				return out, err
			}
			switch string(key) {
			case "name", "namespace", "uid", "resourceVersion":
				out, err = jsontextString(d, out)
			case "labels":
				if _, err = d.ReadToken(); err != nil {
					return out, err
				}
				for d.PeekKind() == '"' {
					var k []byte
					if k, err = jsontextName(d, scratch); err != nil {
						return out, err
					}
					out = append(out, k...)
					if out, err = jsontextString(d, out); err != nil {
						return out, err
					}
				}
				_, err = d.ReadToken()
			default:
				err = d.SkipValue()
			}
			if err != nil {
				return out, err
			}
		}
		if _, err := d.ReadToken(); err != nil {
			return out, err
		}
	}
	_, err := d.ReadToken() // '}'
	return out, err
}

func BenchmarkScanners(b *testing.B) {
	inputs := compareInputs(b)
	for _, size := range []string{"small", "big"} {
		data := inputs[size]
		b.Run("op=skip/size="+size+"/impl=jsonscan", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := skipAll(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("op=skip/size="+size+"/impl=jsontext", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var buf bytes.Buffer
			d := jsontext.NewDecoder(&buf, jsontextOptions()...)
			for b.Loop() {
				buf.Reset()
				buf.Write(data) // the decoder reads a bytes.Buffer in place
				d.Reset(&buf, jsontextOptions()...)
				if err := d.SkipValue(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("op=metadata/size="+size+"/impl=jsonscan", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var s jsonscan.Scanner
			var out []byte
			for b.Loop() {
				s.Reset(data)
				out = scanMetadata(&s, out[:0])
				if err := s.End(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("op=metadata/size="+size+"/impl=jsontext", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var buf bytes.Buffer
			d := jsontext.NewDecoder(&buf, jsontextOptions()...)
			var out, scratch []byte
			for b.Loop() {
				buf.Reset()
				buf.Write(data)
				d.Reset(&buf, jsontextOptions()...)
				var err error
				if out, err = jsontextMetadata(d, out[:0], scratch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// compareList is a LIST body of n items like obj (as the API server writes it).
func compareList(obj []byte, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"215"},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(obj)
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// scanList is the reflector's work on a LIST body as it arrives, with a
// reading Scanner: each item's metadata decoded and its JSON copied, in one
// pass. It returns the items' total size.
func scanList(s *jsonscan.Scanner, out []byte) (int, error) {
	total := 0
	if s.Object() {
		for key, ok := s.Key(); ok; key, ok = s.Key() {
			if string(key) != "items" {
				s.Skip()
				continue
			}
			for s.Array(); s.Next(); {
				s.Peek()
				s.Commit()
				out = scanMetadata(s, out[:0])
				total += len(bytes.Clone(s.Part()))
			}
		}
	}
	return total, s.End()
}

// jsontextList is scanList with jsontext: each item is read whole
// (ReadValue), copied, and its metadata decoded from the copy.
func jsontextList(d *jsontext.Decoder, out, scratch []byte) (int, error) {
	total := 0
	if _, err := d.ReadToken(); err != nil {
		return 0, err
	}
	item := jsontext.NewDecoder(&bytes.Buffer{}, jsontextOptions()...)
	for d.PeekKind() == '"' {
		key, err := jsontextName(d, scratch)
		if err != nil {
			return 0, err
		}
		if string(key) != "items" {
			if err := d.SkipValue(); err != nil {
				return 0, err
			}
			continue
		}
		if _, err := d.ReadToken(); err != nil {
			return 0, err
		}
		for d.PeekKind() != ']' {
			v, err := d.ReadValue()
			if err != nil {
				return 0, err
			}
			raw := bytes.Clone(v)
			total += len(raw)
			item.Reset(bytes.NewBuffer(raw), jsontextOptions()...)
			if out, err = jsontextMetadata(item, out[:0], scratch); err != nil {
				return 0, err
			}
		}
		if _, err := d.ReadToken(); err != nil {
			return 0, err
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return 0, err
	}
	_, err := d.ReadToken()
	if err != io.EOF {
		return 0, fmt.Errorf("after the list: %v", err)
	}
	return total, nil
}

// jsontextTeeList is jsontextList in one pass: each item's metadata is
// decoded as the decoder reads it, and its JSON is taken from a copy of
// everything read (tee), between the item's input offsets.
func jsontextTeeList(body io.Reader, out, scratch []byte) (int, error) {
	var tee bytes.Buffer
	var base int64 // input offset of tee's first byte
	d := jsontext.NewDecoder(io.TeeReader(body, &tee), jsontextOptions()...)
	total := 0
	if _, err := d.ReadToken(); err != nil {
		return 0, err
	}
	for d.PeekKind() == '"' {
		key, err := jsontextName(d, scratch)
		if err != nil {
			return 0, err
		}
		if string(key) != "items" {
			if err := d.SkipValue(); err != nil {
				return 0, err
			}
			continue
		}
		if _, err := d.ReadToken(); err != nil {
			return 0, err
		}
		for d.PeekKind() != ']' {
			start := d.InputOffset() // before the ',' and the whitespace
			tee.Next(int(start - base))
			base = start
			if out, err = jsontextMetadata(d, out[:0], scratch); err != nil {
				return 0, err
			}
			raw := bytes.TrimLeft(tee.Bytes()[:d.InputOffset()-base], ", \t\r\n")
			total += len(bytes.Clone(raw))
		}
		if _, err := d.ReadToken(); err != nil {
			return 0, err
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return 0, err
	}
	_, err := d.ReadToken()
	if err != io.EOF {
		return 0, fmt.Errorf("after the list: %v", err)
	}
	return total, nil
}

// BenchmarkScannersOnAStreamedList reads a LIST body in 16 kB reads, as it
// comes off a connection (500 small items, or 16 big ones), doing the
// reflector's work on each item.
func BenchmarkScannersOnAStreamedList(b *testing.B) {
	inputs := compareInputs(b)
	for _, l := range []struct {
		size string
		n    int
	}{{"small", 500}, {"big", 16}} {
		body := compareList(inputs[l.size], l.n)
		want := l.n * len(inputs[l.size])
		b.Run("size="+l.size+"/impl=jsonscan", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var out []byte
			for b.Loop() {
				var s jsonscan.Scanner
				s.ResetReader(&chunkReader{body, 16 << 10}, 0)
				if n, err := scanList(&s, out); err != nil || n != want {
					b.Fatalf("got %d bytes of items, %v", n, err)
				}
			}
		})
		b.Run("size="+l.size+"/impl=jsontext-readvalue", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var out, scratch []byte
			for b.Loop() {
				d := jsontext.NewDecoder(&chunkReader{body, 16 << 10}, jsontextOptions()...)
				if n, err := jsontextList(d, out, scratch); err != nil || n != want {
					b.Fatalf("got %d bytes of items, %v", n, err)
				}
			}
		})
		b.Run("size="+l.size+"/impl=jsontext-tee", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var out, scratch []byte
			for b.Loop() {
				if n, err := jsontextTeeList(&chunkReader{body, 16 << 10}, out, scratch); err != nil || n != want {
					b.Fatalf("got %d bytes of items, %v", n, err)
				}
			}
		})
	}
}

// TestComparedDecodersAgree keeps the comparison honest: both do the same work.
func TestComparedDecodersAgree(t *testing.T) {
	for size, data := range compareInputs(t) {
		var s jsonscan.Scanner
		s.Reset(data)
		want := scanMetadata(&s, nil)
		if err := s.End(); err != nil {
			t.Fatal(err)
		}
		got, err := jsontextMetadata(jsontext.NewDecoder(bytes.NewReader(data), jsontextOptions()...), nil, nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: jsontext read %q (%v), jsonscan %q", size, got, err, want)
		}
	}
}
