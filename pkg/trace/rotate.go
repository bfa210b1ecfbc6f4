package trace

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// segment is one file a Recorder writes: the whole trace, or with a
// Rotation one segment of it.
type segment struct {
	file    io.Closer // nil when the Recorder was given a writer
	gz      *gzip.Writer
	written *countingWriter // bytes that reached the file (below gzip)
	buf     *bufio.Writer
	enc     *json.Encoder
	// started is the segment header's startedAt: its lines' `at` count from it.
	started time.Time
	// begun is the size the caches it begins its resources with took in
	// the file (compressed with gzip: see writeMoved): the history after
	// them is what fills it.
	begun int64
}

// size is what the segment has taken: the bytes that reached the file,
// and the lines not yet compressed at their full size.
func (s *segment) size() int64 { return s.written.n + int64(s.buf.Buffered()) }

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newSegment(w io.Writer, file io.Closer, gz *gzip.Writer, written *countingWriter) *segment {
	buf := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return &segment{file: file, gz: gz, written: written, buf: buf, enc: enc}
}

// createSegment opens path for a trace file (mode 0600, truncating an
// existing file; gzip when the name ends in .gz).
func createSegment(path string) (*segment, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating trace file: %w", err)
	}
	// O_CREATE keeps the mode of an existing file; a trace may hold object data.
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("creating trace file: %w", err)
	}
	written := &countingWriter{w: f}
	var w io.Writer = written
	var gz *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		gz = gzip.NewWriter(written)
		w = gz
	}
	return newSegment(w, f, gz, written), nil
}

// flush writes the buffered lines to the file, through gzip's buffer too.
func (s *segment) flush() error {
	if err := s.buf.Flush(); err != nil {
		return err
	}
	if s.gz != nil {
		return s.gz.Flush()
	}
	return nil
}

// close finishes the segment's gzip stream and closes its file; the caller
// has flushed its buffer.
func (s *segment) close() error {
	var err error
	if s.gz != nil {
		if e := s.gz.Close(); e != nil {
			err = fmt.Errorf("finishing gzip trace: %w", e)
		}
	}
	if s.file != nil {
		if e := s.file.Close(); e != nil && err == nil {
			err = fmt.Errorf("closing trace: %w", e)
		}
	}
	return err
}

// Rotation bounds a trace on disk (CreateRotating). Once the segment's
// history past the caches it begins its resources with has reached
// MaxBytes, the trace is full; when a resource's reflector next
// resumes its watch, the file becomes the previous segment (NAME.1.EXT)
// and a new one starts under the trace's name. Each segment replays alone:
// a resource's lines move to the new segment when its reflector resumes a
// watch, and begin there with the resource's cache as it is then
// (Snapshot), recorded as a streaming list or a LIST would have installed
// it. Until every resource has moved, the previous segment takes the lines
// of those that have not (a healthy resource resumes at least once a
// watch timeout); a resource that has not moved when the trace closes is
// written to the new segment then, with its cache at the end.
type Rotation struct {
	// MaxBytes is the size of history at which the trace is full: bytes
	// written to the file (compressed with gzip) past the caches the
	// segment begins with, and the lines still buffered (up to 256 KiB,
	// counted uncompressed).
	MaxBytes int64
	// Keep is how many earlier segments are kept besides the current one:
	// NAME.1.EXT (the newest) to NAME.Keep.EXT; older ones are removed.
	Keep int
	// Snapshot returns resource i's cached objects and its reflector's
	// cursor (the last resourceVersion seen). It is called from the
	// resource's reflector's goroutine before it resumes a watch (the cache
	// is then exactly what the recorded lines gave it), or when the trace
	// closes after the reflectors have stopped. With whole objects recorded
	// (ObjectsFull) the objects must keep their Body.
	Snapshot func(i int) (objects []*store.Object, resourceVersion string)
}

// rotation is a rotating Recorder's state. Guarded by the Recorder's mu.
type rotation struct {
	Rotation
	path   string
	header Header
	n      int      // segments started after the first
	full   bool     // the current segment reached MaxBytes; the next resume starts a new one
	prev   *segment // the previous segment, until every resource has moved
	moved  []bool   // resource i's lines go to the current segment
}

// CreateRotating is Create with the trace kept to segments of
// rot.MaxBytes (see Rotation). Observed traces do not rotate.
func CreateRotating(path string, h Header, rot Rotation) (*Recorder, error) {
	switch {
	case h.Observed:
		return nil, errors.New("creating trace file: an observed trace does not rotate")
	case rot.MaxBytes <= 0:
		return nil, fmt.Errorf("creating trace file: a segment's size must be above 0, not %d", rot.MaxBytes)
	case rot.Keep < 1:
		return nil, fmt.Errorf("creating trace file: at least one earlier segment must be kept, not %d", rot.Keep)
	case rot.Snapshot == nil:
		return nil, errors.New("creating trace file: a rotating trace needs its caches' snapshots")
	}
	r, err := Create(path, h)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.rot = &rotation{Rotation: rot, path: path, header: h}
	r.mu.Unlock()
	return r, nil
}

// SegmentPath is the name of a rotating trace's n-th earlier segment
// (1 is the newest): NAME.n.EXT for path NAME.EXT (out.jsonl →
// out.1.jsonl, out.jsonl.gz → out.1.jsonl.gz, out → out.1).
func SegmentPath(path string, n int) string {
	name, ext := SplitName(path)
	return name + "." + strconv.Itoa(n) + ext
}

// SplitName splits a trace's path into its name and its extension, .gz
// included: out.jsonl.gz → out, .jsonl.gz; a name that is all extension
// (.trace) has none.
func SplitName(path string) (name, ext string) {
	rest, gz := strings.CutSuffix(path, ".gz")
	ext = filepath.Ext(rest)
	if ext == rest || strings.HasSuffix(rest, "/"+ext) {
		ext = ""
	}
	name = strings.TrimSuffix(rest, ext)
	if gz {
		ext += ".gz"
	}
	return name, ext
}

// segments are the open segments: the current one, and the previous one
// while resources are moving. Caller holds mu.
func (r *Recorder) segments() []*segment {
	if r.rot != nil && r.rot.prev != nil {
		return []*segment{r.seg, r.rot.prev}
	}
	return []*segment{r.seg}
}

// segmentOf is the segment resource i's lines go to. Caller holds mu.
func (r *Recorder) segmentOf(i int) *segment {
	if r.rot == nil || r.rot.prev == nil || (i >= 0 && i < len(r.rot.moved) && r.rot.moved[i]) {
		return r.seg
	}
	return r.rot.prev
}

// rotate renames the segments (the current one stays open under its new
// name until its resources have moved), opens the new one and writes its
// header. Caller holds mu.
func (r *Recorder) rotate() error {
	rot := r.rot
	if err := os.Remove(SegmentPath(rot.path, rot.Keep)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the oldest segment: %w", err)
	}
	for n := rot.Keep - 1; n >= 1; n-- {
		if err := os.Rename(SegmentPath(rot.path, n), SegmentPath(rot.path, n+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("renaming a segment: %w", err)
		}
	}
	if err := os.Rename(rot.path, SegmentPath(rot.path, 1)); err != nil {
		return fmt.Errorf("renaming the full segment: %w", err)
	}
	seg, err := createSegment(rot.path)
	if err != nil {
		return err
	}
	h := rot.header
	seg.started = r.now() // with its monotonic reading, which headerLine's UTC drops
	h.StartedAt, h.Segment = seg.started, rot.n+1
	if err := seg.enc.Encode(headerLine(h)); err != nil {
		_ = seg.close()
		return fmt.Errorf("writing trace header: %w", err)
	}
	rot.n++
	rot.full = false
	rot.prev, r.seg = r.seg, seg
	rot.moved = make([]bool, len(r.resources))
	return nil
}

// move is called by resource i's recording source src before it sends a watch
// with opts. When the trace is full or has rotated, and the watch resumes
// from a resourceVersion (the reflector's cache is then exactly what the
// recorded lines gave it), resource i's lines move to the new segment
// (started now if need be), which begins them with that cache. It returns
// the watch's number when it wrote its request line, 0 otherwise.
func (r *Recorder) move(src *recordingSource, opts reflector.RequestOptions) int64 {
	i := src.r
	if opts.ResourceVersion == "" || opts.SendInitialEvents {
		return 0
	}
	r.mu.Lock()
	rot := r.rot
	pending := rot != nil && (rot.full || (rot.prev != nil && !rot.moved[i])) && r.err == nil && !r.closed
	r.mu.Unlock()
	if !pending {
		return 0
	}
	objects, _ := rot.Snapshot(i) // the cursor is the watch's
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil || r.closed {
		return 0
	}
	if rot.full {
		if err := r.rotate(); err != nil {
			r.fail(fmt.Errorf("rotating trace: %w", err))
			return 0
		}
	}
	lines, id := r.snapshotLines(i, rot.header.Resources[i], opts.ResourceVersion, objects, src, &opts)
	if !r.writeMoved(i, lines) {
		return 0
	}
	r.closePrevIfMoved()
	return id
}

// writeMoved writes resource i's first lines in the current segment and
// sends its lines there from now on. Caller holds mu.
func (r *Recorder) writeMoved(i int, lines []*Line) bool {
	at := r.now().Sub(r.seg.started).Nanoseconds()
	// With gzip, size counts the buffered lines at their full size and the
	// rest compressed: lines that push the buffer through gzip would take
	// less than nothing. Measured with nothing buffered on either side, the
	// cache takes what it does in the file.
	if !r.flushGzip(r.seg) {
		return false
	}
	before := r.seg.size()
	for _, l := range lines {
		l.At = at
		if err := r.seg.encode(l); err != nil {
			r.fail(fmt.Errorf("writing trace: %w", err))
			return false
		}
	}
	if !r.flushGzip(r.seg) {
		return false
	}
	r.seg.begun += r.seg.size() - before
	r.rot.moved[i] = true
	return true
}

// flushGzip flushes a gzip segment's buffered lines through gzip to the
// file, and reports whether that went well. Caller holds mu.
func (r *Recorder) flushGzip(seg *segment) bool {
	if seg.gz == nil {
		return true
	}
	if err := seg.flush(); err != nil {
		r.fail(fmt.Errorf("writing trace: %w", err))
		return false
	}
	return true
}

// closePrevIfMoved closes the previous segment once every resource has
// moved. Caller holds mu.
func (r *Recorder) closePrevIfMoved() {
	rot := r.rot
	if rot.prev == nil || slices.Contains(rot.moved, false) {
		return
	}
	r.closeSegment(rot.prev)
	rot.prev = nil
}

// finishRotation writes, when the trace closes during a rotation, each
// resource that has not moved into the current segment: its cache at the
// end, then the end of its run (stopped). Caller holds mu; the reflectors
// have stopped.
func (r *Recorder) finishRotation() {
	rot := r.rot
	if rot == nil || rot.prev == nil || r.err != nil {
		return
	}
	for i, moved := range rot.moved {
		if moved {
			continue
		}
		src := r.sources[i]
		if src == nil {
			continue // a resource whose source was never wrapped has no lines
		}
		objects, cursor := rot.Snapshot(i)
		lines, _ := r.snapshotLines(i, rot.header.Resources[i], cursor, objects, src, nil)
		if !r.writeMoved(i, lines) {
			return
		}
	}
	r.closePrevIfMoved()
}

// streamFallback is the refusal of an auto resource's streaming list, at
// which its reflector fell back to LIST for good.
type streamFallback struct {
	end      Line               // the streaming list's end line
	decision reflector.Decision // the fallback (stream-refused or initial-events-end)
}

// noteFallback keeps, in a rotating trace, the refusal at which auto
// resource i fell back to LIST: its reflector lists with LIST from then
// on, so a segment begins the resource with that refusal, for the replay of
// the segment to fall back too (and relist with a LIST, as the trace does).
// The refusal's end line was written just before the decision.
func (r *Recorder) noteFallback(i int, d *reflector.Decision) {
	if d.Reason != reflector.ReasonStreamRefused && d.Reason != reflector.ReasonInitialEventsEnd {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sources[i]
	if r.rot == nil || s == nil || s.streamEnd == nil || s.fallback != nil ||
		i >= len(r.rot.header.Resources) || r.rot.header.Resources[i].Options.Strategy != reflector.StrategyAuto {
		return
	}
	s.fallback = &streamFallback{end: *s.streamEnd, decision: *d}
}

// snapshotLines are the lines that begin resource i in a new segment: its
// cache at cursor, as the first list its reflector makes in a replay of
// the segment gets it, with the decisions that list makes. With the stream
// and auto strategies, it is the resumed watch id itself (resume: its
// options as sent), its events preceded by the cache as ADDED events and
// the initial-events-end bookmark, as a streaming list delivers them. With
// the list strategy it is a LIST before the watch's request; so it is for
// an auto resource that fell back to LIST (src.fallback), after a
// streaming list refused as the resource's was. The requests that carry
// the cache, or were refused, are marked `snapshot`: they were not sent
// so. When the trace closes (resume nil), the lines end with the run's end
// instead. Requests are numbered by src; id is the watch's. Caller holds mu.
func (r *Recorder) snapshotLines(i int, rh ResourceHeader, cursor string, objects []*store.Object, src *recordingSource, resume *reflector.RequestOptions) (lines []*Line, id int64) {
	n := len(objects)
	nextID := src.id
	fallback := src.fallback
	note := func(state reflector.State, reason reflector.Reason) *Line {
		d := &reflector.Decision{State: state, Reason: reason, Objects: n}
		switch reason {
		case reflector.ReasonListComplete:
			d.ResourceVersion = cursor
		case reflector.ReasonInitialList:
			// As the replay of the segment decides it (a reviewer found
			// "initial list (<nil>)").
			d.List = &reflector.ListMethod{Stream: true}
			if rh.Options.Strategy == reflector.StrategyList {
				d.List = &reflector.ListMethod{PageSize: rh.Options.PageSize}
			}
		}
		l := noteLine(d)
		l.R = i
		return l
	}
	raw := func(o *store.Object) json.RawMessage {
		if rh.Objects == ObjectsFull && len(o.Body) > 0 {
			return r.object(i, o.Body)
		}
		return r.object(i, wire.ObjectJSON(o))
	}
	stopped := func(id int64) []*Line {
		return []*Line{
			{K: KindEnd, R: i, ID: id, Reason: string(reflector.EndStopped)},
			note(reflector.StateStopped, reflector.ReasonStopped),
		}
	}
	if fallback != nil {
		// The segment's replay streams first, as the run did: the
		// refusal answers it, and the fallback is the run's, as a first
		// list decides it.
		refused := nextID()
		end := fallback.end
		end.R, end.ID = i, refused
		d := fallback.decision
		d.State = reflector.StateListing
		decided := noteLine(&d)
		decided.R = i
		lines = append(lines, note(reflector.StateStreamingList, reflector.ReasonInitialList),
			&Line{K: KindRequest, R: i, ID: refused, Verb: string(reflector.VerbWatch), Snapshot: true, Opts: &reflector.RequestOptions{
				ResourceVersion: cursor, ResourceVersionMatch: "NotOlderThan", SendInitialEvents: true, AllowWatchBookmarks: true}},
			&end, decided)
	}
	if rh.Options.Strategy == reflector.StrategyList || fallback != nil {
		list := nextID()
		id = nextID()
		if fallback == nil {
			lines = append(lines, note(reflector.StateListing, reflector.ReasonInitialList))
		}
		lines = append(lines,
			&Line{K: KindRequest, R: i, ID: list, Verb: string(reflector.VerbList), Opts: &reflector.RequestOptions{ResourceVersion: cursor}, Snapshot: true})
		for _, o := range objects {
			lines = append(lines, &Line{K: KindItem, R: i, ID: list, Object: raw(o)})
		}
		lines = append(lines,
			&Line{K: KindPage, R: i, ID: list, ResourceVersion: cursor, Items: &n},
			&Line{K: KindEnd, R: i, ID: list, Reason: string(reflector.EndClosed)},
			note(reflector.StateWatching, reflector.ReasonListComplete))
		if resume == nil {
			lines = append(lines, &Line{K: KindRequest, R: i, ID: id, Verb: string(reflector.VerbWatch), Opts: &reflector.RequestOptions{ResourceVersion: cursor}, Snapshot: true})
			return append(lines, stopped(id)...), id
		}
		return append(lines, &Line{K: KindRequest, R: i, ID: id, Verb: string(reflector.VerbWatch), Opts: resume}), id
	}
	id = nextID()
	opts := &reflector.RequestOptions{ResourceVersion: cursor}
	if resume != nil {
		opts = resume
	}
	lines = append(lines, note(reflector.StateStreamingList, reflector.ReasonInitialList),
		&Line{K: KindRequest, R: i, ID: id, Verb: string(reflector.VerbWatch), Opts: opts, Snapshot: true})
	for _, o := range objects {
		lines = append(lines, &Line{K: KindEvent, R: i, ID: id, Type: string(reflector.EventAdded), Object: raw(o)})
	}
	bookmark, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": cursor, "annotations": map[string]string{wire.InitialEventsEndAnnotation: "true"}}})
	lines = append(lines,
		&Line{K: KindEvent, R: i, ID: id, Type: string(reflector.EventBookmark), Object: bookmark},
		note(reflector.StateWatching, reflector.ReasonListComplete))
	if resume == nil {
		return append(lines, stopped(id)...), id
	}
	return lines, id
}
