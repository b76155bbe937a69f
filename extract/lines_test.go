package extract

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestRawLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"b"}`, `{"a":"b"}`},
		{`{"a":"héllo wörld, long enough to take the word path"}`, `{"a":"héllo wörld, long enough to take the word path"}`},
		// Controls inside strings are escaped; tabs and newlines between
		// tokens are JSON whitespace and stay.
		{"{\"a\":\"x\x01y\ttab\"}", `{"a":"x\u0001y\u0009tab"}`},
		{"{\"a\":\t\"b\"}", "{\"a\":\t\"b\"}"},
		{"{\"a\":\"escaped \\\" quote \x1f then\"}", `{"a":"escaped \" quote \u001f then"}`},
		{"{\"k\x02\":1}", `{"k\u0002":1}`},
		// A backslash that starts no escape is escaped; the control after
		// it too.
		{"{\"a\":\"\\\x05\"}", `{"a":"\\\u0005"}`},
		{`{"a":"\0 \x41 \u12 \u00e9 \n"}`, `{"a":"\\0 \\x41 \\u12 \u00e9 \n"}`},
		// Invalid UTF-8 becomes U+FFFD, with the controls after it escaped.
		{"{\"a\":\"\xff\x03\"}", "{\"a\":\"\uFFFD\\u0003\"}"},
		{strings.Repeat("x", 20) + "\xc3", strings.Repeat("x", 20) + "\uFFFD"},
	} {
		got := RawLine([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("RawLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.HasPrefix(tc.want, "{") && !json.Valid(got) {
			t.Errorf("RawLine(%q) = %q: not JSON", tc.in, got)
		}
	}
	// A copy, never the input.
	in := []byte(`{"a":"b"}`)
	if out := RawLine(in); &out[0] == &in[0] {
		t.Error("RawLine returned its input")
	}
}

func TestScanRaw(t *testing.T) {
	for i := 0; i < 40; i++ {
		for _, c := range []byte{0x00, 0x1f, 0x20, 0x7f} {
			b := bytes.Repeat([]byte("a"), 40)
			b[i] = c
			ctrl, valid := scanRaw(b)
			if ctrl != (c < 0x20) || !valid {
				t.Errorf("byte %#x at %d: ctrl %v valid %v", c, i, ctrl, valid)
			}
		}
	}
}

func BenchmarkRawLine(b *testing.B) {
	line := []byte(`{"parentUuid":"a9c947c3-4a49-4e4e-9930-31c31427f51d","isSidechain":false,"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("Some text with “quotes” and ascii ", 60) + `"}]},"uuid":"1033b2c3-c60e-4f81-80a6-78ee22747f38"}`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		RawLine(line)
	}
}
