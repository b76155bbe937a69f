package jsonesc

import (
	"encoding/json"
	"testing"
)

// Simple agrees with encoding/json on every byte after a backslash.
func TestSimple(t *testing.T) {
	for c := range 256 {
		got, ok := Simple(byte(c))
		var want string
		err := json.Unmarshal([]byte(`"\`+string(rune(c))+`"`), &want)
		isSimple := err == nil && c != 'u' && len(want) == 1
		if ok != isSimple || ok && got != want[0] {
			t.Errorf(`\%c: Simple = %q, %v; encoding/json: %q, %v`, c, got, ok, want, err)
		}
	}
}
