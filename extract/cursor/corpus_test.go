package cursor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/internal/watermark"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/normalize"
)

// checksums hashes every file under dir (databases and any -wal/-shm).
func checksums(t testing.TB, dir string) map[string][32]byte {
	t.Helper()
	sums := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sums[p] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// normalized runs the records through pos-normalize, in process.
func normalized(t testing.TB, in []byte) []*schema.Record {
	t.Helper()
	var out bytes.Buffer
	if _, err := normalize.Normalize(context.Background(), bytes.NewReader(in), &out, normalize.Options{Name: "cursor"}); err != nil {
		t.Fatal(err)
	}
	var recs []*schema.Record
	for r, err := range schema.NewDecoder(&out).All() {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

type counts struct{ raw, messages, metadataOnly, exchanges, sessions int }

func TestCorpus(t *testing.T) {
	dir := corpus.Platform(t, "cursor")
	before := checksums(t, dir)
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{dir}, State: watermark.NewState()})
	if len(res.Skips) != 0 {
		t.Fatalf("skipped records in the corpus: %v", res.Skips)
	}
	recs := normalized(t, extracttest.Encode(res.Recs))

	// Per database: every whitelisted row is a raw record; 2025 bubbles and
	// 2023 tab bubbles are messages; a prompt opens an exchange.
	want := map[string]counts{
		"aleksey/globalStorage/state.vscdb":                                     {raw: 129, messages: 118, exchanges: 23, sessions: 7},
		"aleksey/workspaceStorage/bc9b6b59a5b0d75e38f27496d537c990/state.vscdb": {raw: 1},
		"steve/workspaceStorage/55a37da034c5d8367c59348dbc1a176d/state.vscdb":   {raw: 1, messages: 40, exchanges: 20, sessions: 15},
	}
	got := map[string]counts{}
	dbOf := map[string]string{} // session -> database
	rel := func(p string) string {
		r, _ := filepath.Rel(dir, p)
		return filepath.ToSlash(r)
	}
	for _, r := range res.Recs {
		if r.Source != nil && r.Source.Path != "" && r.SessionID != "" {
			dbOf[r.SessionID] = rel(r.Source.Path)
		}
	}
	for _, r := range recs {
		var db string
		if r.Source != nil && r.Source.Path != "" {
			db = rel(r.Source.Path)
		} else {
			db = dbOf[r.SessionID]
		}
		if db == "" {
			continue // checkpoints
		}
		c := got[db]
		switch r.Kind {
		case schema.KindRaw:
			c.raw++
		case schema.KindMessage:
			c.messages++
			if r.Completeness == schema.CompleteMetadata {
				c.metadataOnly++
			}
		case schema.KindExchange:
			c.exchanges++
		case schema.KindSession:
			c.sessions++
		}
		got[db] = c
	}
	for db, w := range want {
		if got[db] != w {
			t.Errorf("%s: %+v, want %+v", db, got[db], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("records from %v", got)
	}

	// What the real data should give: titles, times from timingInfo, tools,
	// tokens, and models of 2023 answers.
	var exact, derived, tools, tokens, models int
	for _, r := range recs {
		if r.Kind != schema.KindMessage {
			continue
		}
		switch r.TSPrecision {
		case schema.PrecisionExact:
			exact++
		case schema.PrecisionDerived:
			derived++
		default:
			t.Errorf("message %s with ts_precision %s", r.ID, r.TSPrecision)
		}
		if len(r.Tools) > 0 {
			tools++
		}
		if r.Usage != nil {
			tokens++
		}
		if r.Model != "" {
			models++
		}
	}
	if exact != 23 || tools != 30 || tokens != 22 || models != 20 || derived != 158-23 {
		t.Errorf("exact %d, derived %d, tools %d, tokens %d, models %d", exact, derived, tools, tokens, models)
	}
	titles := map[string]string{}
	for _, r := range recs {
		if r.Kind == schema.KindSession {
			titles[r.SessionID] = r.Title
		}
	}
	if titles["6b4c3d09-b30f-4bf8-862f-39b6307657f7"] != "Создание SVG-спрайтов с context7" || titles["22b57e58-4764-45d1-8303-21d00aaa6ec5"] != "Sent to Chat" {
		t.Errorf("titles %v", titles)
	}

	// Reading never changed a byte of the corpus.
	after := checksums(t, dir)
	for p, s := range before {
		if after[p] != s {
			t.Errorf("%s changed while it was read", p)
		}
	}
	if len(after) != len(before) {
		t.Errorf("files appeared in the corpus: %d before, %d after", len(before), len(after))
	}
}

// TestCorpusIncremental reads the corpus twice with watermarks: the second
// run reads nothing.
func TestCorpusIncremental(t *testing.T) {
	dir := corpus.Platform(t, "cursor")
	first, st := extracttest.FirstRun(t, Adapter{}, extract.Options{Roots: []string{dir}}, 3)
	if st.Len() != 3 {
		t.Fatalf("%d watermarks", st.Len())
	}
	for _, r := range first.Recs {
		if r.Kind == schema.KindCheckpoint && !strings.HasSuffix(r.Checkpoint.Path, dbName) {
			t.Fatalf("checkpoint of %s", r.Checkpoint.Path)
		}
	}
}
