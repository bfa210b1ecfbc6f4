// Package jsonscan reads JSON documents in place, for the tool's two hot
// paths: decoding object metadata (pkg/wire) and trimming objects for
// traces (pkg/trace). A Scanner walks objects member by member and arrays
// element by element, skips whatever the caller does not ask for without
// decoding it, and decodes only the strings and numbers asked for, so it makes
// one pass over the bytes and allocates only for strings that hold escapes.
//
// A Scanner reads an input held whole (Reset) or an io.Reader as it goes
// (ResetReader): a response body is decoded while it arrives, each byte read
// once however the reads split it, and only the part being decoded is held
// (a LIST item, a watch event; see Commit), up to a size limit.
//
// Everything it walks or skips is validated as encoding/json validates it
// (RFC 8259, nesting at most 10000 deep, invalid UTF-8 in decoded strings
// replaced by U+FFFD). One difference is deliberate: object keys are matched
// exactly, as Kubernetes' own decoder (sigs.k8s.io/json) matches them, where
// encoding/json would also accept "Metadata" for "metadata".
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrShort reports that the input ended inside a value: more input may
// complete it (for a reading Scanner, the reader's input ended there).
var ErrShort = errors.New("unexpected end of JSON input")

// ErrTooLarge reports that a reading Scanner's current part (the bytes since
// the last Commit) would grow past its limit: the value is not complete within
// the limit, and nothing more was read.
var ErrTooLarge = errors.New("JSON value larger than the size limit")

// SyntaxError is malformed JSON, or a value of another type than asked for.
type SyntaxError struct {
	// Offset is the byte offset in the input where the problem was found.
	Offset int
	Msg    string
}

// Error implements error.
func (e *SyntaxError) Error() string { return fmt.Sprintf("%s (at byte %d)", e.Msg, e.Offset) }

// ReadError is a reading Scanner's reader failing (not malformed JSON).
type ReadError struct{ Err error }

// Error implements error.
func (e *ReadError) Error() string { return e.Err.Error() }

// Unwrap returns the reader's error.
func (e *ReadError) Unwrap() error { return e.Err }

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

const (
	// bufferSize is a reading Scanner's first buffer size; it grows for larger parts.
	bufferSize = 64 << 10
	// minRead is the least free space a read is given.
	minRead = 8 << 10
	// maxEmptyReads is how many reads in a row may return nothing and no error.
	maxEmptyReads = 100
)

// Scanner reads one JSON input. The zero Scanner reads an empty input; Reset
// or ResetReader gives it one. Errors are sticky: after the first, every
// method does nothing and Err returns it. Byte slices a Scanner returns alias
// its input unless said otherwise; copy them to keep them beyond the input's
// life (for a reading Scanner: beyond the next Commit).
type Scanner struct {
	data   []byte
	pos    int
	depth  int
	err    error
	spaced bool
	// first: the object or array opened last has had no member or element yet.
	first bool

	// A reading Scanner's state; r is nil for an input held whole.
	r io.Reader
	// data[keep:] is the current part: what was read since the last Commit.
	// It stays where it is in memory until the next Commit; reading more
	// moves it to a fresh buffer when data has no room left.
	keep int
	// off is the input offset of data[0].
	off int64
	// limit bounds the current part (0: no limit).
	limit int
	// spare is a buffer data moved out of; it is reused once a Commit has
	// ended every alias into it (spareFree).
	spare     []byte
	spareFree bool
	eof       bool
	// readErr is the reader's error other than io.EOF, reported once the
	// bytes read with it are used up.
	readErr error
}

// Reset starts reading data from its beginning.
func (s *Scanner) Reset(data []byte) { *s = Scanner{data: data} }

// ResetReader starts reading r, as much as each step needs. limit (0: none)
// bounds the current part, every byte from the last Commit (or the start) to
// the end of what is being read, whitespace included: a part that would grow
// past it fails with ErrTooLarge before more is read, so at most about twice
// limit is buffered. To bound each value of a stream, Commit at its first
// byte and again after its last.
// A read error is reported as a *ReadError; the input ending inside a value as
// ErrShort.
func (s *Scanner) ResetReader(r io.Reader, limit int) {
	*s = Scanner{r: r, limit: max(limit, 0)}
}

// Commit ends the current part at the next unread byte: what was read
// before it will not be asked for again. The byte slices the Scanner returned before are invalid
// after Commit (a reading Scanner reuses their memory). Reading an input held
// whole, it only moves the start of Part.
func (s *Scanner) Commit() {
	s.keep = s.pos
	s.spareFree = true
}

// Part is what was read since the last Commit (or the start): the bytes of
// the value read since, when Commit was called at its first byte. It is valid
// until the next Commit.
func (s *Scanner) Part() []byte { return s.data[s.keep:s.pos] }

// Since returns what was read from input offset start (an InputOffset
// within the current part) to now. It is valid until the next Commit.
func (s *Scanner) Since(start int64) []byte { return s.data[int(start-s.off):s.pos] }

// InputOffset is the offset in the input of the next unread byte.
func (s *Scanner) InputOffset() int64 { return s.off + int64(s.pos) }

// AtEOF skips whitespace and reports whether the input ends there (a reading
// Scanner reads until it knows). It is false after an error.
func (s *Scanner) AtEOF() bool {
	s.ws()
	return s.err == nil && s.pos >= len(s.data)
}

// fill reads more of the input after data and reports whether it did. When
// it did not, the input has ended, or s.err says why (a *ReadError,
// ErrTooLarge). To make room it may move the current part to another buffer:
// shift is then how far data's indexes moved down (s.pos and s.keep are
// moved; a caller holding an index subtracts shift).
func (s *Scanner) fill() (shift int, ok bool) {
	if s.r == nil || s.err != nil || s.eof {
		return 0, false
	}
	if s.readErr != nil {
		s.err = &ReadError{s.readErr}
		return 0, false
	}
	part := len(s.data) - s.keep
	if s.limit > 0 && part >= s.limit {
		s.err = ErrTooLarge
		return 0, false
	}
	if cap(s.data)-len(s.data) < minRead {
		shift = s.keep
		s.move(part)
	}
	end := cap(s.data)
	if s.limit > 0 {
		end = min(end, s.keep+s.limit) // no further than the part may go
	}
	for range maxEmptyReads {
		n, err := s.r.Read(s.data[len(s.data):end])
		s.data = s.data[:len(s.data)+n]
		switch {
		case err == io.EOF:
			s.eof = true
		case err != nil:
			s.readErr = err
		}
		if n > 0 {
			return shift, true
		}
		if err != nil {
			if s.readErr != nil {
				s.err = &ReadError{s.readErr}
			}
			return shift, false
		}
	}
	s.err = &ReadError{io.ErrNoProgress}
	return shift, false
}

// move puts the current part (part bytes) at the start of a buffer with room
// to read into: the spare buffer when no alias into it can be left, a new one
// otherwise or when the part needs a larger one. The old buffer is left as it
// is: slices the caller still holds into the part stay valid.
func (s *Scanner) move(part int) {
	size := max(cap(s.data), bufferSize)
	for part+minRead > size/2 {
		size *= 2 // the part outgrows the buffer: it may take half of the new one
	}
	if s.limit > 0 {
		size = min(size, s.limit+minRead) // the part is below the limit: room is left
	}
	var buf []byte
	if s.spareFree && cap(s.spare) >= size {
		buf = s.spare[:part]
	} else {
		buf = make([]byte, part, size)
	}
	copy(buf, s.data[s.keep:])
	s.spare, s.spareFree = s.data[:0], false
	s.off += int64(s.keep)
	s.pos -= s.keep
	s.keep = 0
	s.data = buf
}

// Err is the first error met, if any.
func (s *Scanner) Err() error { return s.err }

// Compact reports whether no insignificant whitespace was read so far: a
// compact input can be copied into JSON Lines as it is.
func (s *Scanner) Compact() bool { return !s.spaced }

func (s *Scanner) fail(format string, args ...any) {
	if s.err == nil {
		s.err = &SyntaxError{Offset: int(s.off) + s.pos, Msg: fmt.Sprintf(format, args...)}
	}
}

func (s *Scanner) short() {
	if s.err == nil {
		s.err = ErrShort
	}
}

// ws skips insignificant whitespace.
func (s *Scanner) ws() {
	if s.pos < len(s.data) && s.data[s.pos] > ' ' {
		return // compact JSON: the common case, inlined
	}
	s.skipSpace()
}

// skipSpace is ws when there may be whitespace (or more to read).
func (s *Scanner) skipSpace() {
	for {
		i := s.pos
		for i < len(s.data) {
			switch s.data[i] {
			case ' ', '\t', '\n', '\r':
				i++
				continue
			}
			break
		}
		if i != s.pos {
			s.spaced = true
			s.pos = i
		}
		if i < len(s.data) || s.r == nil {
			return
		}
		if _, ok := s.fill(); !ok {
			return
		}
	}
}

// Peek returns the first byte of the next value after whitespace ('{', '[',
// '"', 't', 'f', 'n', '-' or a digit for well-formed input), or 0 at the end
// of the input or after an error.
func (s *Scanner) Peek() byte {
	if s.err != nil {
		return 0
	}
	s.ws()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

// Byte reads c when it is the next byte after whitespace, and reports
// whether it was. With Expect, it reads a document in parts, one Scanner per
// part (a list streamed item by item): the ',' ':' '[' ']' '{' '}' between
// parts that Key and Next cannot see across Scanners.
func (s *Scanner) Byte(c byte) bool {
	if c != 0 && s.Peek() == c {
		s.pos++
		return true
	}
	return false
}

// Expect reads c, the next byte after whitespace, or records an error.
func (s *Scanner) Expect(c byte) {
	switch {
	case s.Byte(c), s.err != nil:
	case s.pos >= len(s.data):
		s.short()
	default:
		s.fail("invalid character %s, want %s", quoteChar(s.data[s.pos]), quoteChar(c))
	}
}

// End checks that nothing but whitespace follows the value read.
func (s *Scanner) End() error {
	if s.err == nil {
		s.ws()
		if s.pos < len(s.data) {
			s.fail("invalid character %s after top-level value", quoteChar(s.data[s.pos]))
		}
	}
	return s.err
}

// Object reads the '{' that starts an object and returns true; read its
// members with Key. A null is read and returns false, as does an error (any
// other value is one).
func (s *Scanner) Object() bool { return s.open('{', "an object") }

// Key reads the next member's key (unescaped; it aliases the input when it
// holds no escape) and the ':' after it. It returns false, having read the
// '}', when the object has no more members (or on an error). The value of the
// previous member must have been read (or skipped) before.
func (s *Scanner) Key() ([]byte, bool) {
	if !s.more('}', "after object key:value pair") {
		return nil, false
	}
	if s.data[s.pos] != '"' {
		s.fail("invalid character %s looking for beginning of object key string", quoteChar(s.data[s.pos]))
		return nil, false
	}
	key := s.key()
	s.ws()
	if s.err != nil {
		return nil, false
	}
	if s.pos >= len(s.data) {
		s.short()
		return nil, false
	}
	if s.data[s.pos] != ':' {
		s.fail("invalid character %s after object key", quoteChar(s.data[s.pos]))
		return nil, false
	}
	s.pos++
	return key, true
}

// Array reads the '[' that starts an array and returns true; step through its
// elements with Next. A null is read and returns false, as does an error.
func (s *Scanner) Array() bool { return s.open('[', "an array") }

// Next reports whether the array has another element, having read the ','
// before it, or, when it has none, the ']'. The previous element must have
// been read (or skipped) before.
func (s *Scanner) Next() bool { return s.more(']', "after array element") }

func (s *Scanner) open(c byte, what string) bool {
	switch s.Peek() {
	case c:
		s.pos++
		s.first = true
		s.depth++
		if s.depth > maxDepth {
			s.fail("exceeded max depth")
			return false
		}
		return true
	case 'n':
		s.literal("null")
	case 0:
		s.short()
	default:
		s.typeError(what)
	}
	return false
}

// more reads what separates members or elements: the closing byte (the end,
// false), a ',' before the next one, or nothing before the first one.
func (s *Scanner) more(closing byte, context string) bool {
	c := s.Peek()
	if c == 0 {
		s.short()
		return false
	}
	first := s.first
	s.first = false
	switch {
	case c == closing:
		s.pos++
		s.depth--
		return false
	case c == ',' && !first:
		s.pos++
		if s.Peek() == 0 {
			s.short()
			return false
		}
		return true
	case first:
		return true
	}
	s.fail("invalid character %s %s", quoteChar(c), context)
	return false
}

// Skip reads the next value without decoding it.
func (s *Scanner) Skip() {
	if s.Peek() == 0 {
		s.short()
		return
	}
	s.skip()
}

// Raw reads the next value without decoding it and returns its bytes.
func (s *Scanner) Raw() []byte {
	if s.Peek() == 0 {
		s.short()
		return nil
	}
	start := s.InputOffset() // reading more may move data
	s.skip()
	if s.err != nil {
		return nil
	}
	return s.Since(start)
}

// skip reads the next value.
func (s *Scanner) skip() {
	if s.err != nil {
		return
	}
	s.ws()
	if s.pos >= len(s.data) {
		s.short()
		return
	}
	switch c := s.data[s.pos]; c {
	case '{':
		if s.open('{', "an object") {
			for _, ok := s.Key(); ok; _, ok = s.Key() {
				s.skip()
			}
		}
	case '[':
		if s.open('[', "an array") {
			for s.more(']', "after array element") {
				s.skip()
			}
		}
	case '"':
		s.scanString()
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			s.number()
			return
		}
		s.fail("invalid character %s looking for beginning of value", quoteChar(c))
	}
}

func (s *Scanner) literal(lit string) {
	for len(s.data)-s.pos < len(lit) {
		if _, ok := s.fill(); !ok {
			break
		}
	}
	for i := 0; i < len(lit); i++ {
		if s.pos+i >= len(s.data) {
			s.short()
			return
		}
		if s.data[s.pos+i] != lit[i] {
			s.pos += i
			s.fail("invalid character %s in literal %s (expecting %s)", quoteChar(s.data[s.pos]), lit, quoteChar(lit[i]))
			return
		}
	}
	s.pos += len(lit)
}

// number reads a number token and returns it.
func (s *Scanner) number() []byte {
	if s.r != nil {
		// Read the whole token first: it ends at a byte no number has.
		i := s.pos
		for {
			for i < len(s.data) && isNumberByte(s.data[i]) {
				i++
			}
			if i < len(s.data) {
				break
			}
			shift, ok := s.fill()
			if !ok {
				break
			}
			i -= shift
		}
	}
	d, i := s.data, s.pos
	start := i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i >= len(d):
		s.short()
		return nil
	case d[i] == '0':
		i++
	case d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		s.pos = i
		s.fail("invalid character %s in numeric literal", quoteChar(d[i]))
		return nil
	}
	if i < len(d) && d[i] == '.' {
		if i = s.digits(i+1, "after decimal point"); i < 0 {
			return nil
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i = s.digits(i, "in exponent of"); i < 0 {
			return nil
		}
	}
	s.pos = i
	return d[start:i]
}

// digits reads the one or more digits a number has at i, where (after
// decimal point, in exponent of) names in an error; it returns where they
// end, or -1 having failed.
func (s *Scanner) digits(i int, where string) int {
	d := s.data
	if i >= len(d) {
		s.short()
		return -1
	}
	if d[i] < '0' || d[i] > '9' {
		s.pos = i
		s.fail("invalid character %s "+where+" numeric literal", quoteChar(d[i]))
		return -1
	}
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

// scanString reads the string at pos and reports whether decoding it needs
// more than a copy (escapes, or bytes outside ASCII that must be checked).
func (s *Scanner) scanString() (body []byte, plain bool) {
	plain = true
	i := s.pos + 1
	for {
		d := s.data
	scan:
		for i < len(d) {
			// Eight bytes at a time while none of them needs a look: no quote,
			// backslash or control byte (bytes outside ASCII only clear plain).
			for i+8 <= len(d) {
				w := binary.LittleEndian.Uint64(d[i:])
				if w&highBits != 0 {
					plain = false
				}
				if hasLess(w, 0x20)|hasZero(w^(lowBits*'"'))|hasZero(w^(lowBits*'\\')) != 0 {
					break
				}
				i += 8
			}
			if i >= len(d) {
				break
			}
			c := d[i]
			switch {
			case c == '"':
				body = d[s.pos+1 : i]
				s.pos = i + 1
				return body, plain
			case c == '\\':
				plain = false
				if i+1 >= len(d) {
					break scan // the escape continues in the next read
				}
				switch d[i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					i += 2
				case 'u':
					for k := i + 2; k < i+6; k++ {
						if k >= len(d) {
							break scan
						}
						if !isHex(d[k]) {
							s.pos = k
							s.fail("invalid character %s in \\u hexadecimal character escape", quoteChar(d[k]))
							return nil, false
						}
					}
					i += 6
				default:
					s.pos = i + 1
					s.fail("invalid character %s in string escape code", quoteChar(d[i+1]))
					return nil, false
				}
			case c < 0x20:
				s.pos = i
				s.fail("invalid character %s in string literal", quoteChar(c))
				return nil, false
			default:
				if c >= utf8.RuneSelf {
					plain = false
				}
				i++
			}
		}
		shift, ok := s.fill()
		if !ok {
			s.short()
			return nil, false
		}
		i -= shift
	}
}

// isNumberByte reports whether c can be part of a number token.
func isNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// hasZero is non-zero when a byte of w is zero (it may flag more bytes than that one).
func hasZero(w uint64) uint64 { return (w - lowBits) & ^w & highBits }

// hasLess is non-zero when a byte of w is below n (n ≤ 128).
func hasLess(w uint64, n byte) uint64 { return (w - lowBits*uint64(n)) & ^w & highBits }

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// key reads an object key at pos.
func (s *Scanner) key() []byte {
	body, plain := s.scanString()
	if s.err != nil || plain || (utf8.Valid(body) && bytes.IndexByte(body, '\\') < 0) {
		return body
	}
	return appendUnquoted(nil, body)
}

// stringBody reads a string value's raw body (plain: no escapes to undo). A
// null reads as not ok without an error; any other non-string sets the error.
func (s *Scanner) stringBody() (body []byte, plain, ok bool) {
	switch s.Peek() {
	case '"':
	case 'n':
		s.literal("null")
		return nil, false, false
	case 0:
		s.short()
		return nil, false, false
	default:
		s.typeError("a string")
		return nil, false, false
	}
	body, plain = s.scanString()
	return body, plain, s.err == nil
}

// String reads a string value and returns it unescaped; it aliases the input
// when the string holds no escape. A null returns (nil, false); any other
// non-string is an error.
func (s *Scanner) String() ([]byte, bool) {
	body, plain, ok := s.stringBody()
	if !ok {
		return nil, false
	}
	if plain || (utf8.Valid(body) && bytes.IndexByte(body, '\\') < 0) {
		return body, true
	}
	return appendUnquoted(nil, body), true
}

// AppendString reads a string value and appends it, unescaped, to dst. A null
// appends nothing and returns false; any other non-string is an error.
func (s *Scanner) AppendString(dst []byte) ([]byte, bool) {
	body, plain, ok := s.stringBody()
	if !ok {
		return dst, false
	}
	if plain {
		return append(dst, body...), true
	}
	return appendUnquoted(dst, body), true
}

// Int64 reads an integer value. A null returns (0, false); a fraction, an
// exponent, an out-of-range number or a non-number is an error.
func (s *Scanner) Int64() (int64, bool) {
	c := s.Peek()
	switch {
	case c == 'n':
		s.literal("null")
		return 0, false
	case c == 0:
		s.short()
		return 0, false
	case c != '-' && (c < '0' || c > '9'):
		s.typeError("a number")
		return 0, false
	}
	start := s.InputOffset()
	tok := s.number()
	if s.err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(tok), 10, 64)
	if err != nil {
		s.pos = int(start - s.off)
		s.fail("cannot read number %s as a 64-bit integer", tok)
		return 0, false
	}
	return n, true
}

// Bool reads true or false. A null returns (false, false); anything else is an error.
func (s *Scanner) Bool() (value, ok bool) {
	switch s.Peek() {
	case 't':
		s.literal("true")
		return s.err == nil, s.err == nil
	case 'f':
		s.literal("false")
		return false, s.err == nil
	case 'n':
		s.literal("null")
		return false, false
	case 0:
		s.short()
		return false, false
	}
	s.typeError("a boolean")
	return false, false
}

func (s *Scanner) typeError(want string) {
	var got string
	switch c := s.data[s.pos]; {
	case c == '{':
		got = "an object"
	case c == '[':
		got = "an array"
	case c == '"':
		got = "a string"
	case c == 't', c == 'f':
		got = "a boolean"
	case c == 'n':
		got = "null"
	case c == '-', c >= '0' && c <= '9':
		got = "a number"
	default:
		s.fail("invalid character %s looking for beginning of value", quoteChar(c))
		return
	}
	s.fail("want %s, got %s", want, got)
}

// appendUnquoted appends the decoded form of a validated string body (escapes
// resolved, invalid UTF-8 and lone surrogates replaced by U+FFFD), as encoding/json does.
func appendUnquoted(dst, body []byte) []byte {
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			switch body[i+1] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := hex4(body[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
						if r2 := utf16.DecodeRune(r, hex4(body[i+2:i+6])); r2 != utf8.RuneError {
							i += 6
							dst = utf8.AppendRune(dst, r2)
							continue
						}
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, body[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(body[i:])
			i += size
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// quoteChar formats c as encoding/json's error messages do.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(c))
	return "'" + q[1:len(q)-1] + "'"
}
