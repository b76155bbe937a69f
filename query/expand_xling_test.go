package query_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pos-lake/pos/query"
)

// writeGermanDict writes a small German-English dictionary in dictd's
// format (plain data file) into dir.
func writeGermanDict(t *testing.T, dir string) {
	writeDict(t, dir, "freedict-deu-eng", []dictEntry{
		{"Kennwort", "Kennwort <neut, n, sg>\npassword <n>\n"},
		{"Regel", "Regel <fem, n, sg>\nrule <n>, policy <n>\n"},
		{"sicher", "sicher <adj>\nstrong, secure\n"},
	})
}

// withDict writes a dictionary with write into a new directory and points
// query.DictDir at it until the test ends; it returns the directory.
func withDict(t *testing.T, write func(*testing.T, string)) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir)
	old := query.DictDir
	t.Cleanup(func() { query.DictDir = old })
	query.DictDir = dir
	return dir
}

// dictEntry is a headword and its definition as a dictionary file holds it.
type dictEntry struct{ hw, def string }

// writeDict writes defs into dir as the dictionary name in dictd's layout:
// name.dict holds the definitions, name.index each headword with its
// definition's offset and length.
func writeDict(t *testing.T, dir, name string, defs []dictEntry) {
	t.Helper()
	var data, index bytes.Buffer
	for _, d := range defs {
		index.WriteString(d.hw + "\t" + dictNumber(data.Len()) + "\t" + dictNumber(len(d.def)) + "\n")
		data.WriteString(d.def)
	}
	for file, b := range map[string][]byte{name + ".index": index.Bytes(), name + ".dict": data.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dictNumber writes n in dictd's base64 digits (two suffice here).
func dictNumber(n int) string {
	const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	return string([]byte{digits[n/64], digits[n%64]})
}

// TestSearchTranslation: a question in German finds the English exchange
// that answers it through the dictionary's translations of its words; with
// NoExpand, or without the dictionary, it does not.
func TestSearchTranslation(t *testing.T) {
	const q = "Welche Regeln gelten für sichere Kennwörter?"
	checkTranslationFinds(t, writeGermanDict, q, "ex-pw",
		"Signup now enforces a password policy: twelve characters, checked against breached lists.",
		map[string]query.SearchOptions{"not expanded": {Query: q, NoExpand: true}})
}

// checkTranslationFinds checks that the question q finds the exchange
// parent, which holds text, in a lake through the dictionary write writes;
// and that it does not with any search of without, nor once the dictionary
// is gone.
func checkTranslationFinds(t *testing.T, write func(*testing.T, string), q, parent, text string, without map[string]query.SearchOptions) {
	t.Helper()
	lake := searchLake(t)
	loadChunks(t, lake, map[string]string{parent: text})
	db := openDB(t, lake)
	dir := withDict(t, write)
	if ps := parents(search(t, db, query.SearchOptions{Query: q}).Hits); !slices.Contains(ps, parent) {
		t.Errorf("translated: %s is not found: %v", parent, ps)
	}
	for name, opt := range without {
		if ps := parents(search(t, db, opt).Hits); slices.Contains(ps, parent) {
			t.Errorf("%s, yet found: %v", name, ps)
		}
	}
	query.DictDir = filepath.Join(dir, "absent")
	if ps := parents(search(t, db, query.SearchOptions{Query: q}).Hits); slices.Contains(ps, parent) {
		t.Errorf("no dictionary, yet found: %v", ps)
	}
}
