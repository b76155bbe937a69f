package lexical

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	v1 "github.com/pos-lake/pos/transform/embed/lexical/internal/v1"
)

// has reports whether every term of want is among got.
func hasAll(got []string, want string) []string {
	var missing []string
	for _, w := range strings.Fields(want) {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	return missing
}

// Names are indexed whole and by their parts; codes and versions whole.
func TestTermsCode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"hookSpecificOutput and HTTPServer", "hookspecificoutput hook specif output httpserver http server"},
		{"opentelemetry_api v2 utf8", "opentelemetry_api opentelemetri api v2 utf8 utf"},
		{"parse_error", "parse_error pars error"},
		{"spotter-gqc: did you push?", "spotter-gqc spotter gqc push"},
		{"use os.path.join here", "os.path.join os path join"},
		{"call pkg.ParseConfig()", "pkg.parseconfig pkg parseconfig pars config"},
		{"see src/query/search.go.", "src/query/search.go search.go src queri search go"},
		{"edit cmd/pos-query/main.go", "cmd/pos-query/main.go pos-query main.go cmd pos queri main"},
		{`C:\Users\dev\app.exe`, `c:\users\dev\app.exe app.exe user dev app exe`},
		{"std::io::Result", "std::io::result std io result"},
		{"error[E0308]: mismatched types", "e0308 0308 error mismatch type"},
		{"TS2345: Argument of type", "ts2345 ts 2345 argument type"},
		{"open: ENOENT, EACCES", "enoent eacces eacc open"},
		{"got HTTP 404 then http 500", "http 404 http404 500 http500"},
		{"bump to v1.2.3 on Python 3.11 and go1.26.8", "v1.2.3 v1 python 3.11 11 go1.26.8 go1 go 26"},
		{"on 2026-05-01", "2026-05-01 2026 05 01"},
		{"https://github.com/pos-lake/pos", "https://github.com/pos-lake/pos github.com pos-lake github com pos lake"},
	} {
		got := Terms(tc.in)
		if m := hasAll(got, tc.want); len(m) > 0 {
			t.Errorf("Terms(%q) = %q: no %q", tc.in, got, m)
		}
	}
	// Exact lists where the order and the absence of others matter.
	for _, tc := range []struct{ in, want string }{
		{"The cache is caching the queries", "cach cach queri"},
		{"CLAUDE.md を最新の状態に", "claude.md claude claud md を最 最新 新の の状 状態 態に"},
		{"a x 42 2026", "42 2026"},
		{"end. Next", "end next"},
		{"foo - bar", "foo bar"},
		{strings.Repeat("z", MaxWord+1) + " ok", "ok"},
	} {
		if got := strings.Join(Terms(tc.in), " "); got != tc.want {
			t.Errorf("Terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Words are stemmed with Snowball in the text's language, and its
// function words dropped.
func TestTermsLanguages(t *testing.T) {
	for _, tc := range []struct {
		lang     Lang
		in, want string
	}{
		{English, "The tests were running slowly", "test run slowli"},
		{German, "Wir haben die Tests repariert und sie laufen wieder schneller", "test repariert lauf schnell"},
		{French, "Nous avons corrigé les erreurs dans le fichier de configuration", "corrig erreur fichi configur"},
		{Spanish, "Hemos arreglado los errores de la configuración del servidor", "arregl error configur servidor"},
		{Italian, "Abbiamo corretto gli errori della configurazione del server", "corrett error configur server"},
		{Portuguese, "Nós corrigimos os erros da configuração do servidor", "corrig erros configur servidor"},
		{Dutch, "We hebben de fouten in de configuratie van de server opgelost", "fout configuratie server opgelost"},
		{Russian, "Мы исправили ошибки в конфигурации сервера", "исправ ошибк конфигурац сервер"},
	} {
		got := firstTerms(tc.in)
		if d := detectText(tc.in); d != tc.lang && tc.lang != Russian {
			t.Errorf("detect(%q) = %v, want %v", tc.in, d, tc.lang)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%v: Terms(%q) = %q, want %q", tc.lang, tc.in, got, tc.want)
		}
	}
	// Inflections of one word meet, in a text of their language.
	for _, tc := range [][3]string{
		{"", "ошибки", "ошибка"}, {"", "сервера", "серверы"}, {"der die das und ", "Fehlern", "Fehler"},
		{"les des une et ", "erreurs", "erreur"}, {"los las el y ", "servidores", "servidor"}, {"", "caching", "cache"},
	} {
		a, b := firstTerms(tc[0]+tc[1]), firstTerms(tc[0]+tc[2])
		if len(a) == 0 || !reflect.DeepEqual(a, b) {
			t.Errorf("%q and %q: %q and %q", tc[1], tc[2], a, b)
		}
	}
	// A word of a text in another language is also indexed by its
	// English stem, which a query of a few words is stemmed as.
	de := Terms("Wir haben die Fehler behoben")
	for _, q := range []string{"Fehler behoben", "fehler"} {
		if m := hasAll(de, strings.Join(Terms(q), " ")); len(m) > 0 {
			t.Errorf("%q not in %q: %q", q, de, m)
		}
	}
	if en := Terms("We fixed the errors"); !reflect.DeepEqual(en, []string{"fix", "error"}) {
		t.Errorf("English has only its stems: %q", en)
	}
}

// firstTerms are the first terms of the words of text: for a word, its stem
// in the text's language.
func firstTerms(text string) []string {
	var out []string
	for _, w := range Words(text) {
		if len(w.Terms) > 0 {
			out = append(out, w.Terms[0])
		}
	}
	return out
}

// A text of mixed languages: Cyrillic words Russian, names English, the
// Latin prose in its own language.
func TestTermsMixed(t *testing.T) {
	in := "Пустой спрайт означает, что команда svg-sprite не нашла ни одного SVG-файла; fix parseConfig in src/main.go"
	want := "пуст спрайт означа команд svg-sprite svg sprite нашл одн svg-файла svg файл fix parseconfig pars config src/main.go main.go src main go"
	if got := strings.Join(Terms(in), " "); got != want {
		t.Errorf("Terms(%q) =\n%q, want\n%q", in, got, want)
	}
	// German prose with code: the prose German, the code English.
	got := Terms("Wir haben die Funktion parseConfiguration in der Datei config.go geändert und die Tests laufen")
	if m := hasAll(got, "funktion parseconfiguration pars configur config.go config go geandert test lauf"); len(m) > 0 {
		t.Errorf("German with code: %q: no %q", got, m)
	}
}

func detectText(s string) Lang { return detect(tokens(s, nil)) }

func TestWords(t *testing.T) {
	text := "Fix the parser in query/search.go, then run tests."
	var got []string
	for _, w := range Words(text) {
		got = append(got, text[w.Start:w.End]+"="+strings.Join(w.Terms, "+"))
	}
	want := []string{"Fix=fix", "the=", "parser=parser", "in=", "query/search.go=query/search.go+search.go+queri+search+go",
		"then=", "run=run", "tests=test"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Words = %q, want %q", got, want)
	}
	if q := QueryTerms("tests test the Tests"); !reflect.DeepEqual(q, []string{"test"}) {
		t.Errorf("QueryTerms = %q", q)
	}
}

// Version 1 is what it was; version 2 is the current one; others are none.
func TestVersions(t *testing.T) {
	v1, err := For(1)
	if err != nil || v1.Version() != 1 {
		t.Fatal(v1, err)
	}
	if got := strings.Join(v1.Terms("see src/query/search.go and ENOENT"), " "); got != "see src queri search go enoent" {
		t.Errorf("v1: %q", got)
	}
	if v, err := For(Version); err != nil || v != Current {
		t.Error(v, err)
	}
	if _, err := For(Version + 1); err == nil || !strings.Contains(err.Error(), "not known") {
		t.Error(err)
	}
	if !reflect.DeepEqual(Current.Terms("os.path.join"), Terms("os.path.join")) {
		t.Error("Current is not the package's tokenizer")
	}
}

func TestParseQuery(t *testing.T) {
	q := ParseQuery(`"fix the parser" pars* (conf* x* "" "open`)
	if !reflect.DeepEqual(q.Prefixes, []string{"pars", "conf"}) {
		t.Errorf("prefixes %q", q.Prefixes)
	}
	if len(q.Phrases) != 1 || q.Phrases[0].Text != "fix the parser" || !reflect.DeepEqual(q.Phrases[0].Terms, []string{"fix", "parser"}) {
		t.Errorf("phrases %+v", q.Phrases)
	}
	if !reflect.DeepEqual(q.Terms, []string{"fix", "parser", "open"}) {
		t.Errorf("terms %q", q.Terms)
	}
	if !reflect.DeepEqual(q.Highlight(), []string{"fix", "parser", "open", "pars*", "conf*"}) {
		t.Errorf("highlight %q", q.Highlight())
	}
	if ParseQuery("x* *").Empty() != true || ParseQuery("pkg.Par*").Prefixes[0] != "pkg.par" {
		t.Error("prefixes of names")
	}
	for _, tc := range []struct {
		phrase, text string
		want         bool
	}{
		{"fix the parser", "We should Fix the parsers today", true},
		{"fix the parser", "fix a parser", false},
		{"fix the parser", "the parser fix", false},
		{"parser fix", "fix the parser", false},
		{"search.go", "edit query/search.go now", true},
		{"HTTP 404", "got an HTTP 404 back", true},
		{"HTTP 404", "HTTP 500, 404", false},
		{"тесты падают", "Теперь тесты падают снова", true},
		{"die Tests laufen", "und die Tests laufen wieder", true},
	} {
		q := ParseQuery(`"` + tc.phrase + `"`)
		if got := q.Match(tc.text); got != tc.want {
			t.Errorf("%q in %q: %v, want %v", tc.phrase, tc.text, got, tc.want)
		}
	}
	// Curly quotes, and two phrases: both wanted.
	q = ParseQuery("“row group” „flush”")
	if len(q.Phrases) != 2 || q.Match("the row group") || !q.Match("flush the row group") {
		t.Errorf("curly: %+v", q.Phrases)
	}
}

// FuzzTerms: any text gives words in order, within the text, each with
// terms of at most maxName bytes, the same with every tokenizer entry
// point; a query parses, and each of its phrases is in its own text.
func FuzzTerms(f *testing.F) {
	f.Add("hookSpecificOutput CLAUDE.md を最新 naïve_Über2x")
	f.Add("src/query/search.go:12: E0308 HTTP 404 v1.2.3 ../a//b::c\\d")
	f.Add(`"fix the parser" pars* Мы исправили ошибки`)
	seeds, _ := filepath.Glob("../../../testdata/*.ndjson")
	for _, s := range seeds[:min(len(seeds), 5)] {
		if b, err := os.ReadFile(s); err == nil && len(b) < 1<<16 {
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		prev := 0
		var all []string
		for _, w := range Words(s) {
			if w.Start < prev || w.End > len(s) || w.Start >= w.End {
				t.Fatalf("bad offsets %d..%d in %q", w.Start, w.End, s)
			}
			prev = w.End
			for _, term := range w.Terms {
				if term == "" || len(term) > maxName+MaxWord {
					t.Fatalf("term %q of %q", term, s[w.Start:w.End])
				}
			}
			all = append(all, w.Terms...)
		}
		if got := Terms(s); !reflect.DeepEqual(got, all) && len(got)+len(all) > 0 {
			t.Fatalf("Terms %q, Words' terms %q", got, all)
		}
		// The byte-level helpers agree with the rune-level ones they
		// stand in for.
		if got := string(appendLower(nil, s)); got != strings.ToLower(s) {
			t.Fatalf("appendLower(%q) = %q, want %q", s, got, strings.ToLower(s))
		}
		for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf || !v1.IsWordByte(byte(r)) }) {
			var got []string
			for _, p := range splitASCII(w, nil) {
				got = append(got, w[p[0]:p[1]])
			}
			if want := v1.SplitParts(w); !slices.Equal(got, want) {
				t.Fatalf("splitASCII(%q) = %q, v1.SplitParts %q", w, got, want)
			}
		}
		q := ParseQuery(s)
		_ = q.Match(s)
		for _, p := range q.Phrases {
			if !p.In(p.Text) {
				t.Fatalf("phrase %q is not in itself", p.Text)
			}
		}
	})
}
