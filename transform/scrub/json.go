package scrub

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/jsontext"
)

// A doc is one JSON document (a record's line) prepared for scanning.
//
// Its scan text is the document with the escapes of every string decoded
// in place: quotes, keys, brackets and numbers stay where they are, and a
// JSON-escaped private key or a tool input holding JSON as a string reads
// as it would in a file. The detectors see "key": "value" context across
// the structure, and newlines inside strings are real newlines, so a text
// splits into line-sized fragments.
//
// Every string (key or value) is a token: where its body is in the JSON and
// where its decoded body is in the scan text. A redaction is a span of the
// scan text; it is applied to the decoded bodies of the tokens it covers,
// which are then encoded again, so the document stays valid JSON whatever
// the span cuts through. Bytes outside strings (numbers, literals, syntax)
// are never changed.
type doc struct {
	src  []byte
	text []byte // the scan text: src itself, or buf
	buf  []byte
	toks []tok

	// Fields of the record the scrubber needs, read during the walk.
	platform   string
	sourcePath string
	kind       string
}

// tok is one JSON string.
type tok struct {
	src0, src1 int // body in src, without the quotes
	txt0, txt1 int // decoded body in text
	flags      uint8
}

const (
	tokKeep  uint8 = 1 << iota // never redacted: a field the pipeline routes or sorts by
	tokNoPII                   // not redacted by the PII rules (checkpoint watermarks)
	tokUser                    // the record's user name (a PII field as a whole)
	tokKey                     // an object key
)

// keepTop are the top-level fields whose values are structure, not content:
// the pipeline routes, partitions and sorts by them. Their values come from
// the adapters (enums, times), not from what a user or a tool wrote.
var keepTop = map[string]bool{
	"schema": true, "kind": true, "platform": true, "ts": true, "ts_precision": true,
	"role": true, "content_type": true, "completeness": true, "ingested_at": true,
}

// keepSub are second-level fields of the same sort.
var keepSub = map[[2]string]bool{
	{"source", "mtime"}: true, {"exchange", "ts_end"}: true, {"session", "first_ts"}: true,
	{"session", "last_ts"}: true, {"session", "title_source"}: true, {"checkpoint", "mtime"}: true,
	{"checkpoint", "platform"}: true, {"adapter", "name"}: true, {"adapter", "version"}: true,
}

var errDepth = errors.New("JSON nested too deeply")

const maxDepth = 10000

// parse reads a JSON document into d, reusing d's buffers.
func (d *doc) parse(src []byte) error {
	d.src, d.toks = src, d.toks[:0]
	d.platform, d.sourcePath, d.kind = "", "", ""
	p := parser{d: d, src: src}
	if bytes.IndexByte(src, '\\') < 0 {
		// Nothing to decode: the scan text is the JSON itself.
		p.alias = true
		d.text = src
	} else {
		// The doc's own buffer, never the caller's (the last document's
		// text may have been its source).
		if cap(d.buf) > 64<<20 && len(src) < 1<<20 {
			d.buf = nil // do not keep one huge record's buffer
		}
		if cap(d.buf) < len(src) {
			// The scan text is at most as long as the JSON: one buffer
			// of that size, not one grown by appends (a 100 MB record
			// would leave 400 MB of smaller copies behind).
			d.buf = make([]byte, 0, len(src))
		}
		d.text = d.buf[:0]
	}
	p.ws()
	if err := p.value(0, "", ""); err != nil {
		return err
	}
	p.ws()
	if !p.alias {
		d.buf = d.text
	}
	if p.i != len(src) {
		return p.errf("trailing data")
	}
	return nil
}

type parser struct {
	d     *doc
	src   []byte
	i     int
	alias bool // the scan text is src: nothing is copied
}

func (p *parser) put(b []byte) {
	if !p.alias {
		p.d.text = append(p.d.text, b...)
	}
}

func (p *parser) putByte(c byte) {
	if !p.alias {
		p.d.text = append(p.d.text, c)
	}
}

func (p *parser) errf(format string, args ...any) error {
	return fmt.Errorf("offset %d: "+format, append([]any{p.i}, args...)...)
}

// ws copies whitespace into the scan text.
func (p *parser) ws() {
	j := p.i
	for j < len(p.src) {
		switch p.src[j] {
		case ' ', '\t', '\r', '\n':
			j++
			continue
		}
		break
	}
	if j > p.i {
		p.put(p.src[p.i:j])
		p.i = j
	}
}

// value parses one value at nesting depth depth (0: the document), inside
// the top-level member top and the second-level member sub.
func (p *parser) value(depth int, top, sub string) error {
	if p.i >= len(p.src) {
		return p.errf("unexpected end of JSON")
	}
	switch c := p.src[p.i]; c {
	case '{':
		if empty, err := p.open(depth, '{', '}'); empty || err != nil {
			return err
		}
		for {
			p.ws()
			if p.i >= len(p.src) || p.src[p.i] != '"' {
				return p.errf("expected a string key")
			}
			var flags uint8 = tokKey
			if depth == 0 {
				flags |= tokKeep // field names of the record
			}
			if top == "checkpoint" {
				flags |= tokNoPII
			}
			k, err := p.str(flags)
			if err != nil {
				return err
			}
			p.ws()
			if p.i >= len(p.src) || p.src[p.i] != ':' {
				return p.errf("expected ':' after object key")
			}
			p.putByte(':')
			p.i++
			p.ws()
			ntop, nsub := top, sub
			switch depth {
			case 0:
				ntop = fieldName(p.d.text[k.txt0:k.txt1])
			case 1:
				nsub = fieldName(p.d.text[k.txt0:k.txt1])
			}
			if err := p.member(depth+1, ntop, nsub); err != nil {
				return err
			}
			if more, err := p.next('}', "object", "object member"); !more || err != nil {
				return err
			}
		}
	case '[':
		if empty, err := p.open(depth, '[', ']'); empty || err != nil {
			return err
		}
		for {
			p.ws()
			if err := p.value(depth+1, top, sub); err != nil {
				return err
			}
			if more, err := p.next(']', "array", "array element"); !more || err != nil {
				return err
			}
		}
	case '"':
		var flags uint8
		if top == "checkpoint" {
			flags |= tokNoPII
		}
		_, err := p.str(flags)
		return err
	default:
		return p.literal()
	}
}

// open copies the opening bracket of an object or array at nesting depth
// depth and reports whether the container is empty, its closing bracket
// copied too.
func (p *parser) open(depth int, open, close byte) (empty bool, err error) {
	if depth >= maxDepth {
		return false, errDepth
	}
	p.putByte(open)
	p.i++
	p.ws()
	if p.i < len(p.src) && p.src[p.i] == close {
		p.putByte(close)
		p.i++
		return true, nil
	}
	return false, nil
}

// next copies what follows a member of an object or an element of an
// array: a comma, after which more follows, or the closing bracket close.
// container and item name them in errors.
func (p *parser) next(close byte, container, item string) (more bool, err error) {
	p.ws()
	if p.i >= len(p.src) {
		return false, p.errf("unterminated %s", container)
	}
	switch p.src[p.i] {
	case ',':
		p.putByte(',')
		p.i++
		return true, nil
	case close:
		p.putByte(close)
		p.i++
		return false, nil
	}
	return false, p.errf("expected ',' or '%c' after %s", close, item)
}

// member parses the value of an object member: the flags a string value
// gets depend on which record field it is.
func (p *parser) member(depth int, top, sub string) error {
	if p.i >= len(p.src) || p.src[p.i] != '"' || depth > 2 {
		return p.value(depth, top, sub)
	}
	var flags uint8
	switch {
	case depth == 1 && keepTop[top]:
		flags = tokKeep
	case depth == 2 && keepSub[[2]string{top, sub}]:
		flags = tokKeep
	case depth == 1 && top == "user":
		flags = tokUser
	}
	if top == "checkpoint" {
		flags |= tokNoPII
	}
	t, err := p.str(flags)
	if err != nil {
		return err
	}
	body := p.d.text[t.txt0:t.txt1]
	switch {
	case depth == 1 && top == "platform":
		p.d.platform = string(body)
	case depth == 1 && top == "kind":
		p.d.kind = string(body)
	case depth == 2 && sub == "path" && (top == "source" || top == "checkpoint"):
		p.d.sourcePath = string(body)
	}
	return nil
}

// literal copies a number, true, false or null.
func (p *parser) literal() error {
	j := p.i
	for j < len(p.src) {
		switch c := p.src[j]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c == '-', c == '+', c == '.', c == 'E':
			j++
			continue
		}
		break
	}
	lit := p.src[p.i:j]
	switch {
	case len(lit) == 0:
		return p.errf("unexpected character %q", p.src[p.i])
	case string(lit) == "true", string(lit) == "false", string(lit) == "null":
	case !jsontext.ValidNumber(lit):
		return p.errf("invalid literal %q", lit)
	}
	p.put(lit)
	p.i = j
	return nil
}

// str parses a string at p.i, appends its decoded body (with the quotes)
// to the scan text and records it as a token.
func (p *parser) str(flags uint8) (tok, error) {
	src, d := p.src, p.d
	p.i++ // opening quote
	t := tok{src0: p.i, flags: flags}
	if p.alias {
		q := bytes.IndexByte(src[p.i:], '"')
		if q < 0 {
			return t, p.errf("unterminated string")
		}
		t.src1 = p.i + q
		t.txt0, t.txt1 = t.src0, t.src1
		p.i = t.src1 + 1
		d.toks = append(d.toks, t)
		return t, nil
	}
	d.text = append(d.text, '"')
	t.txt0 = len(d.text)
	j, q := p.i, -1 // q: the next '"' at or after j
	for {
		if q < j {
			k := bytes.IndexByte(src[j:], '"')
			if k < 0 {
				return t, p.errf("unterminated string")
			}
			q = j + k
		}
		bs := bytes.IndexByte(src[j:q], '\\')
		if bs < 0 {
			d.text = append(d.text, src[j:q]...)
			t.src1, p.i = q, q+1
			break
		}
		bs += j
		d.text = append(d.text, src[j:bs]...)
		n, err := p.unescape(bs)
		if err != nil {
			return t, err
		}
		j = bs + n
	}
	t.txt1 = len(d.text)
	d.text = append(d.text, '"')
	d.toks = append(d.toks, t)
	return t, nil
}

// unescape decodes the escape at src[i] ('\\') into the scan text and
// returns its length in src.
func (p *parser) unescape(i int) (int, error) {
	src, d := p.src, p.d
	if i+1 >= len(src) {
		p.i = i
		return 0, p.errf("unterminated escape")
	}
	c := src[i+1]
	if e, ok := jsontext.Simple(c); ok {
		d.text = append(d.text, e)
		return 2, nil
	}
	if c != 'u' {
		p.i = i
		return 0, p.errf("invalid escape %q", src[i:i+2])
	}
	r, ok := hex4(src, i+2)
	if !ok {
		p.i = i
		return 0, p.errf(`invalid \u escape`)
	}
	n := 6
	if utf16.IsSurrogate(r) {
		if r2, ok := hex4(src, i+8); ok && i+7 < len(src) && src[i+6] == '\\' && src[i+7] == 'u' {
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				r, n = dec, 12
			} else {
				r = utf8.RuneError
			}
		} else {
			r = utf8.RuneError
		}
	}
	d.text = utf8.AppendRune(d.text, r)
	return n, nil
}

// hex4 decodes the \u escape's four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) { return jsontext.Hex4(b[min(i, len(b)):]) }

// tokenAt returns the index of the first token whose decoded body ends
// after off.
func (d *doc) tokenAt(off int) int {
	lo, hi := 0, len(d.toks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if d.toks[m].txt1 <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// fieldNames are the record's field names the parser needs to tell apart,
// interned so that reading a record allocates no name.
var fieldNames = func() map[string]string {
	m := map[string]string{}
	for k := range keepTop {
		m[k] = k
	}
	for k := range keepSub {
		m[k[0]], m[k[1]] = k[0], k[1]
	}
	for _, k := range []string{"user", "path", "source", "checkpoint", "tools", "raw", "meta"} {
		m[k] = k
	}
	return m
}()

// fieldName returns the interned name, or "" for a name that does not
// matter to the parser.
func fieldName(b []byte) string { return fieldNames[string(b)] }
