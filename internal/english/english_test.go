package english

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Plural(0, "file"), "0 files"},
		{Plural(1, "file"), "1 file"},
		{Plural(int64(2), "partial line"), "2 partial lines"},
		{Plural(-1, "file"), "-1 files"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
