package errjoin

import (
	"errors"
	"testing"
)

func TestJoin(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	if err := Join(); err != nil {
		t.Errorf("Join() = %v, want nil", err)
	}
	if err := Join(nil, nil); err != nil {
		t.Errorf("Join(nil, nil) = %v, want nil", err)
	}
	if err := Join(nil, a, nil); err != a {
		t.Errorf("Join(nil, a, nil) = %#v, want a itself", err)
	}
	err := Join(a, nil, b)
	if err == nil || err.Error() != "a\nb" || !errors.Is(err, a) || !errors.Is(err, b) {
		t.Errorf("Join(a, nil, b) = %q, want a and b joined in order", err)
	}
}
