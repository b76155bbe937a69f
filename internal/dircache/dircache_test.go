package dircache

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func names(t *testing.T, c *Cache, dir string) []string {
	t.Helper()
	ents, err := c.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// A directory is kept once it has been unchanged for Settle, used again
// while it stays so, and read again once an entry is added; Forget drops
// it; a nil Cache reads every time.
func TestCache(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), nil, 0o600)
	c := New(nil)
	if got := names(t, c, dir); !slices.Equal(got, []string{"a"}) || c.Kept(dir) {
		t.Fatalf("a fresh directory: %v, kept %v", got, c.Kept(dir))
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(dir, old, old)
	names(t, c, dir)
	if !c.Kept(dir) {
		t.Fatal("a directory unchanged for an hour was not kept")
	}
	os.WriteFile(filepath.Join(dir, "b"), nil, 0o600)
	if got := names(t, c, dir); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after an entry was added: %v", got)
	}
	os.Chtimes(dir, old, old)
	names(t, c, dir)
	c.Forget()
	if c.Kept(dir) {
		t.Fatal("Forget kept a directory")
	}
	var none *Cache
	if got := names(t, none, dir); !slices.Equal(got, []string{"a", "b"}) || none.Kept(dir) {
		t.Fatalf("a nil cache: %v", got)
	}
	if _, err := c.ReadDir(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("a missing directory: %v", err)
	}
}
