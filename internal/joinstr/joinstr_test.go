package joinstr

import "testing"

func TestNonEmpty(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"", "", ""},
		{"a", "", "a"},
		{"", "b", "b"},
		{"a", "b", "a\nb"},
	} {
		if got := NonEmpty(c.a, c.b, "\n"); got != c.want {
			t.Errorf("NonEmpty(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
