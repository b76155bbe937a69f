package extract

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/pos-lake/pos/internal/jsontext"
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

// Resume is where the watermark of a file read so says the next run
// starts, for an adapter that would start again at start (after lines
// lines), say at an exchange still open: never past what was consumed, as
// a line after that may still be half written.
func (r LinesRead) Resume(start, lines int64) (int64, int64) {
	if start > r.Consumed {
		return r.Consumed, r.Lines
	}
	return start, lines
}

// Line is a native line as ReadLines hands it on.
type Line struct {
	schema.Line
	// Repairs are what keeping the line as strict JSON changed in it (see
	// RawLine): the adapter sets Source.Altered from them on the records
	// it makes of the line.
	Repairs schema.Repairs
}

// Altered is the value of Source.Altered for the line's records.
func (l Line) Altered() string { return l.Repairs.String() }

// LineFuncs are what an adapter does with the lines ReadLines reads. Each
// is given the line as the raw layer keeps it (see RawLine); Parse is
// given only JSON objects.
type LineFuncs struct {
	// Parse reads a line into the adapter's state for Line; an error says
	// the line is not a record of the format.
	Parse func(raw []byte) error
	// Line makes the records of a line Parse accepted.
	Line func(raw []byte, ln Line) error
	// RawOnly makes the raw record of a line kept in the raw layer alone:
	// JSON that is not an object, an object Parse refused, or a line
	// nested more than schema.MaxNesting levels deep, whose raw is then
	// one JSON string holding its text (Repairs has RepairText).
	RawOnly func(raw []byte, ln Line) error
}

// utf8BOM starts a file some editors write; it is not part of the JSON.
var utf8BOM = []byte("\xEF\xBB\xBF")

// ReadLines reads the lines of an append-only JSONL file, as the adapters
// of such formats must: from lr (positioned at the plan's start) to the
// end, skipping blank lines (a UTF-8 byte order mark at the start of the
// file, spaces and a carriage return around a line are not part of it).
//
// Nothing a line holds is lost if it is JSON: a JSON object Parse accepts
// goes to Line; other JSON — not an object, an object Parse refuses, or
// nesting too deep to keep as JSON — is kept by RawOnly and reported
// through Skip as path:line: reason (its message, if any, is skipped). A
// line that is not JSON is reported and passed over — unless it is the
// last line and has no newline yet, a line still being written, which is
// left for the next run (counted in Stats.Partial), as is an unfinished
// last line Parse refuses. A line kept with repairs (RawLine) is named
// through Note. With quiet (a first pass over lines read again later),
// nothing is reported or counted.
func (o *Options) ReadLines(ctx context.Context, lr *schema.LineReader, path string, quiet bool, f LineFuncs) (LinesRead, error) {
	start := lr.Offset()
	read := LinesRead{Consumed: start, Lines: lr.Lines(), End: start}
	consume := func(ln schema.Line) { read.Consumed, read.Lines, read.End = ln.End(), ln.Num, ln.End() }
	skip := func(ln schema.Line, err error) error {
		if quiet {
			return nil
		}
		return o.Skip(&schema.BadInput{Path: path, Line: ln.Num, Err: err})
	}
	tooLong := func(ln schema.Line, err error) error {
		consume(ln)
		return skip(ln, err)
	}
	for {
		ln, ok, err := nextLine(ctx, lr, path, tooLong)
		if !ok {
			return read, err
		}
		if !quiet && o.Stats != nil {
			o.Stats.Bytes.Add(ln.End() - ln.Offset)
		}
		b := ln.Bytes
		if ln.Offset == 0 {
			b = bytes.TrimPrefix(b, utf8BOM)
		}
		b = bytes.Trim(b, " \t\r")
		if len(b) == 0 {
			if ln.Terminated {
				consume(ln)
			}
			continue
		}
		raw, rep := rawLine(b, !lr.Kept())
		line := Line{Line: ln, Repairs: rep}
		// kept: why the line is kept by RawOnly; bad: why it is not JSON.
		var kept, bad error
		switch {
		case jsontext.Deeper(raw, schema.MaxNesting):
			if !jsontext.ValidDeep(raw) {
				bad = errors.New("invalid JSON")
				break
			}
			raw = jsontext.AppendString(nil, unsafe.String(unsafe.SliceData(raw), len(raw)))
			line.Repairs |= schema.RepairText
			kept = RawOnlyReason(raw, line.Repairs)
		case raw[0] != '{':
			if !json.Valid(raw) {
				bad = LineError(raw)
				break
			}
			kept = RawOnlyReason(raw, line.Repairs)
		default:
			if perr := f.Parse(raw); perr != nil {
				if !json.Valid(raw) {
					bad = LineError(raw)
					break
				}
				kept = fmt.Errorf("%s: kept in the raw layer only", firstLine(perr))
			}
		}
		if (kept != nil || bad != nil) && !ln.Terminated {
			// A line still being written, or a writer that leaves the
			// last newline out: the next run reads it again.
			if !quiet && o.Stats != nil {
				o.Stats.Partial.Add(1)
			}
			return read, nil
		}
		if bad != nil {
			consume(ln)
			if err := skip(ln, bad); err != nil {
				return read, err
			}
			continue
		}
		if !quiet && o.Stats != nil {
			o.Stats.Lines.Add(1)
		}
		if kept != nil {
			consume(ln)
			if err := f.RawOnly(raw, line); err != nil {
				return read, err
			}
			if rep != 0 {
				kept = fmt.Errorf("%w; %s", kept, rep.Describe())
			}
			if err := skip(ln, kept); err != nil {
				return read, err
			}
			continue
		}
		if err := f.Line(raw, line); err != nil {
			return read, err
		}
		read.End = ln.End()
		if ln.Terminated {
			consume(ln)
		}
		if rep != 0 && !quiet {
			err := o.Warn(&schema.BadInput{Path: path, Line: ln.Num, Err: errors.New("kept with repairs: " + rep.Describe())})
			if err != nil {
				return read, err
			}
		}
	}
}

// nextLine reads the next line of lr for ReadLines and ReadText, checking
// ctx first. A line longer than lr allows is handed to tooLong, whose error
// stops the reading, and passed over. ok is false at the end of lr (err
// nil) and when the reading stops (err says why).
func nextLine(ctx context.Context, lr *schema.LineReader, path string, tooLong func(schema.Line, error) error) (ln schema.Line, ok bool, err error) {
	for {
		if err := ctx.Err(); err != nil {
			return ln, false, err
		}
		ln, err = lr.Next()
		switch {
		case errors.Is(err, io.EOF):
			return ln, false, nil
		case errors.Is(err, schema.ErrLineTooLong):
			if err := tooLong(ln, err); err != nil {
				return ln, false, err
			}
		case err != nil:
			return ln, false, &ReadError{Path: path, Err: err}
		default:
			return ln, true, nil
		}
	}
}

// StopText, returned by ReadText's function, stops the reading before the
// line it was given, which is not consumed: a line still being written,
// left for the next run.
var StopText = errors.New("stop reading")

// ReadText reads the lines of a text file that is not JSONL (whose lines
// ReadLines reads), from lr to the end, as the adapters of such formats
// must: it checks ctx between lines, counts the bytes of each line it
// hands to fn in Stats.Bytes, and reports a line longer than lr allows
// through Skip and passes over it. fn is given every other line, blank or
// not, terminated or not; StopText from it ends the reading without error.
// Consumed and Lines say where the last line passed over or taken by fn
// ends, and its number (lr's start when there is none).
func (o *Options) ReadText(ctx context.Context, lr *schema.LineReader, path string, fn func(ln schema.Line) error) (LinesRead, error) {
	read := LinesRead{Consumed: lr.Offset(), Lines: lr.Lines(), End: lr.Offset()}
	tooLong := func(ln schema.Line, err error) error {
		read.Consumed, read.Lines = ln.End(), ln.Num
		return o.Skip(&schema.BadInput{Path: path, Line: ln.Num, Err: err})
	}
	for {
		ln, ok, err := nextLine(ctx, lr, path, tooLong)
		if !ok {
			return read, err
		}
		if o.Stats != nil {
			o.Stats.Bytes.Add(ln.End() - ln.Offset)
		}
		if err := fn(ln); errors.Is(err, StopText) {
			return read, nil
		} else if err != nil {
			return read, err
		}
		read.Consumed, read.Lines, read.End = ln.End(), ln.Num, ln.End()
	}
}

// RawOnlyReason says why a native value kept by RawLine or RawJSON is kept
// in the raw layer alone, when it is no object: it was nested too deeply
// (RepairText), or it is another kind of JSON value.
func RawOnlyReason(raw []byte, rep schema.Repairs) error {
	if rep&schema.RepairText != 0 {
		return fmt.Errorf("nested deeper than %d levels: kept in the raw layer as one JSON string", schema.MaxNesting)
	}
	return fmt.Errorf("%s, not an object: kept in the raw layer only", jsonKind(raw[0]))
}

// firstLine is err's message up to its first line break: a diagnostic is
// one line (sonic's syntax errors draw the text below).
func firstLine(err error) string {
	m, _, _ := strings.Cut(err.Error(), "\n")
	return strings.TrimSpace(m)
}

// FieldError says, for a diagnostic, that a field of a native record held
// a value of a type the adapter does not read (err is encoding/json's
// *json.UnmarshalTypeError) and was left out: "message.usage.input_tokens
// is a string, not a number: not read". Other errors are returned as they
// are.
func FieldError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	field := te.Field
	if field == "" {
		field = "the line"
	}
	want := te.Type.Kind().String()
	switch te.Type.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		want = "a number"
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "a boolean"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		want = "an object"
	case reflect.Slice, reflect.Array:
		want = "an array"
	}
	return fmt.Errorf("%s is %s, not %s: not read", field, article(te.Value), want)
}

// article puts "a" or "an" before a JSON kind encoding/json names
// ("string", "number -5", "object").
func article(v string) string {
	if v != "" && strings.ContainsRune("aeiou", rune(v[0])) {
		return "an " + v
	}
	return "a " + v
}

// jsonKind names the kind of JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// RawLine returns a copy of a native line to keep as a raw record, owned
// by the record (decoded strings may point into it), and strict JSON
// whatever the file held: invalid UTF-8 becomes
// U+FFFD; inside strings a control character is escaped and a backslash
// that starts no valid escape is itself escaped; a \u escape of a lone
// UTF-16 surrogate, which DuckDB's JSON reader refuses, becomes \ufffd.
// The line decoders accept all of them (they skip the values they do not
// read without checking them); strict readers of the stream (jq,
// encoding/json, DuckDB) do not. A line that needs none of it, every line
// as the tools write them, is checked and copied. ReadLines hands on lines
// made so, and says what was changed.
func RawLine(b []byte) []byte {
	raw, _ := rawLine(b, true)
	return raw
}

// RawText is RawLine for a whole JSON file, also saying what it changed.
func RawText(b []byte) ([]byte, schema.Repairs) { return rawLine(b, true) }

// RawJSON is RawLine for a native JSON value that is not a line of its
// own (an element of a JSON file, a database value): it also checks that
// it is JSON (err says why not), puts it on one line (a pretty-printed
// file's element), and keeps a value nested more than schema.MaxNesting
// levels deep as one JSON string holding its text (RepairText).
func RawJSON(b []byte) ([]byte, schema.Repairs, error) {
	raw, rep := rawLine(b, true)
	if jsontext.Deeper(raw, schema.MaxNesting) {
		if !jsontext.ValidDeep(raw) {
			return nil, 0, errors.New("invalid JSON")
		}
		return jsontext.AppendString(nil, unsafe.String(unsafe.SliceData(raw), len(raw))), rep | schema.RepairText, nil
	}
	if !json.Valid(raw) {
		return nil, 0, LineError(raw)
	}
	if bytes.IndexByte(raw, '\n') >= 0 || bytes.IndexByte(raw, '\r') >= 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, 0, err
		}
		raw = buf.Bytes()
	}
	return raw, rep, nil
}

func rawLine(b []byte, clone bool) ([]byte, schema.Repairs) {
	ctrl, valid := scanRaw(b)
	out := b
	var rep schema.Repairs
	switch {
	case !valid:
		out, rep = bytes.ToValidUTF8(b, []byte("\uFFFD")), schema.RepairUTF8
	case clone:
		out = bytes.Clone(b)
	}
	escapes, lone := jsontext.CheckEscapes(out)
	if ctrl || !escapes {
		var r schema.Repairs
		out, r = strictStrings(out)
		rep |= r
		lone = jsontext.LoneSurrogate(out)
	}
	if lone {
		out, rep = jsontext.FixSurrogates(out), rep|schema.RepairSurrogate
	}
	return out, rep
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
// escape becomes an escaped backslash; it says which it did. Control
// characters between tokens (tab, newline, carriage return are JSON
// whitespace) are left as they are.
func strictStrings(b []byte) ([]byte, schema.Repairs) {
	out := make([]byte, 0, len(b)+16)
	var rep schema.Repairs
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\':
			if n := jsontext.EscapeLen(b[i:]); n > 0 {
				out = append(out, b[i:i+n]...)
				i += n - 1
				continue
			}
			out = append(out, '\\', '\\')
			rep |= schema.RepairEscape
			continue
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			rep |= schema.RepairControl
			continue
		}
		out = append(out, c)
	}
	return out, rep
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

// OneLine returns a JSON value taken from a native record as a record
// field may carry it, on one line so that it cannot break NDJSON: nil for
// nothing or null, v itself when it is valid and on one line already, else
// compacted, and a JSON string of its text when it is not JSON.
func OneLine(v []byte) json.RawMessage {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	if bytes.IndexByte(v, '\n') < 0 && bytes.IndexByte(v, '\r') < 0 && json.Valid(v) {
		return json.RawMessage(v)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		b, _ := json.Marshal(string(v))
		return b
	}
	return buf.Bytes()
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
		b := ln.Bytes
		if ln.Offset == 0 {
			b = bytes.TrimPrefix(b, utf8BOM)
		}
		if b := bytes.TrimSpace(b); len(b) > 0 {
			return bytes.Clone(b), nil
		}
	}
	return nil, nil
}

// FirstObject returns the members of the first line of the file at path,
// found as FirstLine finds it, for adapters that tell their JSON lines
// files apart by the members the first line has. A file with no such line,
// or whose first line is not a JSON object, is (nil, nil).
func (o *Options) FirstObject(path string) (map[string]json.RawMessage, error) {
	b, err := o.FirstLine(path)
	if b == nil || err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(b, &members) != nil {
		return nil, nil
	}
	return members, nil
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

// LineReaders lends the jobs of a run line readers (a 1 MB buffer each),
// so that a run makes one per worker, not one per file.
type LineReaders struct{ pool sync.Pool }

// Get returns a reader an earlier job gave back, or nil.
func (p *LineReaders) Get() *schema.LineReader {
	lr, _ := p.pool.Get().(*schema.LineReader)
	return lr
}

// Put gives lr back for a later job; nil is passed over.
func (p *LineReaders) Put(lr *schema.LineReader) {
	if lr != nil {
		p.pool.Put(lr)
	}
}
