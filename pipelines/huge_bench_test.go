package pipelines_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkHugeLine runs each stage of the pipe, as its own process, over a
// Claude Code session whose one prompt is a 50 MB line (a pasted log), and
// reports each stage's peak resident set (<stage>-rss-MB, from the kernel's
// rusage of the process) and the chunks pos-embed made.
//
//	go test -run '^$' -bench HugeLine -benchtime 1x ./pipelines
func BenchmarkHugeLine(b *testing.B) {
	tmp := b.TempDir()
	proj := filepath.Join(tmp, ".claude", "projects", "-work-app")
	os.MkdirAll(proj, 0o700)
	var text strings.Builder
	for i := 0; text.Len() < 50<<20; i++ {
		fmt.Fprintf(&text, "line %d: compiled package p%d in %d ms, cache %x\n", i, i%97, i%1013, uint32(i)*2654435761)
	}
	u, _ := json.Marshal(map[string]any{"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00Z",
		"cwd": "/home/dev/app", "message": map[string]any{"role": "user", "content": text.String()}})
	a, _ := json.Marshal(map[string]any{"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s1",
		"timestamp": "2026-01-01T00:00:01Z", "requestId": "r1", "message": map[string]any{"id": "m1", "role": "assistant",
			"model": "claude-opus-4-6", "content": []any{map[string]any{"type": "text", "text": "The build log is clean."}}}})
	os.WriteFile(filepath.Join(proj, "s1.jsonl"), append(append(append(u, '\n'), a...), '\n'), 0o600)
	text.Reset()

	stages := []struct {
		name string
		args []string
	}{
		{"extract", []string{"pos-extract", "--root", filepath.Join(tmp, ".claude"), "--full", "-q"}},
		{"normalize", []string{"pos-normalize", "-q"}},
		{"scrub", []string{"pos-scrub", "--key", "bench-key-0123456789abcdef0123456789", "-q"}},
		{"embed", []string{"pos-embed", "--no-cache", "-q"}},
		{"load", []string{"pos-load", "--lake", filepath.Join(tmp, "lake"), "-q"}},
	}
	rss := map[string]int64{}
	var chunks int64
	for b.Loop() {
		os.RemoveAll(filepath.Join(tmp, "lake"))
		in := ""
		for i, st := range stages {
			out := filepath.Join(tmp, fmt.Sprint(i, ".ndjson"))
			cmd := exec.Command(filepath.Join(binDir, st.args[0]), st.args[1:]...)
			cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+tmp)
			if in != "" {
				f, err := os.Open(in)
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				cmd.Stdin = f
			}
			w, err := os.Create(out)
			if err != nil {
				b.Fatal(err)
			}
			cmd.Stdout = w
			if msg, err := runStage(cmd); err != nil {
				b.Fatalf("%s: %v\n%s", st.name, err, msg)
			}
			w.Close()
			ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			if ru != nil {
				rss[st.name] = max(rss[st.name], int64(ru.Maxrss)) // kilobytes on Linux
			}
			if in != "" {
				os.Remove(in)
			}
			in = out
			if st.name == "embed" {
				chunks = countKind(b, out, "chunk")
			}
		}
	}
	for _, st := range stages {
		b.ReportMetric(float64(rss[st.name])/1024, st.name+"-rss-MB")
	}
	b.ReportMetric(float64(chunks), "chunks")
}

func runStage(cmd *exec.Cmd) (string, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stderr.String(), err
}

// countKind counts the records of a kind in an NDJSON file.
func countKind(b *testing.B, path, kind string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return int64(strings.Count(string(data), `"kind":"`+kind+`"`))
}
