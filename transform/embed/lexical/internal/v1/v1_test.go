package v1

import (
	"reflect"
	"strings"
	"testing"
)

func TestStem(t *testing.T) {
	cases := "caresses caress ponies poni ties ti caress caress cats cat feed feed agreed agre plastered plaster " +
		"bled bled motoring motor sing sing conflated conflat troubled troubl sized size hopping hop tanned tan " +
		"falling fall hissing hiss fizzed fizz failing fail filing file happy happi sky sky relational relat " +
		"conditional condit rational ration valenci valenc digitizer digit conformabli conform radicalli radic " +
		"differentli differ vileli vile analogousli analog vietnamization vietnam predication predic operator oper " +
		"feudalism feudal decisiveness decis hopefulness hope callousness callous formaliti formal sensitiviti sensit " +
		"sensibiliti sensibl triplicate triplic formative form formalize formal electriciti electr electrical electr " +
		"hopeful hope goodness good revival reviv allowance allow inference infer airliner airlin gyroscopic gyroscop " +
		"adjustable adjust defensible defens irritant irrit replacement replac adjustment adjust dependent depend " +
		"adoption adopt homologou homolog communism commun activate activ angulariti angular homologous homolog " +
		"effective effect bowdlerize bowdler probate probat rate rate cease ceas controll control roll roll " +
		"generalizations gener caching cach cache cach queries queri query queri"
	f := strings.Fields(cases)
	for i := 0; i < len(f); i += 2 {
		if got := Stem(f[i]); got != f[i+1] {
			t.Errorf("Stem(%q) = %q, want %q", f[i], got, f[i+1])
		}
	}
}

func TestTerms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"The cache is caching the queries", "cach cach queri"},
		{"hookSpecificOutput and HTTPServer", "hookspecificoutput hook specif output httpserver http server"},
		{"opentelemetry_api v2 utf8 6ed2c5f", "opentelemetry_api opentelemetri api v2 utf8 utf 6ed2c5f"},
		{"spotter-gqc: did you push?", "spotter gqc push"},
		{"CLAUDE.md を最新の状態に", "claud md を最 最新 新の の状 状態 態に"},
		{"Ünïcode Straße naïve", "ünïcode straße naïve"},
		{"a x 42 2026", "42 2026"},
		{strings.Repeat("z", MaxWord+1) + " ok", "ok"},
	} {
		if got := strings.Join(Terms(tc.in), " "); got != tc.want {
			t.Errorf("Terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWords(t *testing.T) {
	text := "Fix the parser, then run tests."
	var got []string
	for _, w := range Words(text) {
		got = append(got, text[w.Start:w.End]+"="+strings.Join(w.Terms, "+"))
	}
	want := []string{"Fix=fix", "the=", "parser=parser", "then=", "run=run", "tests=test"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Words = %q, want %q", got, want)
	}
	if q := QueryTerms("tests test the Tests"); !reflect.DeepEqual(q, []string{"test"}) {
		t.Errorf("QueryTerms = %q", q)
	}
}

func FuzzTerms(f *testing.F) {
	f.Add("hookSpecificOutput CLAUDE.md を最新 naïve_Über2x")
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range Words(s) {
			if w.Start < 0 || w.End > len(s) || w.Start >= w.End {
				t.Fatalf("bad offsets %d..%d in %q", w.Start, w.End, s)
			}
		}
		_ = Terms(s)
	})
}
