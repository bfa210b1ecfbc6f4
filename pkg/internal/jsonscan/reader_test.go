package jsonscan_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/jsonscan"
)

// walk reads the value at s with every kind of call and describes what it read.
func walk(s *jsonscan.Scanner, out *strings.Builder) {
	switch s.Peek() {
	case '{':
		s.Object()
		out.WriteString("{")
		for key, ok := s.Key(); ok; key, ok = s.Key() {
			fmt.Fprintf(out, "%q:", key)
			walk(s, out)
		}
		out.WriteString("}")
	case '[':
		s.Array()
		out.WriteString("[")
		for s.Next() {
			walk(s, out)
			out.WriteString(",")
		}
		out.WriteString("]")
	case '"':
		v, _ := s.String()
		fmt.Fprintf(out, "%q", v)
	case 't', 'f':
		v, ok := s.Bool()
		fmt.Fprintf(out, "%t/%t", v, ok)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		fmt.Fprintf(out, "num(%s)", s.Raw())
	default:
		fmt.Fprintf(out, "raw(%s)", s.Raw())
	}
}

// walkAll walks a whole document and returns what it read and the error.
func walkAll(s *jsonscan.Scanner) string {
	var out strings.Builder
	walk(s, &out)
	return fmt.Sprintf("%s err=%v", out.String(), s.End())
}

// chunkReader returns data n bytes at a time.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.data)
	r.data = r.data[k:]
	return k, nil
}

// readers are the ways a body may arrive.
func readers(data []byte) map[string]io.Reader {
	return map[string]io.Reader{
		"one byte at a time": iotest.OneByteReader(bytes.NewReader(data)),
		"half reads":         iotest.HalfReader(bytes.NewReader(data)),
		"data with EOF":      iotest.DataErrReader(bytes.NewReader(data)),
		"7-byte reads":       &chunkReader{data, 7},
		"all at once":        bytes.NewReader(data),
	}
}

func TestAReaderIsReadAsTheWholeInputIs(t *testing.T) {
	docs := append([]string{
		`{"a":"` + strings.Repeat(`x\"é\u00e9`, 5000) + `","b":[1,-2.5e+3,true,false,null,{"c":"\ud83d\ude00"}]}`,
		`{"a":1e`, `"abc\u12`, `"abc\`, `[1,2,3`, `-`, `123`, `tr`, `{"a":tru}`,
	}, documents...)
	for _, doc := range docs {
		var whole jsonscan.Scanner
		whole.Reset([]byte(doc))
		want := walkAll(&whole)
		for name, r := range readers([]byte(doc)) {
			var s jsonscan.Scanner
			s.ResetReader(r, 0)
			if got := walkAll(&s); got != want {
				t.Errorf("%.40q, %s:\ngot  %.300s\nwant %.300s", doc, name, got, want)
			}
		}
	}
}

func FuzzReaderReadsAsWhole(f *testing.F) {
	for _, doc := range documents {
		f.Add([]byte(doc), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		var whole jsonscan.Scanner
		whole.Reset(data)
		want := walkAll(&whole)
		var s jsonscan.Scanner
		s.ResetReader(&chunkReader{data, int(chunk) + 1}, 0)
		if got := walkAll(&s); got != want {
			t.Errorf("%q in %d-byte reads:\ngot  %s\nwant %s", data, int(chunk)+1, got, want)
		}
	})
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestAPartLargerThanTheLimitFailsBeforeMoreIsRead(t *testing.T) {
	const limit = 100 << 10
	str := func(n int) string { return `"` + strings.Repeat("x", n-2) + `"` }
	for _, tc := range []struct {
		name string
		size int
		ok   bool
	}{{"exactly the limit", limit, true}, {"one byte over", limit + 1, false}, {"far over", 50 * limit, false}} {
		t.Run(tc.name, func(t *testing.T) {
			// A stream of values, each committed at its first byte.
			body := "\n" + str(10) + " " + str(tc.size) + " " + str(10)
			r := &countingReader{r: &chunkReader{[]byte(body), 4096}}
			var s jsonscan.Scanner
			s.ResetReader(r, limit)
			var sizes []int
			for !s.AtEOF() {
				s.Commit() // at the value's first byte: Part is the value
				s.Skip()
				if s.Err() != nil {
					break
				}
				sizes = append(sizes, len(s.Part()))
				s.Commit() // the whitespace after it is not part of it
			}
			err := s.Err()
			if tc.ok {
				if err != nil || fmt.Sprint(sizes) != fmt.Sprint([]int{10, tc.size, 10}) {
					t.Errorf("got sizes %v, %v; want [10 %d 10]", sizes, err, tc.size)
				}
				return
			}
			if !errors.Is(err, jsonscan.ErrTooLarge) {
				t.Fatalf("got %v, want ErrTooLarge", err)
			}
			// It read the part up to the limit (and what came before it), nothing more.
			if max := 1 + 10 + 1 + limit; r.n > max {
				t.Errorf("read %d bytes, want at most %d", r.n, max)
			}
		})
	}
}

func TestReadErrorsAreNotSyntaxErrors(t *testing.T) {
	boom := errors.New("connection reset")
	var s jsonscan.Scanner
	s.ResetReader(io.MultiReader(strings.NewReader(`{"a":"bc`), iotest.ErrReader(boom)), 0)
	s.Skip()
	var re *jsonscan.ReadError
	if err := s.Err(); !errors.As(err, &re) || !errors.Is(err, boom) {
		t.Errorf("got %v, want a ReadError wrapping the reader's error", err)
	}
}

func TestSlicesIntoThePartSurviveReadingMore(t *testing.T) {
	// The first member's value is returned, then much more is read before the part ends.
	doc := []byte(`{"a":"first","b":"` + strings.Repeat("y", 300<<10) + `","c":[1,2]}`)
	var s jsonscan.Scanner
	s.ResetReader(&chunkReader{doc, 1000}, 0)
	s.Commit()
	var a, c []byte
	if s.Object() {
		for key, ok := s.Key(); ok; key, ok = s.Key() {
			switch string(key) {
			case "a":
				a, _ = s.String()
			case "c":
				c = s.Raw()
			default:
				s.Skip()
			}
		}
	}
	if err := s.End(); err != nil {
		t.Fatal(err)
	}
	if string(a) != "first" || string(c) != "[1,2]" || !bytes.Equal(s.Part(), doc) {
		t.Errorf("got a=%q c=%q part of %d bytes, want first, [1,2] and the document", a, c, len(s.Part()))
	}
}

func TestErrorOffsetsCountFromTheStartOfTheInput(t *testing.T) {
	doc := strings.Repeat(" ", 200<<10) + `{"a":x}`
	var s jsonscan.Scanner
	s.ResetReader(&chunkReader{[]byte(doc), 4096}, 0)
	s.Commit()
	s.Skip()
	var se *jsonscan.SyntaxError
	if err := s.Err(); !errors.As(err, &se) || se.Offset != 200<<10+5 {
		t.Errorf("got %v, want a SyntaxError at byte %d", err, 200<<10+5)
	}
}

// BenchmarkReadStream reads a stream of 1.6 kB objects in 16 kB reads, each
// object committed, as a watch stream is read: the buffers are reused.
func BenchmarkReadStream(b *testing.B) {
	obj := compareInputs(b)["small"]
	stream := bytes.Repeat(append(bytes.Clone(obj), '\n'), 1000)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		var s jsonscan.Scanner
		s.ResetReader(&chunkReader{stream, 16 << 10}, 0)
		for !s.AtEOF() {
			s.Commit()
			s.Skip()
		}
		if err := s.Err(); err != nil {
			b.Fatal(err)
		}
	}
}
