package jsontext

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
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

func TestValidNumber(t *testing.T) {
	number := regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	for _, s := range []string{
		"0", "-0", "7", "-12", "10", "01", "-", "", "1.", "1.5", ".5", "1.5.2",
		"1e", "1e5", "1E+5", "1e-05", "1e+", "-1.25e-3", "2e3x", "1 ", "+1", "0.0e0", "1ee2",
	} {
		if got, want := ValidNumber([]byte(s)), number.MatchString(s); got != want {
			t.Errorf("ValidNumber(%q) = %v, want %v", s, got, want)
		}
	}
}
