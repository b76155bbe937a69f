package termsafe

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, tabs\tand\nnewlines":  "plain text, tabs\tand\nnewlines",
		"\x1b]52;c;ZWNobyBwd25lZA==\x07":   `\u001b]52;c;ZWNobyBwd25lZA==\u0007`,
		"\x1b[2J\x1b[H":                    `\u001b[2J\u001b[H`,
		"\x1b]0;owned\x1b\\":               `\u001b]0;owned\u001b\`,
		"visible \x1b[8mhidden\x1b[0m":     `visible \u001b[8mhidden\u001b[0m`,
		"c1 \u009b2J and \u0085":           `c1 \u009b2J and \u0085`,
		"raw byte \x9b2J":                  `raw byte \x9b2J`,
		"bidi \u202egnp.exe\u202c \u2066x": `bidi \u202egnp.exe\u202c \u2066x`,
		"progress\rOVERWRITE":              `progress\u000dOVERWRITE`,
		"windows\r\nline":                  "windows\nline",
		"back\bspace\x7f":                  `back\u0008space\u007f`,
		"NUL\x00 and bell\a":               `NUL\u0000 and bell\u0007`,
		"héllo — 日本語 😀":                    "héllo — 日本語 😀",
		"line\u2028separator":              `line\u2028separator`,
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// safe reports whether s holds nothing a terminal acts on but newline and
// tab.
func safe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unsafeRune(r) {
			return false
		}
	}
	return true
}

// FuzzWriter: whatever the input and however it is cut into writes, the
// output is safe, the same as String's, and String changes it no more.
func FuzzWriter(f *testing.F) {
	f.Add([]byte("\x1b]52;c;AAAA\x07 hi \u202e\r\n\r"), 3)
	f.Add([]byte("\xe6\x97\xa5\xe6\x9c\xac \x9b \xc2\x9b"), 1)
	f.Add([]byte("**bold** \x1b[1m\x1b[22"), 2)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		want := String(string(data))
		if !safe(want) {
			t.Fatalf("String(%q) = %q is not safe", data, want)
		}
		if again := String(want); again != want {
			t.Fatalf("String changes its own output %q to %q", want, again)
		}
		var b bytes.Buffer
		w := NewWriter(&b)
		step := 1 + abs(cut)%7
		for i := 0; i < len(data); i += step {
			w.Write(data[i:min(i+step, len(data))])
		}
		w.Flush()
		if b.String() != want {
			t.Fatalf("%q in writes of %d: %q, want %q", data, step, b.String(), want)
		}
		// With the program's own bold allowed, nothing else passes.
		b.Reset()
		w = NewWriter(&b, "\x1b[1m", "\x1b[22m")
		for i := 0; i < len(data); i += step {
			w.Write(data[i:min(i+step, len(data))])
		}
		w.Flush()
		rest := strings.NewReplacer("\x1b[1m", "", "\x1b[22m", "").Replace(b.String())
		if !safe(rest) {
			t.Fatalf("%q with bold allowed: %q", data, b.String())
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
