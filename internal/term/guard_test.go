package term

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// Control characters are escaped on both streams, on stdout unless raw;
// the allowed styles pass; what stdout received is counted.
func TestGuard(t *testing.T) {
	for _, raw := range []bool{false, true} {
		var out, errb bytes.Buffer
		g := NewGuard(&out, &errb, raw, "\x1b[1m")
		const text = "a\x1b]0;x\x07 \x1b[1mb"
		g.Out.Write([]byte(text))
		g.Err.Write([]byte("e\x1b[2J"))
		g.Flush()
		if strings.Contains(errb.String(), "\x1b") {
			t.Errorf("raw %v: stderr %q", raw, errb.String())
		}
		if got := strings.Contains(out.String(), "\x07"); got != raw {
			t.Errorf("raw %v: stdout %q", raw, out.String())
		}
		if !strings.Contains(out.String(), "\x1b[1mb") {
			t.Errorf("raw %v: the allowed style was escaped: %q", raw, out.String())
		}
		if g.Out.N != int64(len(text)) {
			t.Errorf("raw %v: counted %d bytes, want %d", raw, g.Out.N, len(text))
		}
	}
}

func TestSafeError(t *testing.T) {
	if SafeError(nil) != nil {
		t.Error("SafeError(nil) is not nil")
	}
	err := SafeError(&fs.PathError{Op: "open", Path: "a\x1b[2Jb", Err: fs.ErrNotExist})
	if strings.Contains(err.Error(), "\x1b") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%q, Is ErrNotExist %v", err, errors.Is(err, fs.ErrNotExist))
	}
}
