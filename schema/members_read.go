package schema

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/jsontext"
)

// TimeInRange reports whether a time's UTC year is 0 to 9999, the times a
// record can hold: RFC 3339 writes no other.
func TimeInRange(t time.Time) bool { return jsontext.TimeInRange(t) }

// timesInRange reports whether every time of a record is in range.
func timesInRange(r *Record) bool {
	ok := TimeInRange(r.TS) && TimeInRange(r.IngestedAt)
	if r.Source != nil {
		ok = ok && TimeInRange(r.Source.Mtime)
	}
	if r.Exchange != nil {
		ok = ok && TimeInRange(r.Exchange.TSEnd)
	}
	if r.Session != nil {
		ok = ok && TimeInRange(r.Session.FirstTS) && TimeInRange(r.Session.LastTS)
	}
	if r.Checkpoint != nil {
		ok = ok && TimeInRange(r.Checkpoint.Mtime)
	}
	return ok
}

// raw returns a validated, strict copy of the next value (see
// strictValue).
func raw(d *jsontext.Reader) (json.RawMessage, error) {
	v, _, err := rawStrict(d)
	return v, err
}

// rawStrict is raw, also saying what making the value strict changed.
func rawStrict(d *jsontext.Reader) (json.RawMessage, Repairs, error) {
	val, err := d.ValidRaw()
	if err != nil {
		return nil, 0, err
	}
	out, r := strictValue(val, jsontext.LoneSurrogate(val))
	if r == 0 {
		out = bytes.Clone(out) // the repairs made a copy
	}
	return out, r, nil
}

// validKey is key as jsontext.AppendString writes it: each invalid UTF-8 byte made
// U+FFFD. Unknown members are written sorted by key, so a record keeps
// their order only if it sorts them by the keys it writes.
func validKey(key string) string {
	if utf8.ValidString(key) {
		return key
	}
	var b strings.Builder
	for i := 0; i < len(key); {
		r, size := utf8.DecodeRuneInString(key[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(key[i : i+size])
		}
		i += size
	}
	return b.String()
}
