package query_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
)

// TestContextSmartWork checks what the smart pack carries of what the
// assistant did: the failed test run with what was said after it, where
// the work stopped, and the tool calls in the replies. The fixture's
// session 11111111 runs `go test ./...`, which fails with --- FAIL:
// TestGet, then says it is fixing the timeout; its last prompt is "Ship
// it".
func TestContextSmartWork(t *testing.T) {
	ctx := context.Background()
	lake, err := querytest.FixtureLake(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t, lake)
	ref := resolve(t, db, "11111111")
	p, err := db.Context(ctx, query.ContextOptions{Sessions: []query.SessionRef{ref}, Mode: query.ModeSmart, MaxTokens: 4000, Now: querytest.Now})
	if err != nil {
		t.Fatal(err)
	}
	checkPack(t, p)
	got := map[string]string{}
	for _, it := range p.Sessions[0].Items {
		if it.Included {
			got[it.Kind] += it.Text
		}
	}
	if e := got["errors"]; !strings.Contains(e, "go test ./...") || !strings.Contains(e, "--- FAIL: TestGet") || !strings.Contains(e, "then: The test fails; fixing the timeout.") {
		t.Errorf("errors item %q", e)
	}
	if s := got["stopped"]; !strings.Contains(s, "Last request: Ship it") || !strings.Contains(s, "Done: tagged v1.2.0.") {
		t.Errorf("stopped item %q", s)
	}
	if r := got["reply"]; !strings.Contains(r, "→ Read fetch.go") || !strings.Contains(r, "✗ --- FAIL: TestGet") {
		t.Errorf("replies %q", r)
	}
	// The pack's order: the stopped item with the first prompts, before
	// the decisions and errors, which come before the replies.
	var kinds []string
	for _, it := range p.Sessions[0].Items {
		kinds = append(kinds, it.Kind)
	}
	order := strings.Join(kinds, " ")
	if i, j, k := strings.Index(order, "stopped"), strings.Index(order, "errors"), strings.Index(order, "reply"); i < 0 || j < i || k < j {
		t.Errorf("item order %s", order)
	}
}
