package term

import (
	"bytes"
	"os"
	"testing"
)

func TestWidth(t *testing.T) {
	var buf bytes.Buffer
	for _, tc := range []struct {
		flag    int
		columns string
		want    int
	}{
		{80, "200", 80},
		{0, "200", 200},
		{0, "", 120},
		{0, "wide", 120},
		{0, "-5", 120},
		{-1, "0", 120},
	} {
		if got := Width(tc.flag, &buf, tc.columns); got != tc.want {
			t.Errorf("Width(%d, buffer, %q) = %d, want %d", tc.flag, tc.columns, got, tc.want)
		}
	}
}

// A file that is no terminal takes no styles and has no terminal width.
func TestNotATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || IsTerminal(&bytes.Buffer{}) || Color(f, "", "xterm") {
		t.Error("a file or a buffer is taken for a terminal")
	}
	if got := Width(0, f, "97"); got != 97 {
		t.Errorf("Width of a file = %d, want $COLUMNS 97", got)
	}
}
