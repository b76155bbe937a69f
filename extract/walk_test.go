package extract

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// TestWalkLinks: a root that is a symbolic link to a directory is searched;
// a link to a directory below a root is not followed (it could loop), and
// a file there is found through one path only.
func TestWalkLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	for _, p := range []string{"a/s1.jsonl", "a/b/s2.jsonl", "s0.jsonl"} {
		p = filepath.Join(real, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := os.Symlink(real, filepath.Join(real, "a", "loop")); err != nil {
		t.Fatal(err)
	}
	files, err := Walk([]string{link}, func(p string, d fs.DirEntry) bool { return strings.HasSuffix(p, ".jsonl") })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		rel, _ := filepath.Rel(link, f.Path)
		got = append(got, filepath.ToSlash(rel))
	}
	slices.Sort(got)
	if want := []string{"a/b/s2.jsonl", "a/s1.jsonl", "s0.jsonl"}; !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
}

// TestWalkUnreadable: a directory the user may not read is passed over,
// and the rest of the tree is still found.
func TestWalkUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	dir := t.TempDir()
	for _, p := range []string{"ok/s1.jsonl", "shut/s2.jsonl"} {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	shut := filepath.Join(dir, "shut")
	if err := os.Chmod(shut, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(shut, 0o700)
	files, err := Walk([]string{dir}, func(p string, d fs.DirEntry) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || filepath.Base(files[0].Path) != "s1.jsonl" {
		t.Fatalf("found %v, want ok/s1.jsonl alone", files)
	}
}
