package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
			return read, Errorf(path, err)
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

// RawLine returns a copy of a native line to keep as a raw record: valid
// UTF-8 (invalid bytes become U+FFFD), owned by the record, so decoded
// strings may point into it.
func RawLine(b []byte) []byte {
	if !utf8.Valid(b) {
		return bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	return bytes.Clone(b)
}

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
// extension (.jsonl) tell their files apart by it. ok is false when the
// file cannot be read or has no such line.
func FirstLine(path string) (line []byte, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	lr := schema.NewLineReader(io.LimitReader(f, 4<<20))
	for range 20 {
		ln, err := lr.Next()
		if err != nil {
			return nil, false
		}
		if b := bytes.TrimSpace(ln.Bytes); len(b) > 0 {
			return bytes.Clone(b), true
		}
	}
	return nil, false
}
