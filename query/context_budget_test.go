package query_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/query"
)

// Small budgets: the pack, headers and warnings included, never exceeds
// its budget, and its figures say so (Used within the budget, nothing
// negative), whatever the sessions, their titles and their age.
func TestContextTightBudgets(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	var refs []query.SessionRef
	for _, id := range []string{sessA, sessB, sessC} {
		refs = append(refs, resolve(t, db, id))
	}
	long := refs[0]
	long.Title = strings.Repeat("a long title that takes many tokens ", 8)
	long.Project = "/home/dev/" + strings.Repeat("deeply/nested/", 10) + "project"
	old := time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC) // every session a year old: the strongest notice
	warned := []string{"the sessions were picked by lexical search only: the query could not be embedded"}
	for _, now := range []time.Time{{}, old} {
		for _, mode := range query.ContextModes {
			for _, set := range [][]query.SessionRef{refs[:1], refs, {long}, {long, refs[1], refs[2]}} {
				base, err := db.Context(ctx, query.ContextOptions{Sessions: set, Mode: mode, MaxTokens: 100, Now: now})
				if err != nil {
					t.Fatal(err)
				}
				if len(base.Sessions) != len(set) {
					// A pack with no room for a session has none to
					// pack again: read them all at a large budget.
					if base, err = db.Context(ctx, query.ContextOptions{Sessions: set, Mode: mode, MaxTokens: 1e6, Now: now}); err != nil {
						t.Fatal(err)
					}
				}
				for budget := 100; budget <= 1000; budget += 5 {
					for _, w := range [][]string{nil, warned} {
						p := base.Refit(budget, w)
						if p.Used > p.Budget || p.Remaining < 0 || p.Used+p.Remaining != p.Budget {
							t.Fatalf("budget %d, mode %s, %d sessions: used %d, remaining %d", budget, mode, len(set), p.Used, p.Remaining)
						}
						checkPack(t, p)
					}
				}
			}
		}
	}
	// Through the lake too, at the smallest budget.
	p, err := db.Context(ctx, query.ContextOptions{Sessions: []query.SessionRef{long}, MaxTokens: 100, Now: old, Warnings: warned})
	if err != nil {
		t.Fatal(err)
	}
	if p.Used > p.Budget || p.Remaining < 0 {
		t.Fatalf("used %d, remaining %d of %d", p.Used, p.Remaining, p.Budget)
	}
	checkPack(t, p)
}

// The same session named many times is packed once; more distinct
// sessions than a pack takes are refused at once.
func TestContextSessionsDeduplicatedAndCapped(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	ref := resolve(t, db, sessA)
	same := make([]query.SessionRef, 1000)
	for i := range same {
		same[i] = ref
	}
	start := time.Now()
	p, err := db.Context(ctx, query.ContextOptions{Sessions: same, MaxTokens: 4000})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sessions) != 1 {
		t.Fatalf("%d sessions in the pack, want 1", len(p.Sessions))
	}
	t.Logf("1,000 copies of one session: %v", time.Since(start).Round(time.Millisecond))
	many := make([]query.SessionRef, query.MaxContextSessions+1)
	for i := range many {
		many[i] = query.SessionRef{Platform: "claude_code", SessionID: strings.Repeat("f", 8) + "-" + string(rune('a'+i%26)) + strings.Repeat("0", i/26+1)}
	}
	_, err = db.Context(ctx, query.ContextOptions{Sessions: many})
	var ae *query.ArgError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("%d sessions: %v", len(many), err)
	}
}
