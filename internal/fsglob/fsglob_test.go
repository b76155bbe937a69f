package fsglob

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Each directory's files are found by a glob under its quoted name, and
// no file of a directory whose name the unquoted pattern would match.
func TestQuoteFindsOnlyTheNamedDirectory(t *testing.T) {
	root := t.TempDir()
	names := []string{`a[1]b`, `a1b`, `a*b`, `axb`, `a?b`, `a\b`, `a]b`, `a[b`, `x`}
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(root, n), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, n, "f.parquet"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names {
		dir := filepath.Join(root, n)
		got, err := filepath.Glob(filepath.Join(Quote(dir), "*.parquet"))
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if want := []string{filepath.Join(dir, "f.parquet")}; !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", n, got, want)
		}
	}
}
