package cline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

// memSource is a history file held in memory.
func memSource(name string, b []byte) *source {
	return &source{name: name, path: "/h/tasks/1/" + name, ra: bytes.NewReader(b),
		fp: watermark.Fingerprint{Size: int64(len(b)), Mtime: time.Unix(1, 0).UTC()}}
}

// count is how many elements the array reader takes from b.
func count(b []byte) (int, [][]byte, error) {
	var raws [][]byte
	_, err := elements(bytes.NewReader(b), func(e elem) error {
		if e.raw != nil {
			raws = append(raws, bytes.Clone(e.raw))
		}
		return nil
	})
	return len(raws), raws, err
}

// FuzzTask feeds arbitrary bytes to the array reader and the element
// parsers as a task's api history and ui file: nothing panics, every
// element the reader takes is one raw record (however odd its shape),
// messages follow their element's raw record, every record is a fixed
// point of the wire format, and an array the reader accepts re-encodes to
// the same elements.
func FuzzTask(f *testing.F) {
	tasks, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "cline", "home", "*", "*", "*", "*", "*", "tasks", "*"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "cline", "home", ".cline", "data", "tasks", "*"))
	for _, d := range append(tasks, more...) {
		api, _ := os.ReadFile(filepath.Join(d, apiFile))
		ui, _ := os.ReadFile(filepath.Join(d, uiFile))
		f.Add(api, ui)
	}
	f.Add([]byte(`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":7}]},{"role":"assistant","content":{"a":1},"ts":"soon"}]`),
		[]byte(`[{"ts":-5,"type":"say","say":"api_req_started","text":"{\"tokensIn\":1e30}","conversationHistoryIndex":99},{"ts":1,"say":"reasoning","partial":true,"conversationHistoryIndex":"x"}]`))
	f.Add([]byte(`[{"role":"assistant","content":"<read_file><path>a</path></read_file><thinking>x"},{"role":"user","content":"[x] Result:"},null,[]]`),
		[]byte(`[{"type":"ask","ask":"tool","text":"{\"tool\":\"readFile\",\"path\":7}","conversationHistoryIndex":-1},{"type":"ask","ask":"tool","text":"{\"tool\":\"readFile\"","partial":true}]`))
	f.Add([]byte("[\n {\"role\":\"user\",\"content\":\"\\ud800\\u2028\"}\n] "), []byte(`[`))
	f.Fuzz(func(t *testing.T, api, ui []byte) {
		var out []*schema.Record
		r := &run{
			opt:  &extract.Options{OnSkip: func(*schema.BadInput) error { return nil }},
			emit: func(rec *schema.Record) error { out = append(out, rec); return nil },
		}
		tk := &task{r: r, dir: "/h/tasks/1", id: "1", srcs: map[string]*source{}}
		as, us := memSource(apiFile, api), memSource(uiFile, ui)
		var n int
		n, tk.cwd = peek(as, 4)
		tk.orphan = n == 0
		ctx := context.Background()
		if err := tk.readUI(ctx, us); err != nil {
			t.Fatal(err)
		}
		if err := tk.readAPI(ctx, as); err != nil {
			t.Fatal(err)
		}
		if err := tk.session(); err != nil {
			t.Fatal(err)
		}
		checkStream(t, out)
		for _, f := range []struct {
			s *source
			b []byte
		}{{as, api}, {us, ui}} {
			s := f.s
			n, raws, err := count(f.b)
			got := 0
			for _, rec := range out {
				if rec.Kind == schema.KindRaw && rec.Source.Path == s.path {
					if !bytes.Equal(rec.Raw, raws[got]) {
						t.Fatalf("%s element %d: raw %s, want %s", s.name, got, rec.Raw, raws[got])
					}
					got++
				}
			}
			if got != n {
				t.Fatalf("%s: %d raw records for %d elements", s.name, got, n)
			}
			if err != nil {
				continue
			}
			// Accepted: the elements re-encoded as an array read the same.
			again := append([]byte{'['}, bytes.Join(raws, []byte{','})...)
			again = append(again, ']')
			n2, raws2, err := count(again)
			if err != nil || n2 != n {
				t.Fatalf("%s: re-encoded array: %d elements, %v", s.name, n2, err)
			}
			for i := range raws {
				if !bytes.Equal(raws[i], raws2[i]) {
					t.Fatalf("%s element %d is not a fixed point: %s -> %s", s.name, i, raws[i], raws2[i])
				}
			}
		}
		for _, rec := range out {
			extracttest.FixedPoint(t, rec)
		}
	})
}
