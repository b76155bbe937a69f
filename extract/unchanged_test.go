package extract

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

// UnchangedFile takes the walk's stat of a file and tells what Unchanged
// tells from a fresh one: the file as its watermark saw it is unchanged;
// grown, it is not; through a symlink followed (--follow-links), the
// target is what counts.
func TestUnchangedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(path, filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	mark := func(p string, follow bool) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		fp := watermark.Stat(fi)
		st := watermark.NewState()
		st.Put(&schema.Checkpoint{Platform: "p", Path: p, Size: fp.Size, Seen: fp.Size, Mtime: fp.Mtime, Inode: fp.Inode})
		opt := &Options{Platform: "p", State: st, FollowLinks: follow}
		match := Match{Name: func(q string) bool { return q == p }}
		files, err := opt.Walk(context.Background(), []string{dir}, match)
		if err != nil || len(files) != 1 {
			t.Fatalf("walk: %v %v", files, err)
		}
		if got, want := opt.UnchangedFile(files[0]), opt.Unchanged(p); !got || !want {
			t.Errorf("%s as marked: UnchangedFile %v, Unchanged %v; want both true", filepath.Base(p), got, want)
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("{\"a\":1}\n")
		f.Close()
		os.Chtimes(path, time.Now(), time.Now().Add(time.Second))
		files, _ = opt.Walk(context.Background(), []string{dir}, match)
		if opt.UnchangedFile(files[0]) || opt.Unchanged(p) {
			t.Errorf("%s grown: still unchanged", filepath.Base(p))
		}
	}
	mark(path, false)
	// The walk's stat of a symlink followed is the target's; it grew.
	mark(filepath.Join(dir, "link.jsonl"), true)
}
