package mcpserver

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
)

// A tool call that failed because a file it listed was gone (a load
// compacted the partition meanwhile) is made again, once; other errors
// are returned as they are.
func TestToolRetriesWhenAFileVanished(t *testing.T) {
	lake := t.TempDir()
	if _, err := load.Load(context.Background(), strings.NewReader(`{"schema":"pos/1","kind":"message","id":"m1","platform":"claude_code","session_id":"s1","ts":"2026-05-01T10:00:00Z","role":"user","content_type":"text","text":"hi"}`+"\n"), load.Options{Lake: lake}); err != nil {
		t.Fatal(err)
	}
	s := New(Options{Lake: lake})
	defer s.Close()
	for _, tc := range []struct {
		name  string
		err   error
		calls int
		fails bool
	}{
		{"gone", &fs.PathError{Op: "open", Path: filepath.Join(lake, "indexed", "x.parquet"), Err: fs.ErrNotExist}, 2, false},
		{"duckdb", fmt.Errorf(`IO Error: Cannot open file "%s": No such file or directory`, filepath.Join(lake, "x.parquet")), 2, false},
		{"other", os.ErrPermission, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			h := handler(s, func(context.Context, *query.DB, struct{}) (*mcp.CallToolResult, struct{}, error) {
				calls++
				if calls == 1 {
					return nil, struct{}{}, tc.err
				}
				return &mcp.CallToolResult{}, struct{}{}, nil
			})
			_, _, err := h(context.Background(), nil, struct{}{})
			if calls != tc.calls || (err != nil) != tc.fails {
				t.Fatalf("%d calls, error %v", calls, err)
			}
		})
	}
}
