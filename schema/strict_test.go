package schema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDeeper(t *testing.T) {
	nest := func(n int) string { return strings.Repeat(`{"a":[`, n) + "1" + strings.Repeat("]}", n) }
	for _, tc := range []struct {
		in    string
		limit int
		want  bool
	}{
		{`{"a":1}`, 1, false},
		{`{"a":[1]}`, 1, true},
		{nest(3), 6, false},
		{nest(3), 5, true},
		// Brackets inside strings, escaped quotes included, do not count.
		{`{"s":"[[[[[[[[[[[[[[[[[[[["}`, 2, false},
		{`{"s":"\"[[[[[[[[[[[[[[[[[[[[\\"}`, 2, false},
		{`{"s":"\\"}` + strings.Repeat("[", 20), 5, true},
		// Not JSON: still measured.
		{strings.Repeat("[", 300), 255, true},
		{strings.Repeat("[]", 300), 255, false},
	} {
		if got := Deeper([]byte(tc.in), tc.limit); got != tc.want {
			t.Errorf("Deeper(%.40q, %d) = %v, want %v", tc.in, tc.limit, got, tc.want)
		}
	}
}

func TestValidDeep(t *testing.T) {
	deep := `{"x":` + strings.Repeat(`{"a":[`, 60000) + `"\u00e9"` + strings.Repeat("]}", 60000) + "}"
	if !ValidDeep([]byte(deep)) || json.Valid([]byte(deep)) {
		t.Fatal("a valid text nested 120,000 levels: ValidDeep must take it (encoding/json does not)")
	}
	for _, bad := range []string{deep[:len(deep)-1], deep + "}", deep + " 1", `{"a":[1,]}`, `{"a" 1}`, `"\q"`, ``, `[1}`} {
		if ValidDeep([]byte(bad)) {
			t.Errorf("ValidDeep takes %.60q", bad)
		}
	}
	for _, good := range []string{`1`, ` "s" `, `[]`, `{"a":{"b":[null,true,-1.5e3]}}`} {
		if !ValidDeep([]byte(good)) {
			t.Errorf("ValidDeep refuses %q", good)
		}
	}
}

func TestFixSurrogates(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"x\ud800 y"}`, `{"a":"x\ufffd y"}`},                   // a high surrogate alone
		{`{"a":"\ud800\u0041"}`, `{"a":"\ufffd\u0041"}`},             // followed by no low one
		{`{"a":"\udc00"}`, `{"a":"\ufffd"}`},                         // a low surrogate alone
		{`{"a":"end \ud800"}`, `{"a":"end \ufffd"}`},                 // at the end of a string
		{`{"\uD800key":1}`, `{"\ufffdkey":1}`},                       // in a key, upper case
		{`{"a":"\ud800\ud800\udc00"}`, `{"a":"\ufffd\ud800\udc00"}`}, // a high one, then a pair
		{`{"a":"\udc00\ud800"}`, `{"a":"\ufffd\ufffd"}`},             // low then high: both alone
		{`{"a":"\ud83d\ude00"}`, `{"a":"\ud83d\ude00"}`},             // a pair: kept
		{`{"a":"\\ud800"}`, `{"a":"\\ud800"}`},                       // an escaped backslash, then text
		{`{"a":"\\\ud800"}`, `{"a":"\\\ufffd"}`},                     // an escaped backslash, then an escape
		{`{"a":"\ud7ff\ue000"}`, `{"a":"\ud7ff\ue000"}`},             // next to the range
	} {
		got := FixSurrogates([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("FixSurrogates(%s) = %s, want %s", tc.in, got, tc.want)
		}
		if LoneSurrogate([]byte(tc.in)) != (tc.in != tc.want) {
			t.Errorf("LoneSurrogate(%s) = %v", tc.in, !(tc.in != tc.want))
		}
		checkFixed(t, []byte(tc.in), got)
	}
	in := []byte(`{"a":"b"}`)
	if out := FixSurrogates(in); &out[0] != &in[0] {
		t.Error("FixSurrogates copied a text without a lone surrogate")
	}
}

// checkFixed checks FixSurrogates(in) = out: the same length, no lone
// surrogate left, one pass enough, the escapes still valid (CheckEscapes
// agrees), and for JSON the same value as encoding/json reads in.
func checkFixed(t *testing.T, in, out []byte) {
	t.Helper()
	if len(out) != len(in) || LoneSurrogate(out) || !bytes.Equal(FixSurrogates(out), out) {
		t.Fatalf("FixSurrogates(%q) = %q", in, out)
	}
	if valid, lone := CheckEscapes(in); valid != ValidEscapes(in) || (valid && lone != LoneSurrogate(in)) {
		t.Fatalf("CheckEscapes(%q) = %v, %v; ValidEscapes %v, LoneSurrogate %v", in, valid, lone, ValidEscapes(in), LoneSurrogate(in))
	}
	var a, b any
	if json.Unmarshal(in, &a) == nil {
		if err := json.Unmarshal(out, &b); err != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("%q reads as %v, fixed %q as %v (%v)", in, a, out, b, err)
		}
	}
}

func FuzzFixSurrogates(f *testing.F) {
	for _, s := range []string{`{"a":"\ud800"}`, `"\udbff\udfff"`, `\\\ud800\u`, `"\ud800\`, `["\uDC00\uD800\uDC00"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkFixed(t, in, FixSurrogates(in))
	})
}

// Both decoders make a record's JSON values strict: a lone surrogate in
// raw, meta, a tool's input or an unknown member becomes \ufffd, and the
// raw value's change is marked on the source.
func TestDecodeFixesSurrogates(t *testing.T) {
	line := []byte(`{"schema":"pos/1","kind":"message","tools":[{"name":"t","input":{"k\udc00":"\ud800"}}],` +
		`"source":{"path":"/p","offset":0},"meta":{"m":"\ud800"},"raw":{"r":"x\ud800"},"future":"\ud800"}`)
	for name, dec := range map[string]func([]byte, *Record) bool{
		"sonic":   unmarshalWhole,
		"members": func(b []byte, r *Record) bool { return unmarshalMembers(b, r) == nil },
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
		if LoneSurrogate(out) || !bytes.Contains(out, []byte(`"raw":{"r":"x\ufffd"}`)) || r.Source.Altered != "surrogate" {
			t.Errorf("%s: %s (altered %q)", name, out, r.Source.Altered)
		}
	}
	checkPathsAgree(t, bytes.Replace(line, []byte(`,"future":"\ud800"`), nil, 1))

	// Marks add to those the producer set.
	var r Record
	if err := Unmarshal([]byte(`{"kind":"raw","source":{"path":"/p","offset":0,"altered":"utf8,later"},"raw":"\udc00"}`), &r); err != nil {
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
		if err := Unmarshal(line, &r); err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		if !bytes.Equal(AppendRecord(nil, &r), line) {
			t.Fatalf("depth %d: not kept as it was", depth)
		}
		checkWithoutFast(t, line)
		checkPathsAgree(t, line)
	}
	var r Record
	if err := Unmarshal(rec(10002), &r); err == nil || !strings.Contains(err.Error(), "nested deeper than 10,000 levels") {
		t.Fatalf("10,002 levels: %v", err)
	}
	checkWithoutFast(t, rec(10002))
}
