package lazyre

import "testing"

func TestNew(t *testing.T) {
	re := New(`^a+b$`)
	if !re().MatchString("aab") || re().MatchString("ab ") || re() != re() {
		t.Fatal("not the expression, or compiled again")
	}
	bad := New(`(`)
	defer func() {
		if recover() == nil {
			t.Fatal("a bad expression did not panic at its first use")
		}
	}()
	bad()
}
