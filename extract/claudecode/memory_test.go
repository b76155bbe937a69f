package claudecode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

// Lines are read into blocks that no later read writes over
// (schema.NewKeptLineReader), and a record points into its line. What
// outlives the records must not: pos-extract --commit-state keeps every
// watermark until the run ends, and one that held a string of its file's
// last line kept that line's block (1 MB) alive. 40 sessions of 1.5 MB
// each fill blocks of their own: watermarks that held them would keep
// 40 MB or more.
func TestWatermarksKeepNoBlocks(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-p")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("x", 10<<10)
	const sessions = 40
	for i := range sessions {
		id := fmt.Sprintf("%08d-1111-4111-8111-111111111111", i)
		var b strings.Builder
		for j := range 150 {
			fmt.Fprintf(&b, `{"type":"user","sessionId":%q,"uuid":"u%d-%d","timestamp":"2026-01-01T00:%02d:%02dZ","cwd":"/p","slug":"slug-%d","message":{"role":"user","content":%q}}`+"\n",
				id, i, j, j/60, j%60, i, text)
		}
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	opt := extract.Options{Roots: []string{root}, State: watermark.NewState(), Stats: &extract.Stats{},
		User: "dev", Machine: "box", Now: func() time.Time { return extracttest.Now }}
	var marks []*schema.Checkpoint
	err := Adapter{}.Extract(context.Background(), opt, func(r *schema.Record) error {
		if r.Kind == schema.KindCheckpoint {
			marks = append(marks, r.Checkpoint)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != sessions {
		t.Fatalf("%d watermarks, want %d", len(marks), sessions)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc > 24<<20 {
		t.Fatalf("with the run's %d watermarks kept, %d MB of heap is live (want < 24 MB)", len(marks), ms.HeapAlloc>>20)
	}
	t.Logf("%d MB of heap live after the run", ms.HeapAlloc>>20)
	runtime.KeepAlive(marks)
}
