package query

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeWordNet writes a small database in WordNet's format: a data file
// whose synsets are found by their byte offsets, a sorted index with the
// license lines at its top, and an exception list.
func writeWordNet(t testing.TB, dir string, synsets [][]string) {
	t.Helper()
	var data strings.Builder
	data.WriteString("  1 This software and database is being provided\n  2 under the WordNet license.\n")
	index := map[string][]int{}
	for _, ss := range synsets {
		off := data.Len()
		fmt.Fprintf(&data, "%08d 06 n %02x", off, len(ss))
		for _, w := range ss {
			fmt.Fprintf(&data, " %s 0", w)
			index[strings.ToLower(w)] = append(index[strings.ToLower(w)], off)
		}
		data.WriteString(" 000 | a gloss\n")
	}
	var idx strings.Builder
	idx.WriteString("  1 This software and database is being provided\n  2 under the WordNet license.\n")
	keys := make([]string, 0, len(index))
	for k := range index {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&idx, "%s n %d 1 @ %d 0", k, len(index[k]), len(index[k]))
		for _, o := range index[k] {
			fmt.Fprintf(&idx, " %08d", o)
		}
		idx.WriteString("  \n")
	}
	for name, text := range map[string]string{"data.noun": data.String(), "index.noun": idx.String(), "noun.exc": "mice mouse\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func withWordNet(t *testing.T, dir string) {
	old := WordNetDir
	WordNetDir = dir
	t.Cleanup(func() { WordNetDir = old })
}

func TestSynonymTerms(t *testing.T) {
	dir := t.TempDir()
	writeWordNet(t, dir, [][]string{
		{"car", "auto", "automobile", "motorcar"},
		{"mouse", "computer_mouse"},
		{"mouse", "rodent_species"},
		{"mouse", "third_sense"},
		{"crash", "wreck"},
		{"zebra", "striped_horse"},
	})
	withWordNet(t, dir)
	for _, c := range []struct {
		q    string
		own  []string
		want []string
	}{
		{"cars crash", []string{"car", "crash"}, []string{"auto", "automobil", "motorcar", "wreck"}},
		{"the mice", []string{"mice"}, []string{"mous", "comput", "rodent", "speci"}}, // two senses only
		{"Zebra!", []string{"zebra"}, []string{"stripe", "hors"}},
		{"nothing here", []string{"noth"}, nil},
		{"привет мир", nil, nil},
	} {
		if got := synonymTerms(c.q, c.own); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.q, got, c.want)
		}
	}
	// No database: no synonyms, no error.
	withWordNet(t, filepath.Join(dir, "absent"))
	if got := synonymTerms("cars crash", nil); got != nil {
		t.Errorf("no database: %q", got)
	}
}

// TestSynonymsInstalled checks the system's WordNet where it is installed
// (Debian: wordnet-base).
func TestSynonymsInstalled(t *testing.T) {
	if _, err := os.Stat(filepath.Join(WordNetDir, "index.noun")); err != nil {
		t.Skip("no WordNet database at", WordNetDir)
	}
	got := synonymTerms("automobile", nil)
	if !slices.Contains(got, "car") {
		t.Errorf("automobile: %q", got)
	}
}

func FuzzSearchSorted(f *testing.F) {
	f.Add("a 1\nb 2\n\nc 3\n", "b")
	f.Add("  license\n\nabc x\nabd y\n", "abd")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, text, key string) {
		if strings.ContainsAny(key, " \n") || key == "" {
			return
		}
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		line := searchSorted(file, key)
		if line != nil && strings.Fields(string(line) + " ")[0] != key {
			t.Fatalf("%q: found %q", key, line)
		}
	})
}

// A word's synonyms are read from the files once per database: asked
// again, the same, even once the files are gone; a caller's changes to
// them are its own.
func TestSynonymsKept(t *testing.T) {
	dir := t.TempDir()
	writeWordNet(t, dir, [][]string{{"car", "auto", "automobile"}})
	withWordNet(t, dir)
	wn := openWordNet()
	first := wn.synonyms("cars")
	if !slices.Contains(first, "auto") {
		t.Fatalf("synonyms of cars: %q", first)
	}
	first[0] = "changed"
	for _, f := range wn.data {
		f.Close() // a second read from the files would find nothing
	}
	if again := wn.synonyms("cars"); !slices.Contains(again, "auto") || slices.Contains(again, "changed") {
		t.Fatalf("asked again: %q", again)
	}
	withWordNet(t, filepath.Join(dir, "absent")) // the next test opens its own
	openWordNet()
}
