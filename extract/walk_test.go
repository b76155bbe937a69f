package extract

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/testfs"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

// jsonl matches by name the .jsonl files, as most adapters do.
var jsonl = Match{Name: func(p string) bool { return strings.HasSuffix(p, ".jsonl") }}

// reports collects what a walk or a read reports as skipped.
type reports struct {
	mu   sync.Mutex
	list []string
}

func (r *reports) skip(b *schema.BadInput) error {
	r.mu.Lock()
	r.list = append(r.list, b.Error())
	r.mu.Unlock()
	return nil
}

// rel returns the paths of files relative to dir, sorted.
func rel(dir string, files []SourceFile) []string {
	var got []string
	for _, f := range files {
		r, _ := filepath.Rel(dir, f.Path)
		got = append(got, filepath.ToSlash(r))
	}
	slices.Sort(got)
	return got
}

// walkSoon runs a walk and fails the test if it does not end within a few
// seconds: a named pipe opened for reading blocks until a writer comes.
func walkSoon(t *testing.T, opt *Options, roots []string, m Match) ([]SourceFile, error) {
	t.Helper()
	type result struct {
		files []SourceFile
		err   error
	}
	done := make(chan result, 1)
	go func() {
		f, err := opt.Walk(context.Background(), roots, m)
		done <- result{f, err}
	}()
	select {
	case r := <-done:
		return r.files, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("the walk is blocked")
		return nil, nil
	}
}

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
	files, err := (&Options{}).Walk(context.Background(), []string{dir, filepath.Join(dir, "p1"), file, filepath.Join(dir, "absent")}, jsonl)
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
// a file there is found through one path only. A link below the root named
// like the files sought is named as skipped, not read; a root that is a
// link to a file is read.
func TestWalkLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	for _, p := range []string{"a/s1.jsonl", "a/b/s2.jsonl", "s0.jsonl"} {
		testfs.WriteFile(t, filepath.Join(real, p), "{}\n")
	}
	testfs.WriteFile(t, filepath.Join(dir, "outside", "secret.jsonl"), "{\"secret\":1}\n")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	for old, new := range map[string]string{
		real: filepath.Join(real, "a", "loop"),
		filepath.Join(dir, "outside", "secret.jsonl"): filepath.Join(real, "a", "s9.jsonl"),
		filepath.Join(dir, "outside"):                 filepath.Join(real, "out.jsonl"),
	} {
		if err := os.Symlink(old, new); err != nil {
			t.Fatal(err)
		}
	}
	var rep reports
	opt := &Options{OnSkip: rep.skip}
	files, err := opt.Walk(context.Background(), []string{link}, jsonl)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rel(link, files), []string{"a/b/s2.jsonl", "a/s1.jsonl", "s0.jsonl"}; !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
	want := []string{
		filepath.Join(link, "a", "s9.jsonl") + ": symbolic link, not followed",
		filepath.Join(link, "out.jsonl") + ": symbolic link, not followed",
	}
	if !slices.Equal(rep.list, want) {
		t.Fatalf("reported %q, want %q", rep.list, want)
	}

	// A root that is a link to a file: the user named it.
	fileLink := filepath.Join(dir, "named.jsonl")
	if err := os.Symlink(filepath.Join(real, "s0.jsonl"), fileLink); err != nil {
		t.Fatal(err)
	}
	files, err = opt.Walk(context.Background(), []string{fileLink}, jsonl)
	if err != nil || len(files) != 1 {
		t.Fatalf("root link to a file: %v %v", files, err)
	}
	src, err := opt.OpenSource(files[0].Path)
	if err != nil || src == nil {
		t.Fatalf("root link to a file: open %v %v", src, err)
	}
	src.File.Close()
}

// TestWalkFollowLinks: with FollowLinks, a link to a file is read, a link
// to a directory searched unless it loops back above itself, a file
// reached through several paths is found once, and links that lead nowhere
// are named with the reason.
func TestWalkFollowLinks(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	testfs.WriteFile(t, filepath.Join(root, "a", "s1.jsonl"), "{}\n")
	testfs.WriteFile(t, filepath.Join(dir, "outside", "o1.jsonl"), "{}\n")
	for old, new := range map[string]string{
		root:                          filepath.Join(root, "a", "up"), // loops
		filepath.Join(dir, "outside"): filepath.Join(root, "out"),     // searched
		filepath.Join(dir, "outside", "o1.jsonl"): filepath.Join(root, "o1-again.jsonl"), // o1 twice
		filepath.Join(root, "self.jsonl"):         filepath.Join(root, "self.jsonl"),     // a loop
		filepath.Join(dir, "absent"):              filepath.Join(root, "gone.jsonl"),     // nothing
	} {
		if err := os.Symlink(old, new); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	var rep reports
	opt := &Options{OnSkip: rep.skip, FollowLinks: true}
	files, err := walkSoon(t, opt, []string{root}, jsonl)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rel(root, files), []string{"a/s1.jsonl", "o1-again.jsonl"}; !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
	want := []string{
		filepath.Join(root, "gone.jsonl") + ": symbolic link to nothing",
		filepath.Join(root, "self.jsonl") + ": too many levels of symbolic links",
	}
	if !slices.Equal(rep.list, want) {
		t.Fatalf("reported %q, want %q", rep.list, want)
	}
}

// TestWalkDamaged: one bad entry never hides the others. A symbolic-link
// loop, a directory, a named pipe, a socket and (as root) a device named
// like the files sought are each named once with the reason, in path
// order, and never opened; the regular files around them are all found.
// An entry of another name is no concern of the adapter's. Under --strict
// the first report ends the walk.
func TestWalkDamaged(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.jsonl", "m.jsonl", "z.jsonl", "dir.jsonl/inner.jsonl"} {
		testfs.WriteFile(t, filepath.Join(dir, p), "{}\n")
	}
	if err := os.Symlink("loop.jsonl", filepath.Join(dir, "loop.jsonl")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	for _, name := range []string{"fifo.jsonl", "other.fifo"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Skip("no named pipes here:", err)
		}
	}
	// A socket's path is short (108 bytes): listen from within dir.
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", "sock.jsonl")
	os.Chdir(wd)
	if err != nil {
		t.Skip("no unix sockets here:", err)
	}
	defer l.Close()
	want := []string{
		filepath.Join(dir, "dir.jsonl") + ": is a directory, not a file",
		filepath.Join(dir, "fifo.jsonl") + ": not a regular file (named pipe)",
		filepath.Join(dir, "loop.jsonl") + ": symbolic link, not followed",
		filepath.Join(dir, "sock.jsonl") + ": not a regular file (socket)",
	}
	if os.Geteuid() == 0 {
		if err := syscall.Mknod(filepath.Join(dir, "null.jsonl"), syscall.S_IFCHR|0o600, 1<<8|3); err == nil {
			want = append(want, filepath.Join(dir, "null.jsonl")+": not a regular file (character device)")
		}
	}
	slices.Sort(want)
	var rep reports
	opt := &Options{OnSkip: rep.skip}
	files, err := walkSoon(t, opt, []string{dir}, jsonl)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rel(dir, files), []string{"a.jsonl", "dir.jsonl/inner.jsonl", "m.jsonl", "z.jsonl"}; !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
	if !slices.Equal(rep.list, want) {
		t.Fatalf("reported\n%q\nwant\n%q", rep.list, want)
	}

	// A content check never opens what is not a regular file.
	var probed sync.Map
	m := Match{Name: jsonl.Name, Content: func(p string) (bool, error) {
		probed.Store(p, true)
		b, err := opt.FirstLine(p)
		return b != nil, err
	}}
	rep.list = nil
	if files, err = walkSoon(t, opt, []string{dir}, m); err != nil || len(files) != 4 {
		t.Fatalf("with a content check: %v %v", files, err)
	}
	probed.Range(func(k, _ any) bool {
		if base := filepath.Base(k.(string)); base != "a.jsonl" && base != "m.jsonl" && base != "z.jsonl" && base != "inner.jsonl" {
			t.Errorf("probed %s", k)
		}
		return true
	})

	// --strict: the first report is the walk's error.
	strict := &Options{OnSkip: func(b *schema.BadInput) error { return b }}
	_, err = walkSoon(t, strict, []string{dir}, jsonl)
	var bad *schema.BadInput
	if !errors.As(err, &bad) || bad.Error() != want[0] {
		t.Fatalf("strict: %v, want %s", err, want[0])
	}
}

// TestWalkUnreadable: a directory the user may not read is named as
// skipped, and the rest of the tree is still found.
func TestWalkUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory: chmod 000 denies nothing")
	}
	dir := t.TempDir()
	for _, p := range []string{"ok/s1.jsonl", "shut/s2.jsonl"} {
		testfs.WriteFile(t, filepath.Join(dir, p), "")
	}
	shut := filepath.Join(dir, "shut")
	if err := os.Chmod(shut, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(shut, 0o700)
	var rep reports
	files, err := (&Options{OnSkip: rep.skip}).Walk(context.Background(), []string{dir}, Match{Name: func(string) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || filepath.Base(files[0].Path) != "s1.jsonl" {
		t.Fatalf("found %v, want ok/s1.jsonl alone", files)
	}
	if want := []string{shut + ": permission denied"}; !slices.Equal(rep.list, want) {
		t.Fatalf("reported %q, want %q", rep.list, want)
	}
}

// TestWalkCancelled: a cancelled walk ends with the context's error.
func TestWalkCancelled(t *testing.T) {
	dir := t.TempDir()
	testfs.WriteFile(t, filepath.Join(dir, "a", "s.jsonl"), "{}\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&Options{}).Walk(ctx, []string{dir}, jsonl); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// TestOpenSourceReplaced: a file the walk found that is then removed, or
// replaced by a directory, a named pipe or a symbolic link, is named as
// skipped when it is opened, never blocks, and ends nothing.
func TestOpenSourceReplaced(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	testfs.WriteFile(t, outside, "root:x:0:0\n")
	cases := map[string]struct {
		replace func(p string) error
		why     string
	}{
		"gone.jsonl": {func(p string) error { return nil }, "removed during the run"},
		"dir.jsonl":  {func(p string) error { return os.Mkdir(p, 0o700) }, "is a directory, not a file"},
		"fifo.jsonl": {func(p string) error { return syscall.Mkfifo(p, 0o600) }, "not a regular file (named pipe)"},
		"link.jsonl": {func(p string) error { return os.Symlink(outside, p) }, "symbolic link, not followed"},
	}
	for name := range cases {
		testfs.WriteFile(t, filepath.Join(dir, name), "{}\n")
	}
	var rep reports
	opt := &Options{OnSkip: rep.skip, State: watermark.NewState(), Stats: &Stats{}}
	files, err := opt.Walk(context.Background(), []string{dir}, jsonl)
	if err != nil || len(files) != len(cases) {
		t.Fatalf("walk: %v %v", files, err)
	}
	for _, f := range files {
		name := filepath.Base(f.Path)
		if err := os.Remove(f.Path); err != nil {
			t.Fatal(err)
		}
		if err := cases[name].replace(f.Path); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			src, err := opt.OpenSource(f.Path)
			if src != nil || err != nil {
				t.Errorf("%s: opened %v, error %v", name, src, err)
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the open is blocked", name)
		}
		if want := f.Path + ": " + cases[name].why; rep.list[len(rep.list)-1] != want {
			t.Errorf("reported %q, want %q", rep.list[len(rep.list)-1], want)
		}
	}
	if n := opt.Stats.Skipped.Load(); n != int64(len(cases)) {
		t.Errorf("%d skipped, want %d", n, len(cases))
	}
	if n := opt.Stats.Files.Load(); n != 0 {
		t.Errorf("%d files read, want 0", n)
	}
}

// TestReadSmall: a file beside the sources is read as they are: a link or
// a pipe in its place is an error that says so, an absent file is none.
func TestReadSmall(t *testing.T) {
	dir := t.TempDir()
	testfs.WriteFile(t, filepath.Join(dir, "ok.json"), `{"a":1}`)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	if err := os.Symlink(filepath.Join(dir, "ok.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	opt := &Options{}
	if b, err := opt.ReadSmall(filepath.Join(dir, "ok.json"), 100); string(b) != `{"a":1}` || err != nil {
		t.Errorf("ok.json: %q %v", b, err)
	}
	if b, err := opt.ReadSmall(filepath.Join(dir, "absent.json"), 100); b != nil || err != nil {
		t.Errorf("absent.json: %q %v", b, err)
	}
	if _, err := opt.ReadSmall(filepath.Join(dir, "ok.json"), 3); err == nil {
		t.Error("ok.json over the limit: no error")
	}
	var nr *NotRegularError
	if _, err := opt.ReadSmall(filepath.Join(dir, "fifo.json"), 100); !errors.As(err, &nr) {
		t.Errorf("fifo.json: %v", err)
	}
	if _, err := opt.ReadSmall(filepath.Join(dir, "link.json"), 100); !errors.Is(err, ErrSymlink) {
		t.Errorf("link.json: %v", err)
	}
	opt.FollowLinks = true
	if b, err := opt.ReadSmall(filepath.Join(dir, "link.json"), 100); string(b) != `{"a":1}` || err != nil {
		t.Errorf("link.json followed: %q %v", b, err)
	}
}

// TestFileDone: a read that failed part way is the file's skip, not the
// run's end; other errors pass.
func TestFileDone(t *testing.T) {
	var rep reports
	opt := &Options{OnSkip: rep.skip, Stats: &Stats{}}
	if err := opt.FileDone(&ReadError{Path: "/x/a.jsonl", Err: &os.PathError{Op: "read", Path: "/x/a.jsonl", Err: syscall.EIO}}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"/x/a.jsonl: input/output error"}; !slices.Equal(rep.list, want) {
		t.Fatalf("reported %q, want %q", rep.list, want)
	}
	for _, err := range []error{syscall.EPIPE, context.Canceled} {
		if got := opt.FileDone(fmt.Errorf("x: %w", err)); !errors.Is(got, err) {
			t.Errorf("FileDone(%v) = %v", err, got)
		}
	}
}

// Walks that share a DirCache (a resident pos-sync's) find what walks that
// read every directory find: a file added, removed or grown since the
// last walk, in a directory listed long after it last changed or just
// after; and a directory changed within the file system's clock's
// granularity of its listing is read again.
func TestWalkDirCache(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	settle := func(d string) {
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}
	settled, fresh := filepath.Join(dir, "settled"), filepath.Join(dir, "fresh")
	for _, d := range []string{settled, fresh} {
		os.MkdirAll(d, 0o700)
		os.WriteFile(filepath.Join(d, "a.jsonl"), []byte("{}\n"), 0o600)
		os.WriteFile(filepath.Join(d, "b.jsonl"), []byte("{}\n"), 0o600)
	}
	settle(settled)
	settle(dir)
	cache := NewDirCache()
	o := &Options{Dirs: cache}
	walk := func() map[string]int64 {
		t.Helper()
		files, err := o.Walk(context.Background(), []string{dir}, jsonl)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, f := range files {
			rel, _ := filepath.Rel(dir, f.Path)
			got[rel] = f.Info.Size()
		}
		return got
	}
	want := map[string]int64{"settled/a.jsonl": 3, "settled/b.jsonl": 3, "fresh/a.jsonl": 3, "fresh/b.jsonl": 3}
	if got := walk(); !maps.Equal(got, want) {
		t.Fatalf("first walk: %v, want %v", got, want)
	}
	if !cache.Kept(settled) {
		t.Fatal("a directory unchanged for an hour was not kept")
	}
	if cache.Kept(fresh) {
		t.Fatal("a directory changed just before its listing was kept")
	}
	// Grown, added, removed.
	f, _ := os.OpenFile(filepath.Join(settled, "a.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{}\n")
	f.Close()
	os.WriteFile(filepath.Join(settled, "c.jsonl"), []byte("{}\n"), 0o600)
	os.Remove(filepath.Join(settled, "b.jsonl"))
	// In the fresh directory, a file added and the time set back as a
	// coarse clock would leave it: it was never kept, so it is read.
	before, _ := os.Stat(fresh)
	os.WriteFile(filepath.Join(fresh, "c.jsonl"), []byte("{}\n"), 0o600)
	os.Chtimes(fresh, before.ModTime(), before.ModTime())
	want = map[string]int64{"settled/a.jsonl": 6, "settled/c.jsonl": 3, "fresh/a.jsonl": 3, "fresh/b.jsonl": 3, "fresh/c.jsonl": 3}
	if got := walk(); !maps.Equal(got, want) {
		t.Fatalf("after changes: %v, want %v", got, want)
	}
	// Unchanged since: served from the cache, with each file's size read
	// afresh.
	settle(settled)
	walk()
	f, _ = os.OpenFile(filepath.Join(settled, "c.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{}\n")
	f.Close()
	want["settled/c.jsonl"] = 6
	if got := walk(); !maps.Equal(got, want) {
		t.Fatalf("a file grown in a kept directory: %v, want %v", got, want)
	}
}
