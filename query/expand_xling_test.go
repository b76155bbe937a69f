package query_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
)

// writeGermanDict writes a small German-English dictionary in dictd's
// format (plain data file) into dir.
func writeGermanDict(t *testing.T, dir string) {
	t.Helper()
	defs := []struct{ hw, def string }{
		{"Kennwort", "Kennwort <neut, n, sg>\npassword <n>\n"},
		{"Regel", "Regel <fem, n, sg>\nrule <n>, policy <n>\n"},
		{"sicher", "sicher <adj>\nstrong, secure\n"},
	}
	var data, index bytes.Buffer
	for _, d := range defs {
		index.WriteString(d.hw + "\t" + dictNumber(data.Len()) + "\t" + dictNumber(len(d.def)) + "\n")
		data.WriteString(d.def)
	}
	for name, b := range map[string][]byte{"freedict-deu-eng.index": index.Bytes(), "freedict-deu-eng.dict": data.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
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
	lake := searchLake(t)
	c := schema.New(schema.KindChunk)
	c.ID, c.Platform, c.SessionID, c.ParentID = "chunk-ex-pw", "claude", "sess-pw", "ex-pw"
	c.TS = querytest.Now.Add(-time.Hour)
	c.ContentType, c.Text = schema.ContentExchange, "Signup now enforces a password policy: twelve characters, checked against breached lists."
	c.Chunk = &schema.Chunk{Model: embed.HashModel, Dim: embed.DefaultDim, Embedding: embed.NewHash(0).Vector(c.Text)}
	if _, err := load.Load(context.Background(), bytes.NewReader(append(schema.AppendRecord(nil, c), '\n')),
		load.Options{Lake: lake, Now: func() time.Time { return querytest.Now }, NoCatalog: true}); err != nil {
		t.Fatal(err)
	}
	db, err := query.Open(context.Background(), lake)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dir := t.TempDir()
	writeGermanDict(t, dir)
	old := query.DictDir
	t.Cleanup(func() { query.DictDir = old })
	const q = "Welche Regeln gelten für sichere Kennwörter?"
	query.DictDir = dir
	if ps := parents(search(t, db, query.SearchOptions{Query: q}).Hits); !slices.Contains(ps, "ex-pw") {
		t.Errorf("translated: the English exchange is not found: %v", ps)
	}
	if ps := parents(search(t, db, query.SearchOptions{Query: q, NoExpand: true}).Hits); slices.Contains(ps, "ex-pw") {
		t.Errorf("not expanded, yet found: %v", ps)
	}
	query.DictDir = filepath.Join(dir, "absent")
	if ps := parents(search(t, db, query.SearchOptions{Query: q}).Hits); slices.Contains(ps, "ex-pw") {
		t.Errorf("no dictionary, yet found: %v", ps)
	}
}
