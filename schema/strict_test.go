package schema

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/jsontext"
)

// Both decoders make a record's JSON values strict: a lone surrogate in
// raw, meta, a tool's input or an unknown member becomes \ufffd, and the
// raw value's change is marked on the source.
func TestDecodeFixesSurrogates(t *testing.T) {
	line := []byte(`{"schema":"pos/1","kind":"message","tools":[{"name":"t","input":{"k\udc00":"\ud800"}}],` +
		`"source":{"path":"/p","offset":0},"meta":{"m":"\ud800"},"raw":{"r":"x\ud800"},"future":"\ud800"}`)
	for name, dec := range map[string]func([]byte, *Record) bool{
		"sonic":   func(b []byte, r *Record) bool { return unmarshalWhole(testFast, b, r) },
		"members": func(b []byte, r *Record) bool { return unmarshalMembers(testFast, b, r) == nil },
	} {
		var r Record
		// sonic declines the unknown member; without it, it decodes.
		in := line
		if name == "sonic" {
			in = bytes.Replace(line, []byte(`,"future":"\ud800"`), nil, 1)
		}
		if !dec(in, &r) {
			t.Fatalf("%s: not decoded", name)
		}
		out := AppendRecord(nil, &r)
		if jsontext.LoneSurrogate(out) || !bytes.Contains(out, []byte(`"raw":{"r":"x\ufffd"}`)) || r.Source.Altered != "surrogate" {
			t.Errorf("%s: %s (altered %q)", name, out, r.Source.Altered)
		}
	}
	checkPathsAgree(t, bytes.Replace(line, []byte(`,"future":"\ud800"`), nil, 1))

	// Marks add to those the producer set.
	var r Record
	if err := UnmarshalWith(testFast, []byte(`{"kind":"raw","source":{"path":"/p","offset":0,"altered":"utf8,later"},"raw":"\udc00"}`), &r); err != nil {
		t.Fatal(err)
	}
	if string(r.Raw) != `"\ufffd"` || r.Source.Altered != "utf8,later,surrogate" {
		t.Fatalf("raw %s altered %q", r.Raw, r.Source.Altered)
	}
}

func TestRepairs(t *testing.T) {
	r := RepairSurrogate | RepairUTF8 | RepairText
	if r.String() != "utf8,surrogate,text" || Repairs(0).String() != "" {
		t.Fatalf("%q", r.String())
	}
	if d := r.Describe(); !strings.Contains(d, "U+FFFD") || !strings.Contains(d, "255 levels") {
		t.Fatalf("%q", d)
	}
	s := Source{}
	s.AddRepairs(RepairControl)
	s.AddRepairs(RepairControl | RepairEscape)
	if s.Altered != "control,escape" {
		t.Fatalf("%q", s.Altered)
	}
}

// A value nested deeper than sonic reads (4,095 levels) decodes as without
// sonic, up to encoding/json's 10,000 levels (pos-scrub's parser reads as
// many), so that every stage takes the same records; deeper is refused,
// saying why.
func TestDeepValues(t *testing.T) {
	rec := func(depth int) []byte {
		v := strings.Repeat(`{"a":[`, depth/2) + `"x"` + strings.Repeat("]}", depth/2)
		return []byte(`{"schema":"pos/1","kind":"message","tools":[{"name":"t","input":` + v + `}],"raw":` + v + `,"future":` + v + `}`)
	}
	for _, depth := range []int{4094, 5000, 9998} {
		line := rec(depth)
		var r Record
		if err := UnmarshalWith(testFast, line, &r); err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		if !bytes.Equal(AppendRecord(nil, &r), line) {
			t.Fatalf("depth %d: not kept as it was", depth)
		}
		checkWithoutFast(t, line)
		checkPathsAgree(t, line)
	}
	var r Record
	if err := UnmarshalWith(testFast, rec(10002), &r); err == nil || !strings.Contains(err.Error(), "nested deeper than 10,000 levels") {
		t.Fatalf("10,002 levels: %v", err)
	}
	checkWithoutFast(t, rec(10002))
}
