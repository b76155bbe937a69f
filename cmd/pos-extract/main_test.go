package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pos-lake/pos/cmd/internal/clitest"
	"github.com/pos-lake/pos/internal/testbin"
	"github.com/pos-lake/pos/internal/testfs"
)

// These tests run the built binaries, as a user or a timer runs them.

var binDir string

func TestMain(m *testing.M) { clitest.Main(m, "pos-extract", main, buildBinaries) }

// buildBinaries builds pos-extract and pos-load for the tests that run them
// as processes of their own, and returns what removes them.
func buildBinaries() func() {
	dir, remove := testbin.Build("pos-extract-bin-", func(dir string) *exec.Cmd {
		return exec.Command("go", "build", "-o", dir+string(filepath.Separator), ".", "../pos-load")
	})
	binDir = dir
	return remove
}

// env is a clean environment: home as HOME, the lake as POS_LAKE.
func env(home, lake string) []string {
	return []string{"HOME=" + home, "PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"POS_LAKE=" + lake, "TMPDIR=" + os.TempDir(), "POS_SCHED=normal"}
}

// claudeLine is a valid Claude Code transcript line.
func claudeLine(session string, i int, text string) string {
	return fmt.Sprintf(`{"type":"user","sessionId":%q,"uuid":"u-%06d","timestamp":"2026-03-01T10:00:00Z","cwd":"/w","message":{"role":"user","content":%q}}`+"\n", session, i, text)
}

// sources counts the records of an output stream by source path.
func sources(t *testing.T, out []byte) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		var r struct {
			Source struct {
				Path string `json:"path"`
			} `json:"source"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("output line %.100q: %v", line, err)
		}
		n[r.Source.Path]++
	}
	return n
}

// TestNamedPipeInFolders: a named pipe named like a history file, in a
// Claude Code project and in the push folder, neither blocks the run nor
// stops it: it is named, the other files are read, and the exit code says
// something was skipped.
func TestNamedPipeInFolders(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, ".claude", "projects", "-w")
	push := filepath.Join(home, ".local", "share", "pos", "push", "agent")
	testfs.WriteFile(t, filepath.Join(proj, "a.jsonl"), claudeLine("s1", 1, "hello"))
	testfs.WriteFile(t, filepath.Join(proj, "zzz.jsonl"), claudeLine("s2", 2, "after the pipe"))
	testfs.WriteFile(t, filepath.Join(push, "a.jsonl"), `{"type":"message","timestamp":"2026-03-01T10:00:00Z","session":"p1","role":"user","text":"pushed"}`+"\n")
	for _, p := range []string{filepath.Join(proj, "zz.jsonl"), filepath.Join(push, "zz.jsonl")} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip("no named pipes here:", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "pos-extract"), "--full", "-p", "claude_code", "-p", "push")
	cmd.Env = env(home, filepath.Join(home, "lake"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("pos-extract blocked for %v (killed)\n%s", time.Since(start), stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit %v, want 3\n%s", err, stderr.String())
	}
	for _, p := range []string{filepath.Join(proj, "zz.jsonl"), filepath.Join(push, "zz.jsonl")} {
		if want := "pos-extract: " + p + ": not a regular file (named pipe)\n"; !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), ", 2 skipped,") {
		t.Errorf("the summary does not count 2 skipped:\n%s", stderr.String())
	}
	got := sources(t, stdout.Bytes())
	for _, p := range []string{filepath.Join(proj, "a.jsonl"), filepath.Join(proj, "zzz.jsonl"), filepath.Join(push, "a.jsonl")} {
		if got[p] == 0 {
			t.Errorf("no record from %s", p)
		}
	}
}

// bigHome writes a Claude Code project of n files of 2,000 lines (~0.6 MB
// each).
func bigHome(t *testing.T, n int) string {
	home := t.TempDir()
	var b strings.Builder
	text := strings.Repeat("lorem ipsum dolor sit amet ", 20)
	for f := range n {
		b.Reset()
		for i := range 2000 {
			b.WriteString(claudeLine(fmt.Sprintf("s%d", f), f*10000+i, text))
		}
		testfs.WriteFile(t, filepath.Join(home, ".claude", "projects", "-w", fmt.Sprintf("f%03d.jsonl", f)), b.String())
	}
	return home
}

// TestSignalEndsBlockedRun: a run whose output nobody reads (its reader
// stopped) still ends on SIGTERM, with exit code 130.
func TestSignalEndsBlockedRun(t *testing.T) {
	home := bigHome(t, 8)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(filepath.Join(binDir, "pos-extract"), "--full", "-q", "-p", "claude_code")
	cmd.Env = env(home, filepath.Join(home, "lake"))
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(2 * time.Second) // the pipe fills; the run waits on it
	select {
	case err := <-done:
		t.Fatalf("the run ended before its output was read: %v", err)
	default:
	}
	cmd.Process.Signal(syscall.SIGTERM)
	start := time.Now()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("exit %v, want 130\n%s", err, stderr.String())
		}
		t.Logf("ended %v after SIGTERM: %s", time.Since(start).Round(time.Millisecond), stderr.String())
	case <-time.After(stuckAfter + 10*time.Second):
		cmd.Process.Kill()
		t.Fatal("SIGTERM did not end a run waiting on its output")
	}
}

// TestSignalEndsAtRecordEnd: SIGTERM in the middle of a run ends it
// promptly (130), and its output ends with a whole record.
func TestSignalEndsAtRecordEnd(t *testing.T) {
	home := bigHome(t, 8)
	cmd := exec.Command(filepath.Join(binDir, "pos-extract"), "--full", "-q", "-p", "claude_code")
	cmd.Env = env(home, filepath.Join(home, "lake"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A slow reader: the run lasts seconds.
	var got bytes.Buffer
	br := bufio.NewReader(out)
	buf := make([]byte, 16<<10)
	for got.Len() < 1<<20 {
		n, err := br.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("the run ended early: %v\n%s", err, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	start := time.Now()
	if _, err := io.Copy(&got, br); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, stderr.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("ended %v after SIGTERM", d)
	}
	b := got.Bytes()
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("the output ends in a partial record: %.100q", b[max(0, len(b)-100):])
	}
	if n := len(sources(t, b)); n >= 8 {
		t.Errorf("records from all %d files: the run was not interrupted", n)
	}
}

// sh runs a bash pipeline with pipefail in dir.
func sh(t *testing.T, dir string, environ []string, script string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "-o", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = environ
	out, err := cmd.CombinedOutput()
	return string(out), testbin.ExitCode(t, err)
}

// TestStateCommittedWhereRead: the watermarks a run read from --state DIR
// are committed to DIR by pos-load, so the next run reads only what was
// added; watermarks read from another lake's _state are refused with a
// message and a hint, nothing committed; the same lake named otherwise (a
// relative path, a symbolic link, a lake moved) is the same lake.
func TestStateCommittedWhereRead(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	file := filepath.Join(home, ".claude", "projects", "-w", "a.jsonl")
	var b strings.Builder
	for i := range 20 {
		b.WriteString(claudeLine("s1", i, "line"))
	}
	testfs.WriteFile(t, file, b.String())
	environ := env(home, "")
	raws := func(script string) (int, string) {
		t.Helper()
		out, code := sh(t, dir, environ, script)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", script, code, out)
		}
		return strings.Count(out, `"kind":"raw"`), out
	}
	appendLine := func(i int) {
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(claudeLine("s1", i, "added"))
		f.Close()
	}

	// --state DIR: committed to DIR, where the next run reads them.
	pipe := `pos-extract -q -p claude_code --state st | tee /dev/stderr | pos-load -q --lake lake`
	if n, out := raws(pipe); n != 20 {
		t.Fatalf("first run: %d raw records, want 20\n%s", n, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "st", "watermarks.json")); err != nil {
		t.Fatalf("no watermarks in --state: %v", err)
	}
	appendLine(100)
	if n, out := raws(pipe); n != 1 {
		t.Fatalf("after one line added: %d raw records read again, want 1\n%s", n, out)
	}
	if n, out := raws(pipe); n != 0 {
		t.Fatalf("nothing added: %d raw records, want 0\n%s", n, out)
	}

	// Another lake's watermarks: refused, nothing committed.
	out, code := sh(t, dir, environ, `pos-extract -q -p claude_code --lake other | pos-load -q --lake lake2`)
	if code != 1 || !strings.Contains(out, "pos-load: the stream's watermarks were read from the lake "+filepath.Join(dir, "other")+", but this load goes to "+filepath.Join(dir, "lake2")) ||
		!strings.Contains(out, "\npos-load: hint: give pos-extract and pos-load the same --lake") {
		t.Fatalf("mismatched lakes: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "lake2", "_state", "watermarks.json")); err == nil {
		t.Fatal("mismatched lakes: watermarks committed")
	}

	// The same lake named otherwise: a relative path and an absolute one,
	// a link to it; then moved.
	if n, out := raws(`pos-extract -q -p claude_code --lake ./lake3/ | tee /dev/stderr | pos-load -q --lake "$PWD/lake3"`); n != 21 {
		t.Fatalf("lake3: %d raw records, want 21\n%s", n, out)
	}
	if err := os.Symlink(filepath.Join(dir, "lake3"), filepath.Join(dir, "link3")); err != nil {
		t.Fatal(err)
	}
	appendLine(101)
	if n, out := raws(`pos-extract -q -p claude_code --lake link3 | tee /dev/stderr | pos-load -q --lake lake3`); n != 1 {
		t.Fatalf("lake3 through a link: %d raw records, want 1\n%s", n, out)
	}
	if err := os.Rename(filepath.Join(dir, "lake3"), filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	appendLine(102)
	if n, out := raws(`POS_LAKE=moved; export POS_LAKE; pos-extract -q -p claude_code | tee /dev/stderr | pos-load -q`); n != 1 {
		t.Fatalf("lake moved: %d raw records, want 1\n%s", n, out)
	}
}
