package scrub

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/pos-lake/pos/internal/jsontext"
)

// plain returns a secret as it reads with JSON's escapes decoded, up to
// three levels: a secret found inside JSON held in a string
// ("pass\u0026word", a key's "\\n") is labelled and hashed as it reads
// unescaped, so it gets the marker it gets everywhere else.
func plain(secret []byte) []byte {
	for range 3 {
		if bytes.IndexByte(secret, '\\') < 0 {
			break
		}
		u := unescapeLoose(secret)
		if len(u) == len(secret) {
			break
		}
		secret = u
	}
	return secret
}

// escapeJSON returns s as it reads inside a JSON string.
func escapeJSON(s []byte) []byte {
	if bytes.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == '"' || r == '\\' }) < 0 {
		return s
	}
	b := jsontext.AppendStringBytes(nil, s)
	return b[1 : len(b)-1]
}

const markerPrefix = "[REDACTED:"

// marker appends the redaction marker of a secret: its label and the first
// four bytes of the secret's HMAC-SHA256 under the scrub key, in hex.
func (s *Scrubber) marker(b []byte, label string, secret []byte) []byte {
	secret = plain(secret)
	m := hmac.New(sha256.New, s.opt.Key)
	m.Write(secret)
	var sum [sha256.Size]byte
	h := m.Sum(sum[:0])
	b = append(b, markerPrefix...)
	b = append(b, label...)
	b = append(b, ':')
	b = hex.AppendEncode(b, h[:4])
	return append(b, ']')
}

// scrubDoc redacts the parsed document. It returns the new JSON, or false
// when nothing changed, and counts the redactions by rule.
func (sc *scanner) scrubDoc(counts map[string]int64) ([]byte, bool) {
	d := &sc.doc
	s := sc.s
	sc.spans = sc.spans[:0]
	if s.allow.pathAllowed(d.sourcePath) {
		return nil, false
	}
	sc.find(d.text)
	sc.findNested(d)
	if s.opt.PII && !s.off[s.userRule.idx] {
		for _, t := range d.toks {
			if v := d.text[t.txt0:t.txt1]; t.flags&tokUser != 0 && len(v) > 0 && !bytes.HasPrefix(v, []byte(markerPrefix)) && !systemUsers[strings.ToLower(string(v))] {
				sc.spans = append(sc.spans, span{start: t.txt0, end: t.txt1, rule: s.userRule})
			}
		}
	}
	if len(sc.spans) == 0 {
		return nil, false
	}
	sc.settle(d.text, d)
	return sc.apply(counts)
}

// apply redacts the settled spans in the document's strings and returns
// the new JSON.
func (sc *scanner) apply(counts map[string]int64) ([]byte, bool) {
	d := &sc.doc
	s := sc.s
	// Cut the spans at the strings they cover; what falls on syntax,
	// numbers or a kept field is left as it is.
	pieces := sc.pieces[:0]
	for i, sp := range sc.spans {
		for ti := d.tokenAt(sp.start); ti < len(d.toks) && d.toks[ti].txt0 < sp.end; ti++ {
			t := d.toks[ti]
			if t.flags&tokKeep != 0 || sp.rule.pii && t.flags&tokNoPII != 0 {
				continue
			}
			if a, b := max(sp.start, t.txt0), min(sp.end, t.txt1); a < b {
				pieces = append(pieces, piece{tok: ti, a: a, b: b, sp: i})
			}
		}
	}
	sc.pieces = pieces
	if len(pieces) == 0 {
		return nil, false
	}
	applied := sc.applied[:0]
	for range sc.spans {
		applied = append(applied, false)
	}
	sc.applied = applied
	out, prev := sc.out[:0], 0
	for k := 0; k < len(pieces); {
		ti := pieces[k].tok
		t := d.toks[ti]
		body, at := sc.body[:0], t.txt0
		for ; k < len(pieces) && pieces[k].tok == ti; k++ {
			p := pieces[k]
			sp := sc.spans[p.sp]
			body = append(body, d.text[at:p.a]...)
			body = s.marker(body, sp.label, d.text[sp.start:sp.end])
			at = p.b
			applied[p.sp] = true
		}
		body = append(body, d.text[at:t.txt1]...)
		sc.body = body
		out = append(out, d.src[prev:t.src0-1]...)
		out = jsontext.AppendStringBytes(out, body)
		prev = t.src1 + 1
	}
	out = append(out, d.src[prev:]...)
	sc.out = out
	for i, ok := range applied {
		if ok {
			counts[sc.spans[i].rule.id]++
		}
	}
	return out, true
}

// piece is the part of a span inside one string.
type piece struct{ tok, a, b, sp int }

// scrubText redacts a plain text.
func (sc *scanner) scrubText(text []byte, counts map[string]int64) ([]byte, bool) {
	s := sc.s
	sc.spans = sc.spans[:0]
	sc.find(text)
	if len(sc.spans) == 0 {
		return nil, false
	}
	sc.settle(text, nil)
	out, at := sc.out[:0], 0
	for _, sp := range sc.spans {
		out = append(out, text[at:sp.start]...)
		out = s.marker(out, sp.label, text[sp.start:sp.end])
		at = sp.end
		counts[sp.rule.id]++
	}
	out = append(out, text[at:]...)
	sc.out = out
	return out, true
}
