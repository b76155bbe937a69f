package extract

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/pos-lake/pos/schema"
)

// LinesRead says how far ReadLines got.
type LinesRead struct {
	// Consumed and Lines: every line before this offset (and line count)
	// was handled. A last line without its newline is handed on but not
	// consumed: its writer may not be done with it.
	Consumed, Lines int64
	// End is the offset past the last line handed on.
	End int64
}

// ReadLines reads the lines of an append-only JSONL file, as the adapters
// of such formats must: from lr (positioned at the plan's start) to the
// end, skipping blank lines; each line goes to parse (without its newline
// or carriage return), and the lines parse accepts go on to fn. A line parse
// refuses is reported through Skip as path:line: reason and passed over —
// unless it is the last line and has no newline yet, a line still being
// written, which is left for the next run (counted in Stats.Partial). With
// quiet (a first pass over lines read again later), nothing is reported or
// counted.
func (o *Options) ReadLines(ctx context.Context, lr *schema.LineReader, path string, quiet bool,
	parse func(line []byte) error, fn func(line []byte, ln schema.Line) error) (LinesRead, error) {
	start := lr.Offset()
	read := LinesRead{Consumed: start, Lines: lr.Lines(), End: start}
	consume := func(ln schema.Line) { read.Consumed, read.Lines, read.End = ln.End(), ln.Num, ln.End() }
	skip := func(ln schema.Line, err error) error {
		if quiet {
			return nil
		}
		return o.Skip(&schema.BadInput{Path: path, Line: ln.Num, Err: err})
	}
	for {
		if err := ctx.Err(); err != nil {
			return read, err
		}
		ln, err := lr.Next()
		switch {
		case errors.Is(err, io.EOF):
			return read, nil
		case errors.Is(err, schema.ErrLineTooLong):
			consume(ln)
			if err := skip(ln, err); err != nil {
				return read, err
			}
			continue
		case err != nil:
			return read, &ReadError{Path: path, Err: err}
		}
		if !quiet && o.Stats != nil {
			o.Stats.Bytes.Add(ln.End() - ln.Offset)
		}
		b := bytes.TrimRight(ln.Bytes, "\r")
		if len(bytes.TrimSpace(b)) == 0 {
			if ln.Terminated {
				consume(ln)
			}
			continue
		}
		if perr := parse(b); perr != nil {
			if !ln.Terminated {
				if !quiet && o.Stats != nil {
					o.Stats.Partial.Add(1)
				}
				return read, nil
			}
			consume(ln)
			if err := skip(ln, perr); err != nil {
				return read, err
			}
			continue
		}
		if !quiet && o.Stats != nil {
			o.Stats.Lines.Add(1)
		}
		if err := fn(b, ln); err != nil {
			return read, err
		}
		read.End = ln.End()
		if ln.Terminated {
			consume(ln)
		}
	}
}

// RawLine returns a copy of a native line to keep as a raw record, owned
// by the record (decoded strings may point into it), and strict JSON
// whatever the file held: invalid UTF-8 becomes U+FFFD, and inside strings
// a control character is escaped and a backslash that starts no valid
// escape is itself escaped. The line decoders accept both (they skip the
// values they do not read without checking them); strict readers of the
// stream (jq, encoding/json) do not. A line that needs none of it, every
// line as the tools write them, is checked and copied.
func RawLine(b []byte) []byte { return rawLine(b, true) }

// KeptRawLine is RawLine for a line that no later read writes over (from
// a reader made by schema.NewKeptLineReader): a line that needs no repair
// is returned as it is, not copied.
func KeptRawLine(b []byte) []byte { return rawLine(b, false) }

func rawLine(b []byte, clone bool) []byte {
	ctrl, valid := scanRaw(b)
	out := b
	switch {
	case !valid:
		out = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	case clone:
		out = bytes.Clone(b)
	}
	if ctrl || !schema.ValidEscapes(out) {
		out = strictStrings(out)
	}
	return out
}

// ValidText returns a copy of b as valid UTF-8 (invalid bytes become
// U+FFFD).
func ValidText(b []byte) []byte {
	if !utf8.Valid(b) {
		return bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	return bytes.Clone(b)
}

// scanRaw reports whether b holds a control character (below 0x20) and
// whether it is valid UTF-8, eight bytes at a time while they are ASCII.
func scanRaw(b []byte) (ctrl, valid bool) {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	var low uint64
	i := 0
	for i < len(b) {
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			if w&msb != 0 {
				break
			}
			// A byte below 0x20 sets its high bit in (w - 0x20..) &^ w.
			low |= (w - 0x20*lsb) &^ w & msb
			i += 8
		}
		// A non-ASCII word, or the tail: a rune at a time, up to the
		// next word boundary.
		for end := min(i+8, len(b)); i < end; {
			c := b[i]
			if c < utf8.RuneSelf {
				if c < 0x20 {
					ctrl = true
				}
				i++
				continue
			}
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return ctrl || low != 0 || bytes.ContainsFunc(b[i:], func(r rune) bool { return r < 0x20 }), false
			}
			i += size
		}
	}
	return ctrl || low != 0, true
}

// strictStrings makes the strings of a JSON text (valid UTF-8) strict:
// control characters are escaped, and a backslash that starts no valid
// escape becomes an escaped backslash. Control characters between tokens
// (tab, newline, carriage return are JSON whitespace) are left as they are.
func strictStrings(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\':
			if n := schema.EscapeLen(b[i:]); n > 0 {
				out = append(out, b[i:i+n]...)
				i += n - 1
				continue
			}
			out = append(out, '\\', '\\')
			continue
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			continue
		}
		out = append(out, c)
	}
	return out
}

const hexDigits = "0123456789abcdef"

// LineError explains why a line is not a record: encoding/json's one-line
// words for invalid JSON (faster parsers' messages span lines), or that the
// JSON is not an object.
func LineError(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("invalid JSON: %v", err)
	}
	return errors.New("not a JSON object of the expected shape")
}

// FirstLine returns the first non-blank line of the file at path, looking
// at no more than its first 20 lines and 4 MB: adapters that share a file
// extension (.jsonl) tell their files apart by it. The file is opened as
// OpenFile opens it; an error says why it could not be read. A file with
// no such line is (nil, nil).
func (o *Options) FirstLine(path string) ([]byte, error) {
	f, _, err := o.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lr := schema.NewLineReader(io.LimitReader(f, 4<<20))
	for range 20 {
		ln, err := lr.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, schema.ErrLineTooLong) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if b := bytes.TrimSpace(ln.Bytes); len(b) > 0 {
			return bytes.Clone(b), nil
		}
	}
	return nil, nil
}

// Head returns up to n bytes from the start of the file at path, opened as
// OpenFile opens it: for adapters that tell their files by their first
// bytes.
func (o *Options) Head(path string, n int) ([]byte, error) {
	f, _, err := o.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	m, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return buf[:m], nil
}
