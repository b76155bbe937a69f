package schema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/jsontext"
)

// object decodes an object, calling fn for each member with a non-null
// value; fn consumes the value. Members whose value is null are skipped,
// as sonic leaves their fields unset.
func (d *mdec) object(fn func(d *mdec, key string) error) error {
	return d.members(func(key string) error {
		if d.null() {
			return nil
		}
		return fn(d, key)
	})
}

// members decodes an object, calling fn with each member's key; fn
// consumes the value, null included.
func (d *mdec) members(fn func(key string) error) error {
	return d.items('{', '}', "object", "object member", func() error {
		key, err := d.str()
		if err != nil {
			return err
		}
		d.ws()
		if !d.eat(':') {
			return d.errf("expected ':' after object key")
		}
		d.ws()
		return fn(key)
	})
}

// array decodes an array, calling fn for each element; fn consumes it.
func (d *mdec) array(fn func(d *mdec) error) error {
	return d.items('[', ']', "array", "array element", func() error { return fn(d) })
}

// items decodes the comma-separated items between open and close (an
// object's members, an array's elements), calling fn for each; fn
// consumes it. kind and item name them in errors.
func (d *mdec) items(open, close byte, kind, item string, fn func() error) error {
	d.ws()
	if !d.eat(open) {
		return d.errf("expected a JSON %s", kind)
	}
	d.ws()
	if d.eat(close) {
		return nil
	}
	for {
		d.ws()
		if err := fn(); err != nil {
			return err
		}
		d.ws()
		if d.eat(',') {
			continue
		}
		if d.eat(close) {
			return nil
		}
		return d.errf("expected ',' or '%c' after %s", close, item)
	}
}

// null consumes a null literal if one is next.
func (d *mdec) null() bool {
	if len(d.b)-d.i >= 4 && d.s[d.i:d.i+4] == "null" {
		d.i += 4
		return true
	}
	return false
}

// str decodes a string (null: ""). Invalid UTF-8 is kept, as sonic keeps
// it: the encoder writes each invalid byte as U+FFFD.
func (d *mdec) str() (string, error) {
	if d.null() {
		return "", nil
	}
	start, end, esc, err := d.scanner.str()
	if err != nil {
		return "", err
	}
	if !esc {
		if d.clone {
			return strings.Clone(d.s[start:end]), nil
		}
		return d.s[start:end], nil
	}
	return jsontext.Unescape(d.b[start:end])
}

func (d *mdec) strings() ([]string, error) {
	var out []string
	err := d.array(func(d *mdec) error {
		s, err := d.str()
		out = append(out, s)
		return err
	})
	return out, err
}

// number returns the next token if it is a JSON number.
func (d *mdec) number() (string, error) {
	j := d.literalEnd()
	if !jsontext.ValidNumber(d.b[d.i:j]) {
		return "", d.errf("expected a number")
	}
	tok := d.s[d.i:j]
	d.i = j
	return tok, nil
}

func (d *mdec) int() (int64, error) {
	tok, err := d.number()
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(tok, 10, 64)
}

func (d *mdec) uint() (uint64, error) {
	tok, err := d.number()
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(tok, 10, 64)
}

func (d *mdec) float() (float64, error) {
	tok, err := d.number()
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(tok, 64)
}

func (d *mdec) bool() (bool, error) {
	switch {
	case len(d.b)-d.i >= 4 && d.s[d.i:d.i+4] == "true":
		d.i += 4
		return true, nil
	case len(d.b)-d.i >= 5 && d.s[d.i:d.i+5] == "false":
		d.i += 5
		return false, nil
	}
	return false, d.errf("expected true or false")
}

// time decodes an RFC 3339 time string as time.Time's UnmarshalJSON
// (sonic's) does, strictly; "" is the zero time.
func (d *mdec) time() (t time.Time, err error) {
	s, err := d.str()
	if err != nil || s == "" {
		return time.Time{}, err
	}
	if err = t.UnmarshalText([]byte(s)); err == nil && !TimeInRange(t) {
		err = fmt.Errorf("time %q is out of range (years 0 to 9999 in UTC)", s)
	}
	return t, err
}

// TimeInRange reports whether a time's UTC year is 0 to 9999, the times a
// record can hold: RFC 3339 writes no other.
func TimeInRange(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 0 && y <= 9999
}

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

// value moves past one JSON value and returns it.
func (d *mdec) value() ([]byte, error) {
	start := d.i
	if err := d.skip(); err != nil {
		return nil, err
	}
	return d.b[start:d.i], nil
}

// raw returns a validated, strict copy of the next value (see
// strictValue).
func (d *mdec) raw() (json.RawMessage, error) {
	v, _, err := d.rawStrict()
	return v, err
}

// rawStrict is raw, also saying what making the value strict changed.
func (d *mdec) rawStrict() (json.RawMessage, Repairs, error) {
	val, err := d.value()
	if err != nil {
		return nil, 0, err
	}
	return d.fast.rawValue(val)
}

// skipValue moves past a value this build does not decode; it must still
// be valid JSON.
func (d *mdec) skipValue() error {
	val, err := d.value()
	if err == nil && !d.fast.validJSON(val) {
		err = invalidValue(val)
	}
	return err
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
