// Package testfs builds the file trees that tests run on.
package testfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// WriteFile writes data to the file at path, creating the directories it
// is in, and fails t on any error.
func WriteFile[T string | []byte](t testing.TB, path string, data T) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CopyTree copies the tree src to dst (directories 0755, files 0644) and
// returns the paths of the copied files, sorted, for callers that set
// their modification times.
func CopyTree(src, dst string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, out)
		return os.WriteFile(out, b, 0o644)
	})
	slices.Sort(files)
	return files, err
}
