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
	"unsafe"

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
	d := &mdec{scanner: scanner{b: b}, s: unsafe.String(unsafe.SliceData(b), len(b))}
	var err error
	if d.ws(); !d.null() {
		err = d.array(func(d *mdec) error {
			if d.null() {
				return nil
			}
			c := new(Checkpoint)
			list = append(list, c)
			return d.object(c.member)
		})
	}
	if d.ws(); err == nil && d.i != len(b) {
		err = d.errf("trailing data after the watermarks")
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
	// Fast decodes the records (see Fast.UnmarshalRecord); nil decodes
	// them in Go.
	Fast *Fast
}

// NewDecoder reads records from r. Blank lines are skipped.
func NewDecoder(r io.Reader) *Decoder { return &Decoder{lr: NewLineReader(r)} }

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
		if err := d.Fast.UnmarshalRecord(l.Bytes, rec); err != nil {
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
	return (*Fast)(nil).UnmarshalRecord(data, rec)
}

// UnmarshalRecord is Unmarshal with f's machinery: past f's first
// memberBudget bytes of records, a record goes through f.Unmarshal, and
// through the member decoder when that declines it. f may be nil.
func (f *Fast) UnmarshalRecord(data []byte, rec *Record) error {
	// A huge line goes to the member decoder, which copies its strings one
	// by one (bigLine): sonic's strings share one copy of the line.
	if f != nil && f.Unmarshal != nil && len(data) <= bigLine {
		if f.decoded.Load() < memberBudget {
			f.decoded.Add(int64(len(data)))
		} else if f.unmarshalWhole(data, rec) {
			return nil
		}
	}
	*rec = Record{}
	return unmarshalMembers(f, data, rec)
}

// unmarshalWhole is the bulk path: one pass of f.Unmarshal (sonic) into
// the struct. It declines records with members this build does not know
// (and anything malformed); the member-by-member decoder keeps those
// members, or says what is wrong.
func (f *Fast) unmarshalWhole(data []byte, rec *Record) bool {
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

// rawValue validates a JSON value and returns a compact, strict copy (see
// strictValue) and what making it strict changed.
func (f *Fast) rawValue(val []byte) (json.RawMessage, Repairs, error) {
	if !f.validJSON(val) {
		return nil, 0, invalidValue(val)
	}
	out, r := strictValue(val, jsontext.LoneSurrogate(val))
	if r == 0 {
		out = bytes.Clone(out) // the repairs made a copy
	}
	return out, r, nil
}

// invalidValue says why validJSON refused val.
func invalidValue(val []byte) error {
	if !jsontext.ValidEscapes(val) {
		return errors.New("invalid JSON value: a backslash that starts no escape")
	}
	if jsontext.Deeper(val, maxDepth) {
		return errors.New("invalid JSON value: nested deeper than 10,000 levels")
	}
	return errors.New("invalid JSON value")
}

// scanner walks one JSON object's top level without decoding the values.
type scanner struct {
	b []byte
	i int
	// fast skips and validates values; nil does it in Go.
	fast *Fast
}

func (s *scanner) errf(format string, args ...any) error {
	return fmt.Errorf("offset %d: "+format, append([]any{s.i}, args...)...)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str scans a string and returns the bounds of its body and whether it
// holds escapes.
func (s *scanner) str() (start, end int, escaped bool, err error) {
	if !s.eat('"') {
		return 0, 0, false, s.errf("expected a string")
	}
	start = s.i
	for {
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			return 0, 0, false, s.errf("unterminated string")
		}
		q := s.i + j
		// An odd number of backslashes before the quote escapes it.
		n := 0
		for k := q - 1; k >= start && s.b[k] == '\\'; k-- {
			n++
		}
		s.i = q + 1
		if n%2 == 0 {
			return start, q, bytes.IndexByte(s.b[start:q], '\\') >= 0, nil
		}
	}
}

// skip moves past one JSON value. Containers are checked for balance here
// and validated in full by whoever decodes them.
func (s *scanner) skip() error {
	n := s.fast.skipValue(s.b[s.i:])
	if n < 0 {
		if jsontext.Deeper(s.b[s.i:], maxDepth) {
			return s.errf("invalid JSON value: nested deeper than 10,000 levels")
		}
		return s.errf("invalid JSON value")
	}
	s.i += n
	return nil
}

// skipPortable is skipValue in Go, without Fast: it balances containers,
// then validates the span.
func (f *Fast) skipPortable(b []byte) int {
	s := scanner{b: b, fast: f}
	s.ws()
	start := s.i
	if s.skipSlow() != nil || !f.validJSON(b[start:s.i]) {
		return -1
	}
	return s.i
}

// literalEnd is the end of the literal (number, true, false, null) at s.i:
// the next delimiter or space.
func (s *scanner) literalEnd() int {
	j := s.i
	for j < len(s.b) {
		switch s.b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}

// skipSlow is skip in Go, without Fast.
func (s *scanner) skipSlow() error {
	if s.i >= len(s.b) {
		return s.errf("unexpected end of record")
	}
	switch c := s.b[s.i]; c {
	case '"':
		_, _, _, err := s.str()
		return err
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, _, _, err := s.str(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return nil
				}
			}
			s.i++
		}
		return s.errf("unterminated %c", c)
	default:
		j := s.literalEnd()
		if !s.fast.validJSON(s.b[s.i:j]) {
			return s.errf("invalid value %q", s.b[s.i:j])
		}
		s.i = j
		return nil
	}
}
