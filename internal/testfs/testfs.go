// Package testfs builds the file trees that tests run on.
package testfs

import (
	"os"
	"path/filepath"
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
