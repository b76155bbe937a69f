package query_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
)

// TestContextSmartEnrichment checks what the smart pack carries beyond
// prompts: the decisions enrichment found, the files the tools changed and
// read, and the assistant's replies; and that with Until none of them
// comes from later. The session is the continuity check's fixture: prompt
// 1 at 10:00 (Edit load/cache.go, a "Let's use" decision, reply ends
// 10:00:10), prompt 2 at 10:01 (Write load/cache_test.go, Read
// load/loader.go, a "decided to" decision at 10:01:20), a compaction at
// 10:02, prompt 3 at 10:03.
func TestContextSmartEnrichment(t *testing.T) {
	ctx := context.Background()
	lake := filepath.Join(t.TempDir(), "lake")
	if err := querytest.Build(ctx, filepath.Join("eval", "continuity", "testdata", "claude"), lake); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, lake)
	ref := resolve(t, db, "33333333")
	pack := func(until time.Time) map[string][]string {
		p, err := db.Context(ctx, query.ContextOptions{Sessions: []query.SessionRef{ref}, Mode: query.ModeSmart, MaxTokens: 2000, Until: until, Now: querytest.Now})
		if err != nil {
			t.Fatal(err)
		}
		checkPack(t, p)
		got := map[string][]string{}
		for _, it := range p.Sessions[0].Items {
			if !it.Included {
				t.Errorf("%s left out of a 2,000-token pack of a small session", it.Kind)
			}
			got[it.Kind] = append(got[it.Kind], it.Text)
		}
		return got
	}
	all := pack(time.Time{})
	want := map[string]string{
		// Each with the sentence after it in its message: what was done.
		"decisions": "- (0.95) Let's use an LRU cache instead of a plain map because memory must stay bounded.\n  then: The loader now keeps at most 1024 entries.\n" +
			"- (0.90) We decided to evict on insert, not on a timer, so the loader stays single-threaded.\n  then: All tests pass.\n",
		"files_changed": "- /home/dev/proj/load/cache.go (edit)\n- /home/dev/proj/load/cache_test.go (write)\n",
		"files_read":    "- /home/dev/proj/load/loader.go\n",
	}
	for kind, text := range want {
		if len(all[kind]) != 1 || all[kind][0] != text {
			t.Errorf("%s: %q, want %q", kind, all[kind], text)
		}
	}
	if r := all["reply"]; len(r) != 3 || !strings.Contains(r[0], "docs/CACHE.md") || !strings.Contains(r[2], "LRU cache") {
		t.Errorf("replies (newest first) %q", r)
	}
	early := pack(time.Date(2026, 3, 5, 10, 1, 0, 0, time.UTC)) // before prompt 2
	if d := early["decisions"]; len(d) != 1 || strings.Contains(d[0], "evict") {
		t.Errorf("decisions until 10:01: %q", d)
	}
	if f := early["files_changed"]; len(f) != 1 || f[0] != "- /home/dev/proj/load/cache.go (edit)\n" {
		t.Errorf("files changed until 10:01: %q", f)
	}
	if f := early["files_read"]; f != nil {
		t.Errorf("files read until 10:01: %q", f)
	}
	if r := early["reply"]; len(r) != 1 || !strings.Contains(r[0], "LRU cache") {
		t.Errorf("replies until 10:01: %q", r)
	}
}
