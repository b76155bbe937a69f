package push

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/schema"
)

// FuzzLine feeds arbitrary bytes to the push line parser: it never panics;
// a line is either reported bad (not JSON) or kept as a raw record with its
// messages after it; and every record is a fixed point of the wire format.
func FuzzLine(f *testing.F) {
	extracttest.SeedLines(f, "push/push/*/*.jsonl")
	f.Add([]byte(`{"type":"exchange","user":5,"ai":["x"],"usage":{"input":"many"},"tools":[{"input":{"a":` + "\n" + `1}}]}`))
	f.Add([]byte(`{"v":"1","type":"message","role":"tool","tools":[null,{"output":null}],"meta":[1]}`))
	f.Add([]byte(`{"type":"session_resume","previous_session":"a","new_session":"a","timestamp":"2025-13-45T99:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out []*schema.Record
		r := &run{opt: &extract.Options{}, emit: func(rec *schema.Record) error {
			out = append(out, rec)
			return nil
		}}
		fs := &fileState{path: "/p/s.jsonl", base: "s.jsonl", stem: "s", mtime: time.Unix(0, 0).UTC(),
			sessions: map[string]*sessionInfo{}, prompts: map[string]promptAt{}}
		b := bytes.TrimRight(data, "\r\n")
		if bytes.IndexByte(b, '\n') >= 0 || len(bytes.TrimSpace(b)) == 0 {
			return // one line at a time; blank lines are skipped by the reader
		}
		ev, bad, err := parseEvent(b)
		if err != nil && !errors.Is(err, errNotObject) {
			return // reported bad by the reader
		}
		if err := r.line(fs, &ev, err == nil, bad, rawLine(b), extract.Line{Line: schema.Line{Bytes: b, Num: 1, Terminated: true}}); err != nil {
			t.Fatal(err)
		}
		if err := r.sessionHints(fs); err != nil {
			t.Fatal(err)
		}
		if len(out) == 0 || out[0].Kind != schema.KindRaw {
			t.Fatal("a JSON line made no raw record")
		}
		for _, rec := range out {
			enc := extracttest.FixedPoint(t, rec)
			if rec.Kind == schema.KindMessage && (rec.ID == "" || rec.SessionID == "" || rec.TS.IsZero()) {
				t.Fatalf("message without id, session or time: %s", enc)
			}
		}
		// The checkpoint context must read back.
		if c := fs.context()["sessions"]; c != "" {
			var saved map[string]*sessionInfo
			if err := json.Unmarshal([]byte(c), &saved); err != nil {
				t.Fatalf("checkpoint context: %v\n%s", err, c)
			}
		}
	})
}
