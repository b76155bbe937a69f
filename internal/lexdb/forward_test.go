package lexdb

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestFromEnglish: an English word is translated by the dictionaries from
// English, found as a headword, by its inflection's stem or by a stem
// itself; Mueller's senses come first, then FreeDict's, and examples (an
// English phrase, then its translation) are left out.
func TestFromEnglish(t *testing.T) {
	dir := t.TempDir()
	writeDict(t, filepath.Join(dir, "mueller7"), [][2]string{
		{"glyph", "glyph\n   [ɡlɪf] _n. 1) символ; 2) иконка\n"},
		{"measurement", "measurement\n   _n. 1) измерение; 2) размер\n"},
		{"measure", "measure\n   _v. измерять; to measure the room измерить комнату\n"},
		{"forbid", "forbid\n   _v. запрещать; to\nforbid smb. the country запретить кому-л. въезд в страну\n"},
	}, 32)
	writeDict(t, filepath.Join(dir, "freedict-eng-rus"), [][2]string{
		{"glyph", "glyph /ɡlɪf/\nглиф, пиктограмма\n"},
	}, 0)
	tr := New(dir)
	defer tr.Close()
	for _, c := range []struct {
		word string
		want []string
	}{
		{"glyph", []string{"символ", "глиф", "иконка", "пиктограмма"}},
		{"Glyphs", []string{"символ", "глиф", "иконка", "пиктограмма"}},
		// No headword "measurements": those of its stem, "measur"; the
		// headword itself first where it is one.
		{"measurements", []string{"измерять", "измерение", "размер"}},
		{"measurement", []string{"измерение", "размер", "измерять"}},
		{"measur", []string{"измерять", "измерение", "размер"}},
		{"forbid", []string{"запрещать"}},
		{"country", nil}, // only in an example
	} {
		if got := tr.FromEnglish("ru", c.word, 10); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.word, got, c.want)
		}
	}
	if got := tr.FromEnglish("ru", "glyph", 2); !slices.Equal(got, []string{"символ", "глиф"}) {
		t.Errorf("glyph, 2: %q", got)
	}
	if got := tr.FromEnglish("ja", "glyph", 10); got != nil {
		t.Errorf("no dictionary from English into Japanese, yet %q", got)
	}
	if got := New(filepath.Join(dir, "absent")).FromEnglish("ru", "glyph", 10); got != nil {
		t.Errorf("no dictionaries, yet %q", got)
	}
}

// FuzzFromEnglish: any definition and word give at most n translations,
// never a panic.
func FuzzFromEnglish(f *testing.F) {
	f.Add("glyph\n   _n. 1) символ; 2) иконка\n", "glyphs", 3)
	f.Add("measure\n   _v. измерять; to measure the room измерить комнату\n", "measur", 1)
	f.Fuzz(func(t *testing.T, def, word string, n int) {
		dir := t.TempDir()
		writeDict(t, filepath.Join(dir, "mueller7"), [][2]string{{"glyph", def}, {"measure", "measure\n_v. измерять\n"}}, 16)
		tr := New(dir)
		defer tr.Close()
		n = n % 8
		if got := tr.FromEnglish("ru", word, n); len(got) > max(n, 0) {
			t.Fatalf("%d translations, at most %d asked: %q", len(got), n, got)
		}
	})
}
