package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/internal/corpus"
)

// sonicLine, sonicContent and sonicToolFiles decode as the package did
// before the walker, with sonic alone: the reference the walker must match.
func sonicLine(b []byte) (line, error) {
	var l line
	return l, decode(b, &l)
}

func sonicContent(raw rawJSON) (content, error) {
	return contentWith(raw, func(b []byte, s *string) error { return decode(b, s) }, func(b []byte, bl *[]block) error { return decode(b, bl) })
}

func walkContent(raw rawJSON) (content, error) { return contentWith(raw, walkString, walkBlocks) }

func sonicToolFiles(input rawJSON) []string {
	if len(input) == 0 || input[0] != '{' {
		return nil
	}
	var m map[string]rawJSON
	if decode(input, &m) != nil {
		return nil
	}
	var out []string
	for _, k := range fileInputKeys {
		if v, ok := m[k]; ok {
			var s string
			if decode(v, &s) == nil && s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// checkWalk compares the walker with sonic on one line (as the extractor
// reads it). The walker may refuse what sonic takes (the line then goes to
// sonic), and must refuse what sonic refuses; where both take a value they
// must decode it the same. It returns whether the walker took the line.
func checkWalk(t *testing.T, where string, b []byte) bool {
	t.Helper()
	want, serr := sonicLine(b)
	var got line
	werr := walkLine(b, &got)
	if werr != nil {
		return false
	}
	if serr != nil {
		t.Fatalf("%s: the walker takes a line sonic refuses (%v):\n%s", where, serr, b)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: the walker decodes\n%+v\nsonic\n%+v\nfrom\n%s", where, got, want, b)
	}
	var contents []rawJSON
	if l := got; l.Message != nil {
		contents = append(contents, l.Message.Content)
	}
	if got.Attachment != nil {
		contents = append(contents, got.Attachment.Prompt)
	}
	contents = append(contents, got.Content)
	for i := 0; i < len(contents); i++ {
		wc, werr := walkContent(contents[i])
		sc, serr := sonicContent(contents[i])
		if werr == nil && serr != nil {
			t.Fatalf("%s: the walker takes content sonic refuses (%v):\n%s", where, serr, contents[i])
		}
		if werr != nil {
			continue
		}
		if !reflect.DeepEqual(wc, sc) {
			t.Fatalf("%s: the walker decodes content\n%+v\nsonic\n%+v\nfrom\n%s", where, wc, sc, contents[i])
		}
		for _, bl := range wc.blocks {
			if !reflect.DeepEqual(toolFiles(bl.Name, bl.Input), sonicToolFiles(bl.Input)) {
				t.Fatalf("%s: tool files of %s differ: %q, sonic %q", where, bl.Input, toolFiles(bl.Name, bl.Input), sonicToolFiles(bl.Input))
			}
			contents = append(contents, bl.Content) // a tool result's blocks
		}
	}
	return true
}

// TestWalkTestdata and TestWalkCorpus: on every line of testdata and of
// the corpus the walker decodes what sonic decodes, and takes every line
// sonic takes.
func TestWalkTestdata(t *testing.T) {
	walkFiles(t, filepath.Join("..", "..", "testdata", "claude"), 30)
}

func TestWalkCorpus(t *testing.T) { walkFiles(t, corpus.Platform(t, "claude_code"), 5000) }

func walkFiles(t *testing.T, root string, atLeast int) {
	files, err := (&extract.Options{}).Walk(context.Background(), []string{root}, extract.Match{Name: func(p string) bool { return strings.HasSuffix(p, ".jsonl") }})
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 64<<20)
		for n := 1; sc.Scan(); n++ {
			b := extract.RawLine(bytes.TrimRight(sc.Bytes(), "\r"))
			if len(bytes.TrimSpace(b)) == 0 {
				continue
			}
			if _, err := sonicLine(b); err != nil {
				continue // a bad line of a fixture
			}
			lines++
			if where := f.Path + ":" + strconv.Itoa(n); !checkWalk(t, where, b) {
				t.Errorf("%s: the walker refuses a line sonic takes", where)
			}
		}
	}
	if lines < atLeast {
		t.Fatalf("only %d lines under %s, want %d or more", lines, root, atLeast)
	}
	t.Logf("%d lines under %s", lines, root)
}

// FuzzWalk: what the walker decodes, sonic decodes the same; what sonic
// refuses, the walker refuses.
func FuzzWalk(f *testing.F) {
	extracttest.SeedLines(f, "claude/home/.claude/projects/*/*.jsonl")
	f.Add([]byte(`{"type":"user","message":null,"message":{"content":null}}`))
	f.Add([]byte(`{"message":{"usage":{"cache_creation":{"ephemeral_1h_input_tokens":3}},"usage":{"input_tokens":1}}}`))
	f.Add([]byte(`{"message":{"usage":{"speed":"fast","input_tokens":1},"model":"m"}}`))
	f.Add([]byte(`{"message":{"usage":{"speed":7}}}`))
	f.Add([]byte(`{"message":{"usage":{"iterations":[{"type":"message","input_tokens":1},null,{"type":"advisor_message","model":"m","output_tokens":2,"cache_creation":{"ephemeral_1h_input_tokens":3}}]}}}`))
	f.Add([]byte(`{"message":{"usage":{"iterations":[],"iterations":null}}}`))
	f.Add([]byte(`{"message":{"usage":{"iterations":[{"model":null,"type":7}]}}}`))
	f.Add([]byte(`{"type":"progress","data":{"type":"agent_progress","agentId":"a","message":{"type":"assistant","uuid":"u","message":{"usage":{"input_tokens":1}}}}}`))
	f.Add([]byte(`{"data":{"message":null,"message":"x"}}`))
	f.Add([]byte(`{"type":"x","type":null,"prNumber":1e3,"content":[1, 2 ]}`))
	f.Add([]byte(`{"message":{"content":[null,{"type":"tool_use","input":{"file_path":"a","file_path":7,"notebook_path":"n"}}]}}`))
	f.Add([]byte(`{"attachment":{"prompt":"\ud800x","origin":null},"snapshot":{"timestamp":"t"},"data":{"type":"agent_progress"}}`))
	// Escaped keys, keys in other cases, repeated members, numbers at and
	// past int64's edges.
	f.Add([]byte(`{"ty\u0070e":"user","message":{"r\u006fle":"x"}}`))
	f.Add([]byte(`{"type":"a","TYPE":"b","Type":"c","isMeta":true,"isMeta":false}`))
	f.Add([]byte(`{"prNumber":-0,"message":{"usage":{"input_tokens":-5,"output_tokens":9223372036854775807}}}`))
	f.Add([]byte(`{"prNumber":9223372036854775808}`))
	f.Add([]byte(`{"prNumber":1.0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := extract.RawLine(bytes.TrimRight(data, "\r\n"))
		checkWalk(t, "fuzz", b)
	})
}

// BenchmarkDecodeLine compares the walker with sonic on the corpus's lines
// (MB/s of lines): the walker's budget rests on it.
func BenchmarkDecodeLine(b *testing.B) {
	dir := corpus.Platform(b, "claude_code")
	files, err := (&extract.Options{}).Walk(context.Background(), []string{dir}, extract.Match{Name: func(p string) bool { return strings.HasSuffix(p, ".jsonl") }})
	if err != nil {
		b.Fatal(err)
	}
	var lines [][]byte
	size := 0
	for _, f := range files {
		data, err := os.ReadFile(f.Path)
		if err != nil {
			b.Fatal(err)
		}
		for l := range bytes.SplitSeq(data, []byte("\n")) {
			if l = extract.RawLine(l); len(bytes.TrimSpace(l)) > 0 {
				lines = append(lines, l)
				size += len(l)
			}
		}
	}
	for _, dec := range []struct {
		name    string
		line    func([]byte, *line) error
		content func(rawJSON) (content, error)
	}{
		{"sonic", func(b []byte, l *line) error { *l = line{}; return decode(b, l) }, sonicContent},
		{"walker", func(b []byte, l *line) error { *l = line{}; return walkLine(b, l) }, walkContent},
	} {
		b.Run(dec.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			var l line
			for b.Loop() {
				for _, ln := range lines {
					if err := dec.line(ln, &l); err != nil {
						b.Fatal(err)
					}
					if l.Message != nil {
						if _, err := dec.content(l.Message.Content); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		})
	}
}
