package pipelines_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// threadPolicies reads the scheduling policy of each thread of pid from
// /proc (field 41 of stat: 0 normal, 3 batch, 5 idle).
func threadPolicies(t *testing.T, pid int) map[string]string {
	t.Helper()
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tids, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tid := range tids {
		b, err := os.ReadFile(filepath.Join(dir, tid.Name(), "stat"))
		if err != nil {
			continue // the thread ended
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // fields 3...
		out[tid.Name()] = fields[41-3]
	}
	return out
}

// policiesOf starts a binary that waits on its stdin and returns its
// threads' policies: as soon as every thread has want, or after a second
// (a process just started has not reached Main yet).
func policiesOf(t *testing.T, want string, env []string, name string, args ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	var p map[string]string
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		p = threadPolicies(t, cmd.Process.Pid)
		all := len(p) > 0
		for _, pol := range p {
			all = all && pol == want
		}
		if all && (want == "3" || time.Since(start) > time.Second) {
			break
		}
	}
	return p
}

// The pipeline's stages run under SCHED_BATCH, every thread of them;
// POS_SCHED=normal keeps the default; pos-mcp, which answers turn by turn,
// keeps it too.
func TestBatchSchedule(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SCHED_BATCH is Linux's")
	}
	check := func(name, want string, env []string, args ...string) {
		t.Helper()
		p := policiesOf(t, want, env, name, args...)
		if len(p) == 0 {
			t.Fatalf("%s: no threads read", name)
		}
		for tid, pol := range p {
			if pol != want {
				t.Errorf("%s %v: thread %s has policy %s, want %s (all: %v)", name, env, tid, pol, want, p)
				return
			}
		}
	}
	check("pos-normalize", "3", nil, "-q")
	check("pos-load", "3", nil, "-q", "--lake", t.TempDir())
	check("pos-normalize", "0", []string{"POS_SCHED=normal"}, "-q")
	check("pos-mcp", "0", nil, "--lake", t.TempDir())
}
