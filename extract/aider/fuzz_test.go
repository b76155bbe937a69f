package aider

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/schema"
)

// FuzzBlocks feeds arbitrary text to the markdown block parser as a chat
// history: it never panics; the blocks are in file order, do not overlap
// and hold every line that is not blank, verbatim; and every record made
// from them survives the wire format.
func FuzzBlocks(f *testing.F) {
	matches, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "aider", "projects", "*", HistoryFile))
	for _, m := range matches {
		b, _ := os.ReadFile(m)
		f.Add(b)
		// and each session on its own, so the fuzzer mutates smaller inputs
		for _, s := range strings.SplitAfter(string(b), "\n# aider chat") {
			f.Add([]byte(s))
		}
	}
	f.Add([]byte("#### a  \n> b\n\nc\n```\n#### d  \n\n#### e  \n"))
	f.Add([]byte("> x\n\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\ny  \n\n```bash\nls\n```\n"))
	f.Add([]byte("\r\n# aider chat started at nonsense\r\n#### \xff  \r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var lines []schema.Line
		lr := schema.NewLineReader(bytes.NewReader(data))
		for {
			ln, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !ln.Terminated {
				break // left for the next run
			}
			ln.Bytes = bytes.Clone(ln.Bytes)
			lines = append(lines, ln)
		}
		var blocks []*block
		var out []*schema.Record
		r := &run{opt: &extract.Options{}, loc: time.UTC, emit: func(rec *schema.Record) error {
			out = append(out, rec)
			return nil
		}}
		fs := &fileState{path: "/p/" + HistoryFile, dir: "/p", mtime: time.Unix(0, 0).UTC()}
		sp := &splitter{emit: func(b *block) error {
			blocks = append(blocks, b)
			return r.block(fs, b)
		}}
		for _, ln := range lines {
			if err := sp.add(strings.ToValidUTF8(string(ln.Bytes), "\uFFFD"), ln.Num, ln.Offset); err != nil {
				t.Fatal(err)
			}
		}
		if err := sp.close(); err != nil {
			t.Fatal(err)
		}
		if err := r.flushPending(fs, nil); err != nil {
			t.Fatal(err)
		}
		if err := r.sessionHint(fs); err != nil {
			t.Fatal(err)
		}
		covered := map[int64]bool{}
		next := int64(1)
		for _, b := range blocks {
			if b.line < next || len(b.lines) == 0 {
				t.Fatalf("block at line %d overlaps the one before (next line %d)", b.line, next)
			}
			if b.offset != lines[b.line-1].Offset {
				t.Fatalf("block at line %d: offset %d, the line's is %d", b.line, b.offset, lines[b.line-1].Offset)
			}
			for i, l := range b.lines {
				n := b.line + int64(i)
				if want := strings.ToValidUTF8(string(lines[n-1].Bytes), "\uFFFD"); l != want {
					t.Fatalf("block line %d is %q, the file's is %q", n, l, want)
				}
				covered[n] = true
			}
			next = b.line + int64(len(b.lines))
		}
		for _, ln := range lines {
			if len(bytes.TrimSpace(ln.Bytes)) > 0 && !covered[ln.Num] {
				t.Fatalf("line %d (%q) is in no block", ln.Num, ln.Bytes)
			}
		}
		msgs := 0
		for _, rec := range out {
			extracttest.FixedPoint(t, rec)
			if rec.Kind == schema.KindMessage {
				msgs++
			}
		}
		headers := 0
		for _, b := range blocks {
			if b.kind == blockHeader {
				headers++
			}
		}
		if msgs != len(blocks)-headers {
			t.Fatalf("%d blocks (%d headers) made %d messages", len(blocks), headers, msgs)
		}
	})
}
