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

// Reader streams a trace line by line in constant memory (beyond the longest line).
type Reader struct {
	name     string
	counter  *countingReader
	size     int64
	r        *bufio.Reader
	closers  []io.Closer
	header   Header
	line     int
	warnings []string
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
	r := &Reader{name: name, r: bufio.NewReaderSize(in, 1<<20)}
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
			return nil, &LineError{name, 1, fmt.Errorf("the header line is truncated or not JSON: %w", err)}
		}
		return nil, &LineError{name, 1, fmt.Errorf("not a watchcache trace (the first line is not JSON): %w", err)}
	}
	if probe.K != KindHeader {
		return nil, &LineError{name, 1, fmt.Errorf("not a watchcache trace: the first line is %q, want a header", probe.K)}
	}
	if probe.V != Version {
		return nil, &LineError{name, 1, fmt.Errorf("unsupported trace version %d (this build reads version %d)", probe.V, Version)}
	}
	if err := json.Unmarshal(raw, &r.header); err != nil {
		return nil, &LineError{name, 1, fmt.Errorf("bad header: %w", err)}
	}
	return r, nil
}

// Header is the trace's header.
func (r *Reader) Header() Header { return r.header }

// LineNumber is the number of the line last returned by Next.
func (r *Reader) LineNumber() int { return r.line }

// Warnings are what Next skipped (unknown kinds, a truncated last line).
func (r *Reader) Warnings() []string { return r.warnings }

// readLine returns the next line without its newline; last is true when the
// line had no newline (the end of the file came first).
func (r *Reader) readLine() ([]byte, bool, error) {
	b, err := r.r.ReadBytes('\n')
	r.line++
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if len(bytes.TrimSpace(b)) == 0 {
				return nil, true, io.EOF
			}
			return b, true, nil
		}
		return nil, false, fmt.Errorf("%s:%d: reading trace: %w", r.name, r.line, err)
	}
	return b[:len(b)-1], false, nil
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
// line is a *LineError. Lines of unknown kinds are skipped with a warning.
func (r *Reader) Next() (*Line, error) {
	for {
		raw, last, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			if last {
				return nil, io.EOF
			}
			return nil, &LineError{r.name, r.line, errors.New("empty line")}
		}
		var l Line
		if err := json.Unmarshal(raw, &l); err != nil {
			if last {
				r.warnings = append(r.warnings, fmt.Sprintf("%s:%d: the last line is truncated (the recording stopped while writing it); replayed everything before it", r.name, r.line))
				return nil, io.EOF
			}
			return nil, &LineError{r.name, r.line, fmt.Errorf("malformed line: %w", err)}
		}
		if !knownKind(l.K) {
			if l.K == "" || l.K == KindHeader {
				return nil, &LineError{r.name, r.line, fmt.Errorf("unexpected line kind %q", l.K)}
			}
			r.warnings = append(r.warnings, fmt.Sprintf("%s:%d: skipped a line of unknown kind %q (written by a newer version?)", r.name, r.line, l.K))
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
