package load_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load"
)

// Whatever produced the stream, the lake's JSON is JSON DuckDB reads: a
// lone surrogate escape in a raw line, a meta, a tool's input or a record
// kept whole becomes \ufffd (the raw row says so in source_altered), and a
// raw record without a raw value holds JSON null, not "".
func TestLakeJSONIsStrict(t *testing.T) {
	lake := t.TempDir()
	in := strings.Join([]string{
		`{"schema":"pos/1","kind":"raw","id":"r1","platform":"test","ts":"2026-01-02T03:04:05Z","source":{"path":"/h/a.jsonl","line":1,"offset":0},"raw":{"p":"hello \ud800 world","\udc00":"\ud800\u0041"}}`,
		`{"schema":"pos/1","kind":"raw","id":"r2","platform":"test","ts":"2026-01-02T03:04:05Z","source":{"path":"/h/a.jsonl","line":2,"offset":60}}`,
		`{"schema":"pos/1","kind":"message","id":"m1","platform":"test","session_id":"s","ts":"2026-01-02T03:04:05Z","role":"assistant","content_type":"tool_use",` +
			`"tools":[{"name":"Bash","input":{"command":"echo \ud800"}}],"meta":{"m":"\udfff"}}`,
		`{"schema":"pos/1","kind":"future_kind","id":"f1","platform":"test","ts":"2026-01-02T03:04:05Z","payload":{"x":"\ud800"}}`,
	}, "\n") + "\n"
	if _, err := load.Load(context.Background(), strings.NewReader(in), load.Options{Lake: lake}); err != nil {
		t.Fatal(err)
	}
	db := loadtest.Views(t, lake)
	for _, q := range []string{"SELECT * FROM raw", "SELECT * FROM messages", "SELECT * FROM other"} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		rows.Close()
	}
	if got := loadtest.One(t, db, "SELECT (raw->>'$.p') || '|' || source_altered FROM raw WHERE id = 'r1'"); got != "hello \uFFFD world|surrogate" {
		t.Errorf("r1: %q", got)
	}
	if got := loadtest.One(t, db, "SELECT raw::VARCHAR || '|' || coalesce(source_altered, 'NULL') FROM raw WHERE id = 'r2'"); got != "null|NULL" {
		t.Errorf("r2: %q", got)
	}
	if got := loadtest.One(t, db, "SELECT ((tools[1].input::JSON)->>'$.command') || '|' || ((meta::JSON)->>'$.m') FROM messages"); got != "echo \uFFFD|\uFFFD" {
		t.Errorf("m1: %q", got)
	}
	if got := loadtest.One(t, db, "SELECT record->>'$.payload.x' FROM other"); got != "\uFFFD" {
		t.Errorf("f1: %q", got)
	}
}
