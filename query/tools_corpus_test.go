package query_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	aider "github.com/pos-lake/pos/extract/aider/about"
	_ "github.com/pos-lake/pos/extract/all"
	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	cline "github.com/pos-lake/pos/extract/cline/about"
	codex "github.com/pos-lake/pos/extract/codex/about"
	cursor "github.com/pos-lake/pos/extract/cursor/about"
	gemini "github.com/pos-lake/pos/extract/gemini/about"
	push "github.com/pos-lake/pos/extract/push/about"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
	"github.com/pos-lake/pos/transform/scrub"
)

// TestCorpusToolErrors runs the real pipeline (every adapter, normalize,
// scrub, embed, load) over the real corpus of every platform and searches
// for error texts that the corpus holds only in a tool's result: each is
// found as a chunk of that result (tool_error), in its session, in the
// exchange the tool ran in, named after its tool, with the lines that
// match.
// embeddedCorpusLake builds a lake of every platform's sessions in the
// corpus, scrubbed and embedded with the default provider, as the
// pipeline does, and returns it with the normalized stream (before
// scrubbing); the test skips when the corpus is absent.
func embeddedCorpusLake(t *testing.T) (string, []byte) {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "corpus")
	if d := os.Getenv("POS_CORPUS"); d != "" {
		dir = d
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s is absent: the real-corpus tests need it (set POS_CORPUS)", dir)
	}
	dir, _ = filepath.Abs(dir)
	ctx := context.Background()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	var extracted bytes.Buffer
	enc := schema.NewEncoder(&extracted)
	for _, p := range [][2]string{{"claude", claudecode.Name}, {"codex", codex.Name},
		{"gemini", gemini.Name}, {"cline", cline.Name}, {"cursor", cursor.Name},
		{"aider", aider.Name}, {"push", push.Name}} {
		root := filepath.Join(dir, p[0])
		if _, err := os.Stat(root); err != nil {
			continue
		}
		a, _ := extract.Lookup(p[1])
		opt := extract.Options{Roots: []string{root}, User: "dev", Machine: "box", Now: func() time.Time { return now },
			Platform: p[1], OnSkip: func(*schema.BadInput) error { return nil }, OnWarn: func(*schema.BadInput) error { return nil }}
		if err := a.Extract(ctx, opt, enc.Encode); err != nil {
			t.Fatalf("%s: %v", p[0], err)
		}
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	var normalized, scrubbed, embedded bytes.Buffer
	if _, err := normalize.Normalize(ctx, &extracted, &normalized, normalize.Options{Enrich: enrich.All}); err != nil {
		t.Fatal(err)
	}
	stream := normalized.Bytes()
	if _, err := scrub.Scrub(ctx, bytes.NewReader(stream), &scrubbed, scrub.Options{Key: []byte("tool corpus key of 32 bytes or more")}); err != nil {
		t.Fatal(err)
	}
	provider, err := embed.NewProvider(embed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := embed.Embed(ctx, &scrubbed, &embedded, embed.Options{Provider: provider}); err != nil {
		t.Fatal(err)
	}
	lake := filepath.Join(t.TempDir(), "lake")
	if _, err := load.Load(ctx, &embedded, load.Options{Lake: lake, Now: func() time.Time { return now }, RequireScrubbed: true}); err != nil {
		t.Fatal(err)
	}
	return lake, stream
}

func TestCorpusToolErrors(t *testing.T) {
	lake, stream := embeddedCorpusLake(t)
	ctx := context.Background()
	db := openDB(t, lake)

	for _, c := range []struct {
		platform, text, tool string
		query                string // in the user's words: part of the error
	}{
		{claudecode.Name, "error TS2339: Property 'rateLimit' does not exist", "Bash", "TS2339 rateLimit does not exist on type Request"},
		{claudecode.Name, "has no upstream branch", "Bash", "current branch has no upstream branch"},
		{claudecode.Name, "String to replace not found in file", "Edit", "string to replace not found in file"},
		{cursor.Name, "bash: pm: command not found", "run_terminal_cmd", "pm: command not found"},
		{cline.Name, "was not executed because a tool has already been used in this message", "read_file",
			"tool was not executed because a tool has already been used in this message"},
	} {
		t.Run(c.tool+" "+c.text, func(t *testing.T) {
			// Where the corpus holds the text: in tool results only.
			type result struct {
				session string
				ts      time.Time
			}
			var results []result // the tool results that hold it
			for rec, err := range schema.NewDecoder(bytes.NewReader(stream)).All() {
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(rec.Text, c.text) || rec.Exchange != nil && strings.Contains(rec.Exchange.Response+rec.Exchange.Prompt, c.text) {
					t.Fatalf("%s %s holds %q outside a tool's result: the case tests nothing", rec.Kind, rec.ID, c.text)
				}
				for _, tl := range rec.Tools {
					if rec.Platform == c.platform && strings.Contains(tl.Output, c.text) {
						results = append(results, result{rec.SessionID, rec.TS})
					}
				}
			}
			if len(results) == 0 {
				t.Fatalf("no %s tool result holds %q", c.platform, c.text)
			}
			// The exchanges those results ran in, from the exchanges
			// pos-normalize made: of their session, begun before the
			// result and ended after it.
			exchanges := map[string]bool{}
			for _, r := range results {
				tab, err := db.SQL(ctx, `SELECT id FROM exchanges WHERE platform = ? AND session_id = ? AND ts <= ? AND ts_end >= ?`,
					c.platform, r.session, r.ts, r.ts)
				if err != nil {
					t.Fatal(err)
				}
				for _, row := range tab.Rows {
					exchanges[row[0].(string)] = true
				}
			}
			if len(exchanges) == 0 {
				t.Fatalf("no exchange holds the results %v", results)
			}
			for _, mode := range []string{query.SearchHybrid, query.SearchLexical} {
				res, err := db.Search(ctx, query.SearchOptions{Query: c.query, Mode: mode, K: 10, Embed: hashEmbedder})
				if err != nil {
					t.Fatal(err)
				}
				var hit *query.SearchHit
				for i, h := range res.Hits {
					if exchanges[h.ExchangeID] && h.ContentType == schema.ContentToolError {
						hit = &res.Hits[i]
						break
					}
				}
				if hit == nil {
					t.Fatalf("%s: no tool_error hit of exchanges %v among %d hits", mode, keys(exchanges), len(res.Hits))
				}
				if hit.Tool != c.tool {
					t.Errorf("%s: the hit's tool is %q, want %q", mode, hit.Tool, c.tool)
				}
				if len(hit.Lines) == 0 {
					t.Errorf("%s: the hit shows no matching line", mode)
				}
				if mode == query.SearchLexical && !slicesContainFunc(hit.Lines, func(l string) bool { return strings.Contains(l, lastWords(c.text)) }) {
					t.Errorf("%s: the hit's lines %q lack %q", mode, hit.Lines, c.text)
				}
				// --type tool_error finds it too; --type tool_output does not.
				only, err := db.Search(ctx, query.SearchOptions{Query: c.query, Mode: mode, K: 10, Embed: hashEmbedder,
					Types: []string{schema.ContentToolError}})
				if err != nil {
					t.Fatal(err)
				}
				if len(only.Hits) == 0 || only.Hits[0].ContentType != schema.ContentToolError {
					t.Errorf("%s --type tool_error: %d hits", mode, len(only.Hits))
				}
				for _, h := range only.Hits {
					if h.ContentType != schema.ContentToolError {
						t.Errorf("%s --type tool_error gave a %s hit", mode, h.ContentType)
					}
				}
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func slicesContainFunc(s []string, f func(string) bool) bool {
	for _, x := range s {
		if f(x) {
			return true
		}
	}
	return false
}

// lastWords is the end of a text, which a line cut around its first match
// still holds.
func lastWords(s string) string {
	f := strings.Fields(s)
	return strings.Join(f[max(0, len(f)-3):], " ")
}
