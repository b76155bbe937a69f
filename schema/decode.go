package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/jsontext"
)

// SyntaxError reports a line of the stream that is not a valid record. The
// decoder has consumed the line; decoding can go on with the next one.
type SyntaxError struct {
	Line int64
	Err  error
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *SyntaxError) Unwrap() error { return e.Err }

// UnmarshalCheckpoints decodes a JSON array of watermarks (a state file);
// null elements are left out. The watermarks' strings share b's memory
// (a state file holds a watermark for each file of a home, and is read on
// every sync): b must not change afterwards.
func UnmarshalCheckpoints(b []byte) ([]*Checkpoint, error) {
	var list []*Checkpoint
	d := jsontext.NewReader(b, nil, jsontext.ShareText)
	var err error
	if d.Space(); !d.Null() {
		err = d.Array(func() error {
			if d.Null() {
				return nil
			}
			c := new(Checkpoint)
			list = append(list, c)
			return object(&d, c.member)
		})
	}
	if err == nil {
		err = d.End("the watermarks")
	}
	return list, err
}

// Decoder reads records from an NDJSON stream.
type Decoder struct {
	lr *LineReader
	// Line is the number of the line last read.
	Line int64
	// Lazy lists kinds whose records a stage passes on unchanged: a line in
	// this build's canonical form that starts with such a kind is not
	// decoded but kept whole in Record.Line.
	Lazy []Kind
	lazy [][]byte
	// KeepLines sets Record.Line on every record to its line, so a stage
	// that does not change a record can write it back without encoding it.
	// The stage clears Line when it changes the record.
	KeepLines bool
	// Fast decodes the records (see UnmarshalWith); nil decodes them in
	// Go.
	Fast *jsontext.Fast
}

// NewDecoder reads records from r. Blank lines are skipped.
func NewDecoder(r io.Reader) *Decoder { return &Decoder{lr: NewLineReader(r)} }

// NewKeptDecoder reads records from r into blocks that are not written
// over (NewKeptLineReader): for a caller that keeps records' lines
// (KeepLines, Lazy), which then share the blocks instead of a copy each.
func NewKeptDecoder(r io.Reader) *Decoder { return &Decoder{lr: NewKeptLineReader(r, 0, 0)} }

// Decode reads the next record into rec, which it resets first. It returns
// io.EOF at the end of the stream, a *SyntaxError for a line that is not a
// record (decoding may go on), or the read error that stopped it.
func (d *Decoder) Decode(rec *Record) error {
	for {
		l, err := d.lr.Next()
		if err != nil {
			if errors.Is(err, ErrLineTooLong) {
				d.Line = l.Num
				return &SyntaxError{Line: l.Num, Err: err}
			}
			return err
		}
		d.Line = l.Num
		if len(bytes.TrimSpace(l.Bytes)) == 0 {
			continue
		}
		*rec = Record{}
		if k, ok := d.lazyKind(l.Bytes); ok {
			rec.Schema, rec.Kind, rec.Line = Version, k, d.own(l.Bytes)
			return nil
		}
		if err := UnmarshalWith(d.Fast, l.Bytes, rec); err != nil {
			return &SyntaxError{Line: l.Num, Err: err}
		}
		if d.KeepLines && utf8.Valid(l.Bytes) {
			rec.Line = d.own(l.Bytes)
		}
		return nil
	}
}

// own returns a line the record may keep: the line itself from a reader of
// kept lines, else a copy.
func (d *Decoder) own(line []byte) []byte {
	if d.lr.keep {
		return line
	}
	return bytes.Clone(line)
}

// lazyKind reports whether a line is a canonical record of a Lazy kind.
func (d *Decoder) lazyKind(line []byte) (Kind, bool) {
	if len(d.Lazy) == 0 {
		return "", false
	}
	if d.lazy == nil {
		for _, k := range d.Lazy {
			d.lazy = append(d.lazy, []byte(`{"schema":"`+Version+`","kind":"`+string(k)+`",`))
		}
	}
	for i, p := range d.lazy {
		if bytes.HasPrefix(line, p) && bytes.HasSuffix(line, []byte{'}'}) {
			return d.Lazy[i], true
		}
	}
	return "", false
}

// All iterates over the stream. A bad line yields (nil, *SyntaxError) and
// iteration goes on; a read error is yielded last. Each record is new.
func (d *Decoder) All() iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		for {
			rec := new(Record)
			err := d.Decode(rec)
			if errors.Is(err, io.EOF) {
				return
			}
			var se *SyntaxError
			if err != nil && !errors.As(err, &se) {
				yield(nil, err)
				return
			}
			if err != nil {
				rec = nil
			}
			if !yield(rec, err) {
				return
			}
		}
	}
}

// Unmarshal decodes one record from a JSON object, in Go. Unknown members
// are kept in rec.Extra. The record must have a "kind"; a missing "schema"
// is accepted as the current version.
func Unmarshal(data []byte, rec *Record) error {
	return UnmarshalWith(nil, data, rec)
}

// UnmarshalWith is Unmarshal with f's machinery: once f has counted
// jsontext.BulkAfter bytes (see Fast.Bulk), a record goes through
// f.Unmarshal, and through the member decoder when that declines it. f may
// be nil.
func UnmarshalWith(f *jsontext.Fast, data []byte, rec *Record) error {
	// A huge line goes to the member decoder, which copies its strings one
	// by one (bigLine): sonic's strings share one copy of the line.
	if len(data) <= bigLine && f.Bulk(len(data)) && unmarshalWhole(f, data, rec) {
		return nil
	}
	*rec = Record{}
	return unmarshalMembers(f, data, rec)
}

// unmarshalWhole is the bulk path: one pass of f.Unmarshal (sonic) into
// the struct. It declines records with members this build does not know
// (and anything malformed); the member-by-member decoder keeps those
// members, or says what is wrong.
func unmarshalWhole(f *jsontext.Fast, data []byte, rec *Record) bool {
	if err := f.Unmarshal(data, rec); err != nil || rec.Kind == "" || (rec.Schema != "" && !strings.HasPrefix(rec.Schema, "pos/")) || !timesInRange(rec) {
		return false
	}
	// sonic takes any escape in the values it keeps undecoded; the member
	// decoder says what is wrong with one that is not JSON.
	fixed, ok := strictRaw(&rec.Raw)
	_, okMeta := strictRaw(&rec.Meta)
	ok = ok && okMeta
	for i := range rec.Tools {
		_, okIn := strictRaw(&rec.Tools[i].Input)
		ok = ok && okIn
	}
	if !ok {
		return false
	}
	if rec.Schema == "" {
		rec.Schema = Version
	}
	markRaw(rec, fixed)
	rec.TS, rec.IngestedAt = rec.TS.UTC(), rec.IngestedAt.UTC()
	return true
}

// strictRaw makes a value sonic kept undecoded strict (strictValue), and
// reports what that changed and whether its escapes are valid; a value
// with an invalid escape is left as it is.
func strictRaw(b *json.RawMessage) (Repairs, bool) {
	valid, lone := jsontext.CheckEscapes(*b)
	if !valid {
		return 0, false
	}
	var r Repairs
	*b, r = strictValue(*b, lone)
	return r, true
}

// strictValue returns the JSON value b (valid escapes; lone says whether
// it holds a lone surrogate escape, see jsontext.CheckEscapes) as the
// lake keeps it: valid UTF-8 (invalid bytes become U+FFFD) and without lone
// surrogate escapes, which DuckDB's JSON reader refuses (they become
// \ufffd, as the other readers decode them), and says what it changed.
// A value that needs neither is returned as it is.
func strictValue(b json.RawMessage, lone bool) (json.RawMessage, Repairs) {
	var r Repairs
	if len(b) == 0 {
		return b, 0
	}
	if !utf8.Valid(b) {
		b, r = bytes.ToValidUTF8(b, []byte("\uFFFD")), RepairUTF8
	}
	if lone {
		b, r = jsontext.FixSurrogates(b), r|RepairSurrogate
	}
	return b, r
}

// markRaw records on the record's source what decoding changed in its raw
// value, which a producer other than pos-extract may not have made strict.
func markRaw(rec *Record, r Repairs) {
	if r == 0 || len(rec.Raw) == 0 {
		return
	}
	if rec.Source == nil {
		rec.Source = &Source{}
	}
	rec.Source.AddRepairs(r)
}
