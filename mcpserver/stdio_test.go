package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/mcpserver"
)

// A client that writes its requests and closes stdin (a pipe, a script)
// gets an answer to each of them, even those still running when the
// input ended.
func TestStdioAnswersEveryCallBeforeTheEnd(t *testing.T) {
	lake := fixture(t)
	calls := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stats","arguments":{"by":["model"]}}}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"search","arguments":{"query":"parser"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"capabilities","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"timeline","arguments":{}}}`,
	}
	srv := mcpserver.New(mcpserver.Options{Lake: lake, Embedder: hashEmbedder,
		Now: func() time.Time { return time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) }})
	defer srv.Close()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := srv.Run(ctx, &mcpserver.StdioTransport{Reader: strings.NewReader(strings.Join(calls, "\n") + "\n"), Writer: &out})
	if ctx.Err() != nil {
		t.Fatalf("the server did not end at the end of its input: %v", err)
	}
	got := map[string]bool{}
	for line := range strings.Lines(out.String()) {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		if r.Result == nil {
			t.Errorf("not a result: %s", line)
		}
		got[string(r.ID)] = true
	}
	for _, id := range []string{`1`, `2`, `"three"`, `4`, `5`} {
		if !got[id] {
			t.Errorf("no answer to call %s; output:\n%s", id, out.String())
		}
	}
}
