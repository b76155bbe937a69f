package cmdio

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/pos-lake/pos/schema"
)

// A record kept with a warning is printed like a skipped one and counted
// apart; it never stops the stage, not even under --strict, and is no
// reason for exit 3. The printing limit counts both.
func TestSkipsWarn(t *testing.T) {
	bad := func(n int64) *schema.BadInput { return &schema.BadInput{Path: "f", Line: n, Err: errors.New("why")} }
	var out bytes.Buffer
	s := &Skips{Tool: "pos-extract", Out: &out, Max: 3}
	for i := range int64(3) {
		if err := s.Warn(bad(i + 1)); err != nil {
			t.Fatal(err)
		}
	}
	if s.Err() != nil || s.Warnings() != 3 || s.N() != 0 {
		t.Fatalf("err %v, %d warnings, %d skipped", s.Err(), s.Warnings(), s.N())
	}
	s.Skip(bad(4))
	s.Skip(bad(5))
	want := "pos-extract: f:1: why\npos-extract: f:2: why\npos-extract: f:3: why\npos-extract: further bad records are counted, not printed\n"
	if out.String() != want || s.N() != 2 || !strings.Contains(s.Err().Error(), "2 bad input") {
		t.Fatalf("%q, %d skipped", out.String(), s.N())
	}

	out.Reset()
	strict := &Skips{Tool: "pos-extract", Out: &out, Strict: true}
	if err := strict.Warn(bad(1)); err != nil || out.String() != "pos-extract: f:1: why\n" {
		t.Fatalf("strict warn: %v %q", err, out.String())
	}
	if err := strict.Skip(bad(2)); err == nil {
		t.Fatal("strict skip goes on")
	}
}
