package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// MaxLineBytes is the longest line, newline excluded, a Reader accepts:
// 16 MiB. A line holds at most one object, and an object in etcd is at most
// about 1.5 MiB (etcd's default request size limit); the rest is JSON framing
// and ample headroom (an object stored as protobuf, or with characters JSON
// escapes, can take several times its stored size as JSON). A longer line is
// refused as soon as the bound is passed, without reading the rest of it, so
// a hostile or broken trace cannot make a reader hold more than this; in a
// gzip trace the decompressed bytes are what count. The live side bounds one
// object the same way (reflector.MaxObjectBytes): the two must stay equal.
const MaxLineBytes = 16 << 20

// maxWarnings is how many warnings a Reader keeps; it counts the rest.
const maxWarnings = 100

// readerBufferSize is the read buffer: lines that fit are parsed in place.
const readerBufferSize = 1 << 20

// Reader streams a trace line by line in constant memory (beyond the longest
// line, at most MaxLineBytes).
type Reader struct {
	name     string
	counter  *countingReader
	size     int64
	r        *bufio.Reader
	long     []byte // a line longer than the read buffer, gathered up to MaxLineBytes
	closers  []io.Closer
	header   Header
	line     int
	err      error // the first error: Next returns it from then on
	warnings []string
	dropped  int // warnings beyond maxWarnings
}

// LineError is a malformed trace line.
type LineError struct {
	Name string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Open opens a trace file (gzip when the name ends in .gz) and reads its header.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening trace: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("opening trace: %w", err)
	}
	if fi.IsDir() {
		_ = f.Close()
		return nil, fmt.Errorf("opening trace: %s is a directory", path)
	}
	counter := &countingReader{r: f}
	var in io.Reader = counter
	closers := []io.Closer{f}
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(counter)
		if err != nil {
			_ = f.Close()
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%s: the trace is empty", path)
			}
			return nil, fmt.Errorf("%s: not a gzip trace: %w", path, err)
		}
		in = gz
		closers = append([]io.Closer{gz}, closers...)
	}
	r, err := NewReader(path, in)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	r.closers, r.counter, r.size = closers, counter, fi.Size()
	return r, nil
}

// countingReader counts the bytes read from the file, for progress.
type countingReader struct {
	r  io.Reader
	n  int64
	mu sync.Mutex
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.mu.Lock()
	c.n += int64(n)
	c.mu.Unlock()
	return n, err
}

// Offset is how many bytes of the file have been read (0 for non-file readers).
func (r *Reader) Offset() int64 {
	if r.counter == nil {
		return 0
	}
	r.counter.mu.Lock()
	defer r.counter.mu.Unlock()
	return r.counter.n
}

// Size is the file's size in bytes (0 for non-file readers).
func (r *Reader) Size() int64 { return r.size }

// NewReader reads a trace from in; name is used in messages.
func NewReader(name string, in io.Reader) (*Reader, error) {
	r := &Reader{name: name, r: bufio.NewReaderSize(in, readerBufferSize)}
	raw, last, err := r.readLine()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: the trace is empty", name)
		}
		return nil, err
	}
	var probe struct {
		K string `json:"k"`
		V int    `json:"v"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		if last {
			return nil, r.lineError(fmt.Errorf("the header line is truncated or not JSON: %w", err))
		}
		return nil, r.lineError(fmt.Errorf("not a watchcache trace (the first line is not JSON): %w", err))
	}
	if probe.K != KindHeader {
		return nil, r.lineError(fmt.Errorf("not a watchcache trace: the first line is %q, want a header", clip(probe.K)))
	}
	if probe.V != Version {
		return nil, r.lineError(fmt.Errorf("unsupported trace version %d (this build reads version %d)", probe.V, Version))
	}
	if err := json.Unmarshal(raw, &r.header); err != nil {
		return nil, r.lineError(fmt.Errorf("bad header: %w", err))
	}
	return r, nil
}

// Header is the trace's header.
func (r *Reader) Header() Header { return r.header }

// LineNumber is the number of the line last returned by Next.
func (r *Reader) LineNumber() int { return r.line }

// Warnings are what Next skipped (unknown kinds, a truncated last line): the
// first ones, then how many more there were.
func (r *Reader) Warnings() []string {
	if r.dropped == 0 {
		return r.warnings
	}
	return append(r.warnings[:len(r.warnings):len(r.warnings)], fmt.Sprintf("%s: %d more warnings", r.name, r.dropped))
}

func (r *Reader) warn(format string, args ...any) {
	if len(r.warnings) >= maxWarnings {
		r.dropped++
		return
	}
	r.warnings = append(r.warnings, fmt.Sprintf("%s:%d: ", r.name, r.line)+fmt.Sprintf(format, args...))
}

// lineError is err at the current line.
func (r *Reader) lineError(err error) *LineError {
	return &LineError{Name: r.name, Line: r.line, Err: err}
}

// errLineTooLong is the error for a line longer than MaxLineBytes.
func errLineTooLong() error { return fmt.Errorf("line longer than %d MiB", MaxLineBytes>>20) }

// readLine returns the next line without its newline; last is true when the
// line had no newline (the end of the file came first). The line is valid
// until the next call. A line longer than MaxLineBytes is an error as soon as
// that many bytes have been read: the rest of it is never read.
func (r *Reader) readLine() ([]byte, bool, error) {
	r.line++
	if cap(r.long) > readerBufferSize {
		r.long = nil // a long line's buffer is not kept for short ones
	}
	r.long = r.long[:0]
	for {
		frag, err := r.r.ReadSlice('\n')
		switch {
		case err == nil:
			if len(r.long)+len(frag)-1 > MaxLineBytes {
				return nil, false, r.lineError(errLineTooLong())
			}
			if len(r.long) == 0 {
				return frag[:len(frag)-1], false, nil // the common case: in the read buffer
			}
			r.long = appendBounded(r.long, frag)
			return r.long[:len(r.long)-1], false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(r.long)+len(frag) > MaxLineBytes {
				return nil, false, r.lineError(errLineTooLong())
			}
			r.long = appendBounded(r.long, frag)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			if len(r.long)+len(frag) > MaxLineBytes {
				return nil, false, r.lineError(errLineTooLong())
			}
			b := frag
			if len(r.long) > 0 {
				r.long = appendBounded(r.long, frag)
				b = r.long
			}
			if len(bytes.TrimSpace(b)) == 0 {
				return nil, true, io.EOF
			}
			return b, true, nil
		default:
			return nil, false, r.lineError(fmt.Errorf("reading trace: %w", err))
		}
	}
}

// appendBounded appends frag to b, growing b by doubling up to MaxLineBytes
// and its newline, so a line at the bound allocates about twice the bound in all.
func appendBounded(b, frag []byte) []byte {
	n := len(b) + len(frag)
	if n > cap(b) {
		c := min(max(2*cap(b), n, readerBufferSize), MaxLineBytes+1)
		nb := make([]byte, len(b), c)
		copy(nb, b)
		b = nb
	}
	return append(b, frag...)
}

// clip shortens a value quoted in a message: trace lines can be 16 MiB long.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func knownKind(k string) bool {
	switch k {
	case KindRequest, KindItem, KindPage, KindEvent, KindEnd, KindNote:
		return true
	}
	return false
}

// Next returns the next line; io.EOF at the end. A last line cut short (a
// crash while writing) ends the trace with a warning; any other malformed
// line is a *LineError, and Next returns that error from then on. Lines of
// unknown kinds are skipped with a warning.
func (r *Reader) Next() (*Line, error) {
	if r.err != nil {
		return nil, r.err
	}
	l, err := r.next()
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
	}
	return l, err
}

func (r *Reader) next() (*Line, error) {
	for {
		raw, last, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			if last {
				return nil, io.EOF
			}
			return nil, r.lineError(errors.New("empty line"))
		}
		var l Line
		if err := json.Unmarshal(raw, &l); err != nil {
			if last {
				r.warn("the last line is truncated (the recording stopped while writing it); replayed everything before it")
				return nil, io.EOF
			}
			return nil, r.lineError(fmt.Errorf("malformed line: %w", err))
		}
		if !knownKind(l.K) {
			if l.K == "" || l.K == KindHeader {
				return nil, r.lineError(fmt.Errorf("unexpected line kind %q", l.K))
			}
			r.warn("skipped a line of unknown kind %q (written by a newer version?)", clip(l.K))
			continue
		}
		return &l, nil
	}
}

// Close closes the underlying file.
func (r *Reader) Close() error {
	var first error
	for _, c := range r.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
