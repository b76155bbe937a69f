package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Write replaces a file whole, private to the user, and leaves no
// temporary file behind, whether it succeeds or fails.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	for _, want := range []string{"first\n", "second, longer\n", ""} {
		if err := Write(path, []byte(want)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("read %q, want %q", got, want)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("mode %v, want 0600", perm)
		}
	}
	// A directory in the way: the rename fails, the temporary file goes.
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "sub"), []byte("x")); err == nil {
		t.Error("Write over a non-empty directory succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "state.json" && e.Name() != "sub" {
			t.Errorf("left %s", e.Name())
		}
	}
}
