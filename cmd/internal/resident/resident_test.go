package resident

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDir: the residents' directory is private; one open to others is
// refused, since its socket runs syncs with the environment it is sent.
func TestDir(t *testing.T) {
	rt := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", rt)
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || dir != filepath.Join(rt, "pos") || fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir %s: %v %v", dir, fi.Mode(), err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), "not a private directory") {
		t.Fatalf("a directory open to others: %v", err)
	}
}

func TestSocketPathPerBinary(t *testing.T) {
	a, b := SocketPath("/run/pos", "/usr/bin/pos-sync"), SocketPath("/run/pos", "/home/me/bin/pos-sync")
	if a == b || filepath.Dir(a) != "/run/pos" || !strings.HasSuffix(a, ".sock") {
		t.Fatalf("%s, %s", a, b)
	}
	if len(a) > 100 {
		t.Fatalf("%s: longer than a unix socket's path may be", a)
	}
}

func TestIdle(t *testing.T) {
	for v, want := range map[string]time.Duration{"": DefaultIdle, "90s": 90 * time.Second, "1h": time.Hour} {
		t.Setenv("POS_SYNC_IDLE", v)
		if got, err := Idle(); err != nil || got != want {
			t.Errorf("POS_SYNC_IDLE=%q: %v, %v", v, got, err)
		}
	}
	for _, v := range []string{"never", "-5m", "0"} {
		t.Setenv("POS_SYNC_IDLE", v)
		if _, err := Idle(); err == nil {
			t.Errorf("POS_SYNC_IDLE=%q accepted", v)
		}
	}
}

// TestAskUnreachable: with no resident and no binary to start, Ask says
// so (the asker then syncs itself) instead of waiting.
func TestAskUnreachable(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	_, err := Ask(&Request{Exe: filepath.Join(t.TempDir(), "no-pos-sync")}, "pos-sync", time.Minute)
	if err == nil || !strings.Contains(err.Error(), ErrUnreachable.Error()) {
		t.Fatalf("%v", err)
	}
}
