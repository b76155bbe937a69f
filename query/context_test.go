package query_test

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/query"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// checkPack asserts what every pack must hold: it fits its budget, included
// texts are whole, and an item was left out only when it could not fit even
// in the room taken by items that rank below it.
func checkPack(t *testing.T, p *query.ContextPack) {
	t.Helper()
	md := p.Markdown()
	if got := query.EstimateTokens(md); got > p.Budget {
		t.Fatalf("pack of %d tokens over its %d budget", got, p.Budget)
	}
	rank := func(it query.ContextItem) int {
		if it.Essential {
			return 0
		}
		return it.Priority
	}
	for _, s := range p.Sessions {
		for _, it := range s.Items {
			if it.Included && !strings.Contains(md, strings.TrimSpace(it.Text)) {
				t.Fatalf("included %s text is not whole in the pack", it.Kind)
			}
		}
	}
	for _, s := range p.Sessions {
		for _, x := range s.Items {
			if x.Included {
				continue
			}
			room := p.Remaining
			for _, s2 := range p.Sessions {
				for _, y := range s2.Items {
					if y.Included && rank(y) > rank(x) {
						room += y.Tokens
					}
				}
			}
			if x.Tokens <= room {
				t.Fatalf("%s (%d tokens, priority %d) left out while lower-ranked items held %d tokens", x.Kind, x.Tokens, x.Priority, room)
			}
		}
	}
}

func TestContextModesGolden(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	ref := resolve(t, db, sessA)
	now := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	for _, mode := range query.ContextModes {
		p, err := db.Context(ctx, query.ContextOptions{Sessions: []query.SessionRef{ref}, Mode: mode, MaxTokens: 4000, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		checkPack(t, p)
		golden := filepath.Join("testdata", "context", mode+".md")
		if *updateGolden {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			os.WriteFile(golden, []byte(p.Markdown()), 0o644)
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test -update writes it)", err)
		}
		if got := p.Markdown(); got != string(want) {
			t.Fatalf("mode %s differs from %s (go test -update rewrites it):\n%s", mode, golden, got)
		}
	}
	if _, err := db.Context(ctx, query.ContextOptions{Sessions: []query.SessionRef{ref}, Mode: "everything"}); err == nil {
		t.Fatal("unknown mode accepted")
	}
}

func TestStaleness(t *testing.T) {
	for _, c := range []struct {
		days int
		want string
	}{{0, ""}, {6, ""}, {7, "days old"}, {30, "STALENESS"}, {89, "STALENESS"}, {90, "OLD CONTEXT"}} {
		if got := query.Staleness(c.days); (c.want == "" && got != "") || !strings.Contains(got, c.want) {
			t.Errorf("%d days: %q", c.days, got)
		}
	}
}

// Budgets from 1k to 50k tokens over the real sessions: never over, never
// cut, priority kept.
func TestContextBudgetsCorpus(t *testing.T) {
	lake := corpusLake(t)
	ctx := context.Background()
	db := openDB(t, lake)
	ss, err := db.Sessions(ctx, query.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var refs []query.SessionRef
	for _, s := range ss {
		refs = append(refs, query.SessionRef{Platform: s.Platform, SessionID: s.SessionID, Title: s.Title, Project: s.Project, FirstTS: s.FirstTS, LastTS: s.LastTS})
	}
	for _, budget := range []int{1000, 2000, 5000, 10000, 15000, 30000, 50000} {
		for _, mode := range query.ContextModes {
			for _, set := range [][]query.SessionRef{refs[:1], refs[:3], refs} {
				p, err := db.Context(ctx, query.ContextOptions{Sessions: set, Mode: mode, MaxTokens: budget})
				if err != nil {
					t.Fatal(err)
				}
				checkPack(t, p)
			}
		}
	}
	corpusGolden(t, db, refs)
}

// corpusGolden compares each mode's pack of two corpus sessions (one with
// fourteen subagent reports, one with a compaction) at a 6,000-token
// budget with a golden file. The corpus may not be copied into the
// project, so the golden holds each item's kind, priority, tokens, time
// and a hash of its text, not the text.
func corpusGolden(t *testing.T, db *query.DB, refs []query.SessionRef) {
	t.Helper()
	var set []query.SessionRef
	for _, want := range []string{"42f9655b-5d81-497b-989e-e4dee62b1b95", "ae4a77f8-aedd-4bc1-888f-c94edc91af04"} {
		for _, r := range refs {
			if r.SessionID == want {
				set = append(set, r)
			}
		}
	}
	if len(set) != 2 {
		t.Fatalf("corpus sessions 42f9655b and ae4a77f8 not both in the lake (%d found)", len(set))
	}
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	for _, mode := range query.ContextModes {
		p, err := db.Context(context.Background(), query.ContextOptions{Sessions: set, Mode: mode, MaxTokens: 6000, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "mode %s budget %d used %d remaining %d warnings %d\n", p.Mode, p.Budget, p.Used, p.Remaining, len(p.Warnings))
		for _, s := range p.Sessions {
			fmt.Fprintf(&b, "  session %.8s age %dd used %d dropped %d\n", s.SessionID, s.AgeDays, s.Used, s.Dropped)
			for _, it := range s.Items {
				if !it.Included {
					continue
				}
				fmt.Fprintf(&b, "    %-18s p%d %5d tokens  %s  %x essential=%v\n", it.Kind, it.Priority, it.Tokens,
					it.TS.UTC().Format(time.RFC3339), sha256.Sum256([]byte(it.Title+"\x00"+it.Text)), it.Essential)
			}
		}
	}
	golden := filepath.Join("testdata", "context", "corpus.golden")
	if *updateGolden {
		os.WriteFile(golden, []byte(b.String()), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if b.String() != string(want) {
		t.Fatalf("corpus packs differ from %s (go test -update rewrites it):\n%s", golden, b.String())
	}
}
