package mcpserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pos-lake/pos/mcpserver"
	"github.com/pos-lake/pos/query"
)

// connectWith is connect with the server's options given.
func connectWith(t *testing.T, opt mcpserver.Options) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv := mcpserver.New(opt)
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
		srv.Close()
	})
	return cs
}

// When the query cannot be embedded (the endpoint is down), search and a
// context pack picked by query answer from the lexical side, and say so.
func TestSearchFallsBackToLexical(t *testing.T) {
	down := func(context.Context, string) (query.Embedder, error) {
		return func(context.Context, string) ([]float32, error) {
			return nil, errors.New(`embedding at http://127.0.0.1:9/v1 failed after 3 attempts: connect: connection refused`)
		}, nil
	}
	cs := connectWith(t, mcpserver.Options{Lake: fixture(t), Embedder: down,
		Now: func() time.Time { return time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) }})
	res := call(t, cs, mcpserver.ToolSearch, map[string]any{"query": "build"})
	if res.IsError {
		t.Fatalf("search failed: %s", text(res))
	}
	m := structured(t, res)
	w, _ := m["warning"].(string)
	if m["mode"] != "lexical" || !strings.Contains(w, "lexical results only") || !strings.Contains(w, "connection refused") {
		t.Errorf("mode %v, warning %q", m["mode"], w)
	}
	if hits, _ := m["hits"].([]any); len(hits) == 0 {
		t.Errorf("no hits: %s", text(res))
	}
	res = call(t, cs, mcpserver.ToolContextPack, map[string]any{"query": "explain the build", "top": 1})
	if res.IsError {
		t.Fatalf("context_pack failed: %s", text(res))
	}
	if md := text(res); !strings.Contains(md, "> Warning: the sessions were picked by lexical search only") ||
		!strings.Contains(md, "## Session: Explain the build") {
		t.Errorf("context pack:\n%s", md)
	}
}
