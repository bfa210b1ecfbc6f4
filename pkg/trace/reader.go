package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// MaxLineBytes is the longest line, newline excluded, a Reader accepts:
// 16 MiB. A line holds at most one object, and an object in etcd is at most
// about 1.5 MiB (etcd's default request size limit); the rest is JSON framing
// and ample headroom (an object stored as protobuf, or with characters JSON
// escapes, can take several times its stored size as JSON). A longer line is
// refused as soon as the bound is passed, without reading the rest of it, so
// a hostile or broken trace cannot make a reader hold more than this; in a
// gzip trace the decompressed bytes are what count. The live side bounds one
// object the same way: this is wire.MaxObjectBytes.
const MaxLineBytes = wire.MaxObjectBytes

// MaxBytesOutsideObject is how much of a line after the header may lie
// outside its `object`: 64 KiB. Only an object may be large; the other fields
// are words, numbers, resourceVersions, continue tokens (well under 1 KiB),
// error messages (client-go keeps at most 2 KiB of a server's unstructured
// answer) and the reflector's decisions. A replay keeps some of them for every
// request and decision, so they are bounded well below MaxLineBytes.
const MaxBytesOutsideObject = 64 << 10

// MaxAtStepBack is how far a line's `at` may lie before the largest `at` of
// the lines before it. The recorder measures `at` on the wall clock, so a
// clock correction while recording can step it back a little; lines further
// back than this are not a recording's.
const MaxAtStepBack = time.Minute

// maxWarnings is how many warnings a Reader keeps; it counts the rest.
const maxWarnings = 100

// maxJSONDepth is encoding/json's nesting limit, named in the message for a line nested deeper.
const maxJSONDepth = 10000

// readerBufferSize is the read buffer: lines that fit are parsed in place.
const readerBufferSize = 1 << 20

// Reader streams a trace line by line in constant memory (beyond the longest
// line, at most MaxLineBytes). It checks the ordering rules of
// docs/trace-format.md as it goes, keeping only the open request.
type Reader struct {
	name      string
	r         *bufio.Reader
	long      []byte // a line longer than the read buffer, gathered up to MaxLineBytes
	closers   []io.Closer
	header    Header
	line      int
	cutShort  bool  // the input ended in the middle of its encoding (a gzip stream cut or broken)
	cutWarned bool  // the warning that says so was given
	err       error // the first error: Next returns it from then on
	warnings  []string
	dropped   int // warnings beyond maxWarnings

	maxAt     int64 // the largest at so far
	maxAtLine int   // the line that had it
	// steppedBack: a line's at stepped back, and a warning said so (once):
	// backWarning, once the line passed every other check.
	steppedBack bool
	backWarning string
	streams     []stream // each resource's requests
}

// MaxResources bounds the resources a trace header may list.
const MaxResources = 1000

// stream is what the Reader remembers of one resource's requests.
type stream struct {
	streamID int64        // an observed resource's stream id (its resource line's id)
	lastID   int64        // the last request's id
	open     *openRequest // the request whose end has not come yet
}

// openRequest is what the Reader remembers of the request being read.
type openRequest struct {
	id    int64
	verb  reflector.Verb
	line  int
	items int  // item lines so far
	page  bool // its page line came
}

// LineError is a malformed trace line.
type LineError struct {
	Name string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// cannotRead is the error of a trace file that cannot be opened, the same
// for every command that reads one: "cannot read PATH: no such file or
// directory", the operation and the path said once.
func cannotRead(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("cannot read %s: %w", path, err)
}

// Open opens a trace file (gzip when its first bytes say so, or its name
// ends in .gz) and reads its header.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, cannotRead(path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, cannotRead(path, err)
	}
	if fi.IsDir() {
		_ = f.Close()
		return nil, fmt.Errorf("cannot read %s: is a directory", path)
	}
	// A gzip trace is read as one whatever its name (a .gz suffix lost in a
	// copy, or .GZ): its first bytes say it.
	br := bufio.NewReader(f)
	var in io.Reader = br
	closers := []io.Closer{f}
	if magic, _ := br.Peek(2); strings.HasSuffix(path, ".gz") || string(magic) == "\x1f\x8b" {
		gz, err := gzip.NewReader(br)
		if err != nil {
			_ = f.Close()
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%s: the trace is empty", path)
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("%s: the gzip file is cut short before its header ends (%w)", path, err)
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
	r.closers = closers
	return r, nil
}

// NewReader reads a trace from in; name is used in messages.
func NewReader(name string, in io.Reader) (*Reader, error) {
	r := &Reader{name: name, r: bufio.NewReaderSize(in, readerBufferSize)}
	raw, last, err := r.readLine()
	if err != nil {
		if errors.Is(err, io.EOF) && r.cutShort {
			return nil, fmt.Errorf("%s: the file is cut short or broken before its first line (%w)", name, io.ErrUnexpectedEOF)
		}
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
		if last && truncated(err) {
			return nil, r.lineError(fmt.Errorf("the header line is truncated or not JSON: %w", err))
		}
		if deep, ok := tooDeep(err); ok {
			return nil, r.lineError(fmt.Errorf("not a watchcache trace: %w", deep))
		}
		return nil, r.lineError(fmt.Errorf("not a watchcache trace (the first line is not JSON): %w", err))
	}
	switch {
	case probe.K == "":
		// JSON, but no line of a trace: most likely what -o json or
		// --summary -o json printed, saved to a file.
		return nil, r.lineError(errors.New(`not a watchcache trace: the first line has no "k", want a header ({"k":"header",…}); ` +
			"the JSON lines of -o json and --summary are not a trace: record one with --trace FILE"))
	case probe.K != KindHeader:
		return nil, r.lineError(fmt.Errorf("not a watchcache trace: the first line is %q, want a header", format.ClipBytes(probe.K, 64)))
	}
	switch probe.V {
	case 1:
		var h headerV1
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, r.lineError(fmt.Errorf("bad header: %w", err))
		}
		r.header = Header{K: KindHeader, V: 1, StartedAt: h.StartedAt, Tool: h.Tool, Server: h.Server, ServerVersion: h.ServerVersion, Resources: []ResourceHeader{h.ResourceHeader}}
	case Version:
		if err := json.Unmarshal(raw, &r.header); err != nil {
			return nil, r.lineError(fmt.Errorf("bad header: %w", err))
		}
		if len(r.header.Resources) > MaxResources {
			return nil, r.lineError(fmt.Errorf("bad header: it lists %d resources, more than %d", len(r.header.Resources), MaxResources))
		}
	default:
		return nil, r.lineError(fmt.Errorf("unsupported trace version %d (this build reads versions 1 and %d)", probe.V, Version))
	}
	if r.header.StartedAt.IsZero() {
		// A hand-written trace may say no start: its times count from the
		// Unix epoch, not from the zero time, which reads as "never".
		r.header.StartedAt = time.Unix(0, 0).UTC()
	}
	r.streams = make([]stream, len(r.header.Resources))
	return r, nil
}

// Header is the trace's header. In an observed trace, its Resources grow as
// the resource lines are read.
func (r *Reader) Header() Header { return r.header }

// Name is the name the trace's messages use (its path, for Open).
func (r *Reader) Name() string { return r.name }

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

func (r *Reader) warn(msg string, args ...any) {
	if len(r.warnings) >= maxWarnings {
		r.dropped++
		return
	}
	r.warnings = append(r.warnings, fmt.Sprintf("%s:%d: ", r.name, r.line)+fmt.Sprintf(msg, args...))
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
				r.cutShort = errors.Is(err, io.ErrUnexpectedEOF)
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

// truncated reports whether a JSON error is the input ending too soon: a
// line cut short, as opposed to one that is not JSON.
func truncated(err error) bool {
	var se *json.SyntaxError
	return errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &se) && strings.Contains(se.Error(), "unexpected end of JSON input")
}

// tooDeep turns encoding/json's nesting error into a message that says so.
func tooDeep(err error) (error, bool) {
	var se *json.SyntaxError
	if errors.As(err, &se) && strings.Contains(se.Error(), "exceeded max depth") {
		return fmt.Errorf("JSON nested more than %d levels deep (at byte %d)", maxJSONDepth, se.Offset), true
	}
	return nil, false
}

func knownKind(k string) bool {
	switch k {
	case KindRequest, KindItem, KindPage, KindEvent, KindEnd, KindNote, KindResource, KindProbe, KindFlowControl, KindAudit:
		return true
	}
	return false
}

// Next returns the next line; io.EOF at the end. A last line cut short (a
// crash while writing) ends the trace with a warning; any other malformed
// line, or a line that breaks the ordering rules, is a *LineError, and Next
// returns that error from then on. Lines of unknown kinds are skipped with a
// warning.
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
			if errors.Is(err, io.EOF) && r.cutShort && !r.cutWarned {
				// Cut where the recorder flushed: every line is whole.
				r.cutWarned = true
				r.warn("the gzip stream ends early (the recording stopped before it closed the file); replayed everything before it")
			}
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
			if last && truncated(err) {
				r.warn("the last line is truncated (the recording stopped while writing it); replayed everything before it")
				return nil, io.EOF
			}
			if deep, ok := tooDeep(err); ok {
				err = deep
			}
			return nil, r.lineError(fmt.Errorf("malformed line: %w", err))
		}
		if !knownKind(l.K) {
			switch l.K {
			case "":
				return nil, r.lineError(errors.New(`unexpected line kind ""`))
			case KindHeader:
				return nil, r.lineError(errors.New("a second header line (the header is line 1 only; are two traces joined together?)"))
			}
			r.warn("skipped a line of unknown kind %q (written by a newer version?)", format.ClipBytes(l.K, 64))
			continue
		}
		if outside := len(raw) - len(l.Object); outside > MaxBytesOutsideObject {
			return nil, r.lineError(fmt.Errorf("%s line with %d KiB outside its object, want at most %d KiB (only an object may be large)", l.K, outside>>10, MaxBytesOutsideObject>>10))
		}
		if err := r.check(&l); err != nil {
			return nil, r.lineError(err)
		}
		if r.backWarning != "" {
			r.warn("%s", r.backWarning)
			r.backWarning = ""
		}
		return &l, nil
	}
}

// maxAtFrom names where the largest at so far came from: "line 2's" (with
// its value, "line 2's at 10800000000000"), or "the trace's start".
func (r *Reader) maxAtFrom(withValue bool) string {
	switch {
	case r.maxAtLine == 0:
		return "the trace's start"
	case withValue:
		return fmt.Sprintf("line %d's at %d", r.maxAtLine, r.maxAt)
	}
	return fmt.Sprintf("line %d's", r.maxAtLine)
}

// check applies the ordering rules (docs/trace-format.md, "Ordering") to the
// next line, remembering the open request.
func (r *Reader) check(l *Line) error {
	if l.At < r.maxAt-int64(MaxAtStepBack) { // maxAt >= 0: no overflow
		back := "more than 290 years" // what a time.Duration cannot hold
		if d := r.maxAt - l.At; d > 0 {
			back = time.Duration(d).String()
		}
		return fmt.Errorf("at %d is %s before %s: lines are in the order they were written, so at steps back at most %v", l.At, back, r.maxAtFrom(true), MaxAtStepBack)
	}
	switch {
	case l.At > r.maxAt:
		r.maxAt, r.maxAtLine = l.At, r.line
	case l.At < r.maxAt && !r.steppedBack:
		// Within the tolerance, but said once: lines moved out of order
		// replay as if they came so, and what the replay decides there
		// (a resourceVersion going backwards) points to a later line.
		r.steppedBack = true
		r.backWarning = fmt.Sprintf("at steps back %v before %s: its lines may be out of the order they were written (a clock correction while recording does this too); the replay takes them in this order", time.Duration(r.maxAt-l.At), r.maxAtFrom(false))
	}
	if l.K == KindResource {
		return r.addResource(l)
	}
	if l.K == KindFlowControl {
		return nil // about the run, not a resource: anywhere, its r unread
	}
	if l.R < 0 || l.R >= len(r.streams) {
		if r.header.V == 1 {
			return fmt.Errorf("%s line for resource %d in a version 1 trace (its lines have no r)", l.K, l.R)
		}
		return fmt.Errorf("%s line for resource %d, but the header lists %d", l.K, l.R, len(r.streams))
	}
	if l.K == KindAudit && l.Audit == nil {
		return errors.New(`audit line without its "audit"`)
	}
	if l.K == KindNote || l.K == KindProbe || l.K == KindAudit {
		return nil // decisions, audits and the probe's measures may come anywhere, also between a watch's events
	}
	st := &r.streams[l.R]
	o := st.open
	if l.K == KindRequest {
		switch {
		case l.ID <= 0:
			return fmt.Errorf("request line with id %d, want a positive id", l.ID)
		case o != nil && o.id == l.ID:
			return fmt.Errorf("request id %d reused while request %d (line %d) is still open", l.ID, o.id, o.line)
		case o != nil:
			return fmt.Errorf("request %d starts while request %d (line %d) is still open: a request ends before the next one starts", l.ID, o.id, o.line)
		case l.ID <= st.lastID:
			return fmt.Errorf("request id %d after request %d: request ids increase", l.ID, st.lastID)
		case reflector.Verb(l.Verb) != reflector.VerbList && reflector.Verb(l.Verb) != reflector.VerbWatch:
			return fmt.Errorf("request %d has verb %q, want list or watch", l.ID, format.ClipBytes(l.Verb, 64))
		}
		st.lastID = l.ID
		st.open = &openRequest{id: l.ID, verb: reflector.Verb(l.Verb), line: r.line}
		return nil
	}
	switch {
	case o != nil && o.id == l.ID:
	case l.ID <= 0 || l.ID > st.lastID:
		return fmt.Errorf("%s line for request %d, which never started", l.K, l.ID)
	case o != nil:
		return fmt.Errorf("%s line for request %d inside request %d (line %d)", l.K, l.ID, o.id, o.line)
	default:
		return fmt.Errorf("%s line for request %d, which is not open", l.K, l.ID)
	}
	switch l.K {
	case KindItem:
		if o.verb != reflector.VerbList {
			return fmt.Errorf("item line in %s request %d (items belong to a list)", o.verb, o.id)
		}
		if o.page {
			return fmt.Errorf("item line after the page line of request %d", o.id)
		}
		o.items++
	case KindPage:
		switch {
		case o.verb != reflector.VerbList:
			return fmt.Errorf("page line in %s request %d (pages belong to a list)", o.verb, o.id)
		case o.page:
			return fmt.Errorf("a second page line for request %d", o.id)
		case l.Items == nil:
			return fmt.Errorf("page line of request %d without its items count", o.id)
		case *l.Items != o.items:
			lines := "item lines came"
			if o.items == 1 {
				lines = "item line came"
			}
			return fmt.Errorf("page line of request %d says %d items, but %d %s before it", o.id, *l.Items, o.items, lines)
		}
		o.page = true
	case KindEvent:
		if o.verb != reflector.VerbWatch {
			return fmt.Errorf("event line in %s request %d (events belong to a watch)", o.verb, o.id)
		}
	case KindEnd:
		if o.verb == reflector.VerbList && reflector.EndReason(l.Reason) == reflector.EndClosed && !o.page {
			return fmt.Errorf("list request %d ended closed without its page line", o.id)
		}
		st.open = nil
	}
	return nil
}

// addResource takes an observed trace's resource line: the next resource
// of the header, from then on.
func (r *Reader) addResource(l *Line) error {
	switch {
	case !r.header.Observed:
		return errors.New("resource line in a trace that is not observed (its header has no observed: true)")
	case len(l.Resource) == 0:
		return errors.New("resource line without its resource")
	case l.R != len(r.streams):
		return fmt.Errorf("resource line for resource %d, want the next one, %d", l.R, len(r.streams))
	case len(r.streams) >= MaxResources:
		return fmt.Errorf("resource line beyond %d resources", MaxResources)
	case l.ID < 0:
		return fmt.Errorf("resource line with stream id %d, want a positive one (or none)", l.ID)
	}
	for i, st := range r.streams {
		if l.ID > 0 && st.streamID == l.ID {
			return fmt.Errorf("resource line with stream id %d, which resource %d has", l.ID, i)
		}
	}
	var rh ResourceHeader
	if err := json.Unmarshal(l.Resource, &rh); err != nil {
		return fmt.Errorf("resource line: bad resource: %w", err)
	}
	r.header.Resources = append(r.header.Resources, rh)
	r.streams = append(r.streams, stream{streamID: l.ID})
	return nil
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
