package extract

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWalkOrder: Walk finds every matching file under its roots once (a
// root inside another, a root that is a file), stats them in parallel,
// and returns them oldest first, then by path.
func TestWalkOrder(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 700 // enough for every stat worker
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("p%d", i%7))
		if err := os.MkdirAll(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{".jsonl", ".txt"} {
			p := filepath.Join(sub, fmt.Sprintf("s%03d%s", i, ext))
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			// Newer as i falls, two files to a second: ties go by path.
			mt := base.Add(time.Duration((n-i)/2) * time.Second)
			if err := os.Chtimes(p, mt, mt); err != nil {
				t.Fatal(err)
			}
		}
	}
	file := filepath.Join(dir, "p3", "s003.jsonl")
	files, err := Walk([]string{dir, filepath.Join(dir, "p1"), file, filepath.Join(dir, "absent")},
		func(p string, _ fs.DirEntry) bool { return strings.HasSuffix(p, ".jsonl") })
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != n {
		t.Fatalf("%d files, want %d", len(files), n)
	}
	for i := 1; i < len(files); i++ {
		a, b := files[i-1], files[i]
		if c := a.Info.ModTime().Compare(b.Info.ModTime()); c > 0 || c == 0 && a.Path >= b.Path {
			t.Fatalf("out of order at %d: %s (%v) before %s (%v)", i, a.Path, a.Info.ModTime(), b.Path, b.Info.ModTime())
		}
		if b.Info == nil || b.Info.Name() != filepath.Base(b.Path) {
			t.Fatalf("%s: info %v", b.Path, b.Info)
		}
	}
}
