// Package termsafe shows text from session histories on a terminal without
// letting it drive the terminal. A history can hold anything a model or a
// tool printed, or a file held: escape sequences that write the clipboard
// (OSC 52), clear the screen, set the window title or hide text, C1
// controls (0x9b is a one-byte CSI to some terminals), bidirectional
// overrides that reorder what is shown, and carriage returns or backspaces
// that overwrite it. termsafe renders each such character visibly, as an
// escape (\u001b, \u009b, \u202e; an invalid UTF-8 byte as \x9b), and keeps
// newlines and tabs. "\r\n" is a newline.
//
// Inside a JSON string the escapes are JSON's own, so the value read back
// is unchanged; JSON encoders already escape C0 controls, and termsafe
// escapes the rest there the same way.
package termsafe

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// unsafeRune reports whether a rune must not reach a terminal as it is:
// C0 controls but newline and tab, DEL, C1 controls, and the characters
// that change the direction or the lines of what follows.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\n' && r != '\t'
	case r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

const hex = "0123456789abcdef"

func appendEscape(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// String returns s safe to print (see the package comment).
func String(s string) string {
	if !needs(s) {
		return s
	}
	out, _ := clean(nil, []byte(s), nil, true)
	return string(out)
}

// needs reports whether String would change s.
func needs(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r) {
			return true
		}
		i += n
	}
	return false
}

// clean appends p, made safe, to out. Unless final, it stops before an
// incomplete tail (a rune cut in two, a "\r" whose next byte decides, the
// start of an allowed sequence) and returns how many bytes it consumed.
func clean(out, p []byte, allow [][]byte, final bool) ([]byte, int) {
	i := 0
	for i < len(p) {
		c := p[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			j := i + 1
			for j < len(p) && (p[j] >= 0x20 && p[j] < 0x7f || p[j] == '\n' || p[j] == '\t') {
				j++
			}
			out = append(out, p[i:j]...)
			i = j
			continue
		}
		if c == 0x1b && len(allow) > 0 {
			rest, partial := p[i:], false
			matched := 0
			for _, a := range allow {
				if bytes.HasPrefix(rest, a) {
					matched = len(a)
					break
				}
				if len(rest) < len(a) && bytes.HasPrefix(a, rest) {
					partial = true
				}
			}
			if matched > 0 {
				out = append(out, rest[:matched]...)
				i += matched
				continue
			}
			if partial && !final {
				return out, i
			}
		}
		if c == '\r' {
			if i+1 == len(p) && !final {
				return out, i
			}
			if i+1 < len(p) && p[i+1] == '\n' {
				i++ // the newline follows
				continue
			}
		}
		if c < utf8.RuneSelf {
			out = appendEscape(out, rune(c))
			i++
			continue
		}
		if !utf8.FullRune(p[i:]) && !final {
			return out, i
		}
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, '\\', 'x', hex[c>>4], hex[c&0xf])
		case unsafeRune(r):
			out = appendEscape(out, r)
		default:
			out = append(out, p[i:i+n]...)
		}
		i += n
	}
	return out, i
}

// Writer passes what is written to it on, safe to print. Sequences given
// as allowed (the styles the program itself writes, such as bold) pass as
// they are. Call Flush at the end: a write may end inside a character.
type Writer struct {
	w       io.Writer
	allow   [][]byte
	pending []byte
	buf     []byte
}

// NewWriter returns a Writer to w that lets the allowed sequences through.
func NewWriter(w io.Writer, allowed ...string) *Writer {
	sw := &Writer{w: w}
	for _, a := range allowed {
		sw.allow = append(sw.allow, []byte(a))
	}
	return sw
}

// Write implements io.Writer.
func (w *Writer) Write(p []byte) (int, error) {
	data := p
	if len(w.pending) > 0 {
		data = append(w.pending, p...)
	}
	out, n := clean(w.buf[:0], data, w.allow, false)
	w.buf = out[:0]
	w.pending = append(w.pending[:0:0], data[n:]...)
	if len(out) > 0 {
		if _, err := w.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// WriteString implements io.StringWriter.
func (w *Writer) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// Flush writes what a write left pending (an incomplete character is
// shown as its bytes).
func (w *Writer) Flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	out, _ := clean(nil, w.pending, w.allow, true)
	w.pending = w.pending[:0]
	_, err := w.w.Write(out)
	return err
}

// Fd is the descriptor of the writer it writes to, if it has one, so a
// terminal is still known to be one.
func (w *Writer) Fd() uintptr {
	if f, ok := w.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}
