// Package hooks_test runs the agent hook and the sync scripts with the real
// binaries over the fixture transcripts, and checks the lake.
package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/testbin"
	"github.com/pos-lake/pos/query"
)

var binDir string

func TestMain(m *testing.M) {
	testbin.Main(m, "pos-hooks-bin-", &binDir, func(dir string) *exec.Cmd {
		return exec.Command("go", "build", "-o", dir+"/", "../../cmd/pos-extract", "../../cmd/pos-normalize",
			"../../cmd/pos-scrub", "../../cmd/pos-embed", "../../cmd/pos-load", "../../cmd/pos-sync", "../../cmd/pos-sync-client")
	})
}

const sessionID = "11111111-1111-4111-8111-111111111111"

// home is a copy of the fixture's Claude Code home, in a temporary HOME.
type home struct {
	dir, lake, log string
	env            []string
}

func newHome(t *testing.T) *home {
	t.Helper()
	h := &home{dir: t.TempDir()}
	if err := os.CopyFS(filepath.Join(h.dir, "home"), os.DirFS(filepath.Join("..", "..", "testdata", "claude", "home"))); err != nil {
		t.Fatal(err)
	}
	h.lake = filepath.Join(h.dir, "lake")
	h.log = filepath.Join(h.dir, "state", "pos", "hooks.log")
	h.env = append(os.Environ(), "HOME="+filepath.Join(h.dir, "home"), "POS_BIN="+binDir, "POS_LAKE="+h.lake,
		"XDG_DATA_HOME="+filepath.Join(h.dir, "data"), "XDG_STATE_HOME="+filepath.Join(h.dir, "state"),
		"POS_HOOK_LOG=", "POS_HOOK_FOREGROUND=", "POS_NO_SCRUB=", "POS_NO_EMBED=", "POS_SYNC_PIPE=", "POS_SYNC_RESIDENT=",
		// The resident pos-sync the hooks start: the test's own. It lives
		// past the test and ends once its directory is removed; while it
		// lives, the next hook must not wait for it.
		"XDG_RUNTIME_DIR="+h.dir, "POS_SYNC_IDLE=10m")
	return h
}

func (h *home) transcript() string {
	return filepath.Join(h.dir, "home", ".claude", "projects", "-home-dev-webapp", sessionID+".jsonl")
}

// hook runs sync-session.sh with a payload on stdin, as Claude Code does.
func (h *home) hook(t *testing.T, payload string, env ...string) time.Duration {
	t.Helper()
	cmd := exec.Command("./sync-session.sh")
	cmd.Env = append(h.env, env...)
	cmd.Stdin = strings.NewReader(payload)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("the hook failed: %v\n%s", err, out.String())
	}
	if out.Len() > 0 {
		t.Fatalf("the hook wrote to the agent: %q", out.String())
	}
	return time.Since(start)
}

func payload(event, transcript string) string {
	b, _ := json.Marshal(map[string]any{"session_id": sessionID, "transcript_path": transcript, "cwd": "/home/dev/webapp",
		"hook_event_name": event, "reason": "exit", "trigger": "auto"})
	return string(b)
}

// waitLog waits until the log has n lines containing s.
func (h *home) waitLog(t *testing.T, s string, n int) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(h.log)
		if strings.Count(string(b), s) >= n {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %d× %q in the log after 2 minutes:\n%s", n, s, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (h *home) sql(t *testing.T, q string) []any {
	t.Helper()
	db, err := query.Open(context.Background(), h.lake)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tab, err := db.SQL(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return tab.Rows[0]
}

// The hook syncs in one process (pos-sync) where it is built, and as a
// pipeline of the stages' processes with POS_SYNC_PIPE=1: the same lake.
func TestHookSyncsTheSessionInTheBackground(t *testing.T) {
	t.Run("one process", func(t *testing.T) {
		hookSyncs(t, nil, "pos-scrub | pos-embed | pos-load --require-scrubbed (in one process: the resident pos-sync)", "pos-sync: load: ")
	})
	t.Run("processes", func(t *testing.T) {
		hookSyncs(t, []string{"POS_SYNC_PIPE=1"}, "pos-scrub | pos-embed | pos-load --require-scrubbed\n", "pos-load: ")
	})
}

func hookSyncs(t *testing.T, env []string, wants ...string) {
	h := newHome(t)
	took := h.hook(t, payload("SessionEnd", h.transcript()), env...)
	if took > 3*time.Second {
		t.Errorf("the hook took %v: it must return at once", took)
	}
	log := h.waitLog(t, ": done in ", 1)
	t.Logf("log:\n%s", log)
	if strings.Contains(log, "syncing here") || strings.Contains(log, "running pos-sync here") {
		t.Errorf("the resident pos-sync did not run the sync")
	}
	for _, want := range append([]string{"SessionEnd: starting a background sync"}, wants...) {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	row := h.sql(t, `SELECT (SELECT count(*) FROM sessions WHERE session_id = '`+sessionID+`'),
  (SELECT subagents FROM sessions WHERE session_id = '`+sessionID+`'),
  (SELECT count(*) FROM sessions WHERE session_id <> '`+sessionID+`'),
  (SELECT count(*) FROM documents WHERE content_type = 'plan'),
  (SELECT count(*) FROM chunks)`)
	if row[0] != int64(1) || row[1] != int64(1) || row[2] != int64(0) {
		t.Fatalf("sessions: this one %v (subagents %v), others %v; want the session with its subagent, and only it", row[0], row[1], row[2])
	}
	if row[3] == int64(0) || row[4] == int64(0) {
		t.Errorf("plans %v, chunks %v: the plan and the search chunks should be loaded too", row[3], row[4])
	}
	// Lake files are private.
	filepath.WalkDir(h.lake, func(p string, d fs.DirEntry, err error) error {
		if fi, err := d.Info(); err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", p, fi.Mode().Perm())
		}
		return nil
	})
}

func TestHookTwiceLoadsOnce(t *testing.T) {
	h := newHome(t)
	// PreCompact, then SessionEnd while the first sync may still run: they
	// take turns on the sync lock, and the second reads only what is new.
	h.hook(t, payload("PreCompact", h.transcript()))
	h.hook(t, payload("SessionEnd", h.transcript()))
	h.waitLog(t, ": done in ", 2)
	// The session grows; a third sync adds only the new message.
	f, err := os.OpenFile(h.transcript(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/webapp","sessionId":"%s","version":"2.1.39","gitBranch":"main","uuid":"99999999-0000-4000-8000-000000000001","timestamp":"2026-03-20T10:00:00.000Z","type":"user","message":{"role":"user","content":"One more thing: add a test for the redirect"}}`+"\n", sessionID)
	f.Close()
	h.hook(t, payload("SessionEnd", h.transcript()))
	log := h.waitLog(t, ": done in ", 3)
	row := h.sql(t, `SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE text LIKE 'One more thing%') FROM messages`)
	if row[0] != row[1] || row[2] != int64(1) {
		t.Fatalf("messages %v, distinct %v, new %v: want no duplicates and the new message\n%s", row[0], row[1], row[2], log)
	}
}

func TestHookNeverFailsTheAgent(t *testing.T) {
	h := newHome(t)
	for _, tc := range []struct {
		name, payload, log string
		env                []string
	}{
		{"empty input", "", "no transcript_path in the hook's input", nil},
		{"not JSON", "hello", "no transcript_path in the hook's input", nil},
		{"missing transcript", payload("SessionEnd", "/nonexistent/x.jsonl"), "the transcript /nonexistent/x.jsonl does not exist", nil},
		{"no binaries", payload("PreCompact", h.transcript()), "not synced: pos-extract not found", []string{"POS_BIN=/nonexistent", "PATH=/usr/bin:/bin"}},
		{"no scrubber", payload("PreCompact", h.transcript()), "refusing to load unscrubbed history", []string{"POS_BIN=" + onlyBins(t, "pos-extract", "pos-normalize", "pos-load"), "PATH=/usr/bin:/bin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.hook(t, tc.payload, append(tc.env, "POS_HOOK_FOREGROUND=1")...)
			b, _ := os.ReadFile(h.log)
			if !strings.Contains(string(b), tc.log) {
				t.Fatalf("the log lacks %q:\n%s", tc.log, b)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(h.lake, "indexed")); err == nil {
		t.Fatalf("something was loaded")
	}
}

// onlyBins is a directory with links to some of the binaries.
func onlyBins(t *testing.T, names ...string) string {
	dir := t.TempDir()
	for _, n := range names {
		if err := os.Symlink(filepath.Join(binDir, n), filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestBackfill(t *testing.T) {
	h := newHome(t)
	run := func(args ...string) (string, int) {
		cmd := exec.Command("./backfill.sh", args...)
		cmd.Env = h.env
		out, err := cmd.CombinedOutput()
		return string(out), testbin.ExitCode(t, err)
	}
	// The fixture holds a broken line on purpose: exit 3, the rest loaded.
	out, code := run("--since", "2020-01-01")
	if code != 3 || !strings.Contains(out, "pos-extract --since 2020-01-01 --full --platform all") {
		t.Fatalf("backfill: exit %d\n%s", code, out)
	}
	if row := h.sql(t, `SELECT count(*) FROM sessions`); row[0] != int64(3) {
		t.Fatalf("sessions %v, want 3\n%s", row[0], out)
	}
	out, code = run("--incremental")
	if code != 0 || !strings.Contains(out, "0 records emitted") || strings.Contains(out, "--full") {
		t.Fatalf("incremental: exit %d\n%s", code, out)
	}
	if _, code = run("--since"); code != 2 {
		t.Fatalf("--since without a value: exit %d", code)
	}
	if _, code = run("--bogus"); code != 2 {
		t.Fatalf("unknown argument: exit %d", code)
	}
}
