package claudecode

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/schema"
)

// FuzzLine feeds arbitrary bytes to the Claude Code line parser: it never
// panics, every line ends up in the stream (as a record or a reported bad
// line), and every record survives the wire format.
func FuzzLine(f *testing.F) {
	extracttest.SeedLines(f, "claude/home/.claude/projects/*/*.jsonl")
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":[{"type":"image"}]}]},"timestamp":5}`))
	f.Add([]byte(`{"type":"assistant","message":"oops","uuid":7}`))
	// Session-state lines: names and pull request links, one with a
	// member of a type Claude Code does not write.
	f.Add([]byte(`{"type":"custom-title","customTitle":"  my \u00e9 name ","sessionId":"s"}`))
	f.Add([]byte(`{"type":"ai-title","title":"old shape","sessionId":"s"}`))
	f.Add([]byte(`{"type":"pr-link","sessionId":"s","prNumber":"12","prRepository":"o/r","timestamp":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"type":"pr-link","sessionId":"s","prNumber":12,"prRepository":"o/r"}`))
	f.Add([]byte(`{"type":"attachment","uuid":"u","sessionId":"s","attachment":{"type":"queued_command","prompt":[{"type":"text","text":"typed"},{"type":"image"}],"origin":{"kind":"human"}}}`))
	f.Add([]byte(`{"type":"attachment","sessionId":"s","attachment":{"type":"queued_command","prompt":7,"commandMode":"prompt"}}`))
	f.Add([]byte(`{"type":"attachment","sessionId":"s","attachment":"queued_command"}`))
	f.Add([]byte(`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-02-11T20:51:12.726Z","sessionId":"s","content":[{"type":"text","text":"check again"}]}`))
	f.Add([]byte(`{"type":"queue-operation","operation":"remove","reason":7,"content":"x","sessionId":"s"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out []*schema.Record
		skipped := 0
		r := &run{
			opt: &extract.Options{OnSkip: func(*schema.BadInput) error { skipped++; return nil }},
			emit: func(rec *schema.Record) error {
				out = append(out, rec)
				return nil
			},
			slugs: map[string]slugOwner{}, taskTypes: map[string]string{}, agentTypes: map[string]string{}, mu: new(sync.Mutex),
		}
		fs := &fileState{path: "/x/s.jsonl", mtime: time.Unix(0, 0), sideRoot: map[string]string{}}
		var l line
		b := extract.RawLine(bytes.TrimRight(data, "\r\n")) // as file() reads a line
		if parseLine(b, &l) != nil {
			if _, ok := lenient(b, &l); !ok {
				return // a bad line: reported by the caller
			}
		}
		l.check()
		if err := r.line(fs, &l, b, extract.Line{Line: schema.Line{Bytes: b, Num: 1, Terminated: true}}); err != nil {
			t.Fatal(err)
		}
		if err := r.flush(fs, true); err != nil {
			t.Fatal(err)
		}
		if fs.session != "" {
			// What the file taught of the session (names, pull requests).
			if err := r.sessionHint(fs); err != nil {
				t.Fatal(err)
			}
		}
		if len(out)+skipped == 0 {
			t.Fatal("a parsed line produced neither a record nor a diagnostic")
		}
		for _, rec := range out {
			enc := schema.AppendRecord(nil, rec)
			if !json.Valid(enc) {
				t.Fatalf("record is not strict JSON:\n%q", enc)
			}
			var back schema.Record
			if err := schema.Unmarshal(enc, &back); err != nil {
				t.Fatalf("record does not round-trip: %v\n%s", err, enc)
			}
		}
	})
}
