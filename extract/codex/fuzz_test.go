package codex

import (
	"bytes"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/schema"
)

// FuzzLine feeds arbitrary lines to the rollout line parser, after a
// session_meta so that every state (prompts waiting for their event,
// requests waiting for their count) is reachable: it never panics, every
// line that parses ends up in the stream as a raw record, and every record
// survives the wire format.
func FuzzLine(f *testing.F) {
	extracttest.SeedLines(f, "codex/home/.codex/*/*/*/*/*.jsonl", "codex/home/.codex/archived_sessions/*.jsonl")
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":-5},"last_token_usage":null}}}`))
	f.Add([]byte(`{"type":"response_item","payload":{"type":"function_call_output","call_id":7,"output":{"content":[{"type":"input_image"}],"success":false}}}`))
	f.Add([]byte(`{"type":"session_meta","payload":{"id":"other","source":{"subagent":{"thread_spawn":{"parent_thread_id":""}}}}}`))
	f.Add([]byte(`{"type":"message","role":"user","content":"<x>y</x>"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out []*schema.Record
		r := &run{
			opt:  &extract.Options{OnSkip: func(*schema.BadInput) error { return nil }},
			emit: func(rec *schema.Record) error { out = append(out, rec); return nil },
		}
		fs := newFileState("/x/rollout-2026-01-01T00-00-00-00000000-0000-4000-8000-000000000000.jsonl", time.Unix(0, 0))
		fs.restore(nil)
		var (
			l line
			p payload
		)
		meta := []byte(`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s","cwd":"/w"}}`)
		if err := parseLine(meta, &l, &p); err != nil {
			t.Fatal(err)
		}
		if err := r.line(fs, &l, &p, meta, extract.Line{Line: schema.Line{Bytes: meta, Num: 1, Terminated: true}}); err != nil {
			t.Fatal(err)
		}
		b := extract.RawLine(bytes.TrimRight(data, "\r\n"))
		if len(bytes.TrimSpace(b)) == 0 || bytes.TrimSpace(b)[0] != '{' || parseLine(b, &l, &p) != nil {
			return // a bad line: reported by the caller
		}
		raw := extract.OneLine(b)
		if err := r.line(fs, &l, &p, raw, extract.Line{Line: schema.Line{Bytes: b, Num: 2, Offset: int64(len(meta)) + 1, Terminated: true}}); err != nil {
			t.Fatal(err)
		}
		if err := r.finish(fs); err != nil {
			t.Fatal(err)
		}
		if err := r.sessionRecord(fs); err != nil {
			t.Fatal(err)
		}
		lines := 0
		for _, rec := range out {
			if rec.Kind == schema.KindRaw {
				lines++
			}
			extracttest.FixedPoint(t, rec)
		}
		if lines != 2 {
			t.Fatalf("%d raw records for 2 lines", lines)
		}
	})
}
