package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/claudecode"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
	"github.com/pos-lake/pos/transform/scrub"
)

// rankToken is a secret in a failing tool's output: the lake holds it
// redacted, and so must every text a hit derives from it.
var rankToken = "ghp_" + "Zq3ZpX0oR9sV1tW2uX3yZ4aB5cD6eF7gH8iJ"

// claudeLines writes a Claude Code session: per exchange, a prompt, a go
// build that fails (the same output in every session, the token in it), an
// edit of main.go, the build again that passes, a reply.
type claudeSession struct {
	id, cwd string
	lines   []string
	n       int
	t       time.Time
}

func (s *claudeSession) add(typ string, message any, extra map[string]any) {
	s.n++
	s.t = s.t.Add(5 * time.Second)
	rec := map[string]any{"parentUuid": nil, "isSidechain": false, "userType": "external", "cwd": s.cwd, "sessionId": s.id,
		"version": "2.1.39", "gitBranch": "main", "uuid": fmt.Sprintf("%s-%04d", s.id[:8], s.n),
		"timestamp": s.t.Format("2006-01-02T15:04:05.000Z"), "type": typ, "message": message}
	for k, v := range extra {
		rec[k] = v
	}
	b, _ := json.Marshal(rec)
	s.lines = append(s.lines, string(b))
}

func (s *claudeSession) assistant(content ...map[string]any) {
	s.add("assistant", map[string]any{"id": fmt.Sprintf("msg_%s_%d", s.id[:8], s.n), "type": "message", "role": "assistant",
		"model": "claude-opus-4-6", "content": content, "usage": map[string]int{"input_tokens": 10, "output_tokens": 10}}, nil)
}

func (s *claudeSession) result(id, out string, isError bool) {
	s.add("user", map[string]any{"role": "user", "content": []map[string]any{{"tool_use_id": id, "type": "tool_result", "content": out, "is_error": isError}}},
		map[string]any{"toolUseResult": out})
}

func (s *claudeSession) brokenBuild(prompt, reply string) {
	k := s.n
	s.add("user", map[string]any{"role": "user", "content": prompt}, nil)
	s.assistant(map[string]any{"type": "tool_use", "id": fmt.Sprintf("tu_%d_1", k), "name": "Bash", "input": map[string]any{"command": "go build ./..."}})
	s.result(fmt.Sprintf("tu_%d_1", k), "# example.com/app\n./main.go:12:2: undefined: frobnicateWidget\nconfig token "+rankToken+" rejected\nexit status 1", true)
	s.assistant(map[string]any{"type": "tool_use", "id": fmt.Sprintf("tu_%d_2", k), "name": "Edit",
		"input": map[string]any{"file_path": s.cwd + "/main.go", "old_string": "frobnicateWidget()", "new_string": "widget.Frobnicate()"}})
	s.result(fmt.Sprintf("tu_%d_2", k), "The file main.go has been updated.", false)
	s.assistant(map[string]any{"type": "tool_use", "id": fmt.Sprintf("tu_%d_3", k), "name": "Bash", "input": map[string]any{"command": "go build ./... && echo ok"}})
	s.result(fmt.Sprintf("tu_%d_3", k), "ok", false)
	s.assistant(map[string]any{"type": "text", "text": reply})
}

func (s *claudeSession) chat(prompt, reply string) {
	s.add("user", map[string]any{"role": "user", "content": prompt}, nil)
	s.assistant(map[string]any{"type": "text", "text": reply})
}

// rankLake builds a scrubbed, embedded lake of three sessions: the same
// failing build (and fix) in sessions one and two, and a session three
// that talks about widgets in several exchanges.
func rankLake(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "claude")
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	sessions := []*claudeSession{
		{id: "aaaaaaaa-0000-4000-8000-000000000001", cwd: "/home/dev/app", t: t0},
		{id: "bbbbbbbb-0000-4000-8000-000000000002", cwd: "/home/dev/app", t: t0.Add(24 * time.Hour)},
		{id: "cccccccc-0000-4000-8000-000000000003", cwd: "/home/dev/shop", t: t0.Add(48 * time.Hour)},
	}
	sessions[0].brokenBuild("the build is broken, please fix it", "Fixed: the helper moved to the widget package.")
	sessions[1].brokenBuild("make the app compile again", "It compiles now; the widget helper was renamed.")
	for i, topic := range []string{"sizes", "colours", "prices", "stock levels"} {
		sessions[2].chat(fmt.Sprintf("list the widget %s of the shop", topic), fmt.Sprintf("The shop's widget %s are in catalog %d.", topic, i))
	}
	for _, s := range sessions {
		dir := filepath.Join(root, "projects", strings.ReplaceAll(s.cwd, "/", "-"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.id+".jsonl"), []byte(strings.Join(s.lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var extracted, normalized, scrubbed, embedded bytes.Buffer
	enc := schema.NewEncoder(&extracted)
	now := func() time.Time { return t0.Add(30 * 24 * time.Hour) }
	if err := (claudecode.Adapter{}).Extract(ctx, extract.Options{Roots: []string{root}, User: "dev", Machine: "box", Now: now}, enc.Encode); err != nil {
		t.Fatal(err)
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := normalize.Normalize(ctx, &extracted, &normalized, normalize.Options{Enrich: enrich.All}); err != nil {
		t.Fatal(err)
	}
	if _, err := scrub.Scrub(ctx, &normalized, &scrubbed, scrub.Options{Key: []byte("rank test key of 32 bytes or more!")}); err != nil {
		t.Fatal(err)
	}
	if _, err := embed.Embed(ctx, &scrubbed, &embedded, embed.Options{Provider: embed.NewHash(0)}); err != nil {
		t.Fatal(err)
	}
	lake := filepath.Join(t.TempDir(), "lake")
	if _, err := load.Load(ctx, &embedded, load.Options{Lake: lake, Now: now, NoCatalog: true, RequireScrubbed: true}); err != nil {
		t.Fatal(err)
	}
	return lake
}

func openRank(t *testing.T) *query.DB {
	t.Helper()
	return openDB(t, rankLake(t))
}

// The same failing build in two sessions is one hit that says it stands
// for the other; the hit tells its exchange's story (the prompt, the
// failure's lines, the edit and the build that then passed), redacted as
// the lake is, in every mode.
func TestSearchDuplicatesAndStory(t *testing.T) {
	db := openRank(t)
	for _, mode := range query.SearchModes {
		res := search(t, db, query.SearchOptions{Query: "undefined frobnicateWidget", Mode: mode, Types: []string{schema.ContentToolError}})
		if len(res.Hits) != 1 {
			t.Fatalf("%s: %d hits, want the two failures as one: %+v", mode, len(res.Hits), res.Hits)
		}
		h := res.Hits[0]
		if h.Duplicates != 1 || len(h.Similar) != 1 || h.Similar[0].SessionID == h.SessionID || h.Similar[0].ExchangeID == "" {
			t.Errorf("%s: duplicates %d, similar %+v", mode, h.Duplicates, h.Similar)
		}
		if h.Prompt != "the build is broken, please fix it" && h.Prompt != "make the app compile again" {
			t.Errorf("%s: prompt %q", mode, h.Prompt)
		}
		if h.Error == nil || h.Error.Tool != "Bash" || h.Error.Command != "go build ./..." ||
			!strings.Contains(strings.Join(h.Error.Lines, "\n"), "undefined: frobnicateWidget") {
			t.Fatalf("%s: error %+v", mode, h.Error)
		}
		if len(h.Fix) != 2 || h.Fix[0].Tool != "Edit" || len(h.Fix[0].Files) != 1 || h.Fix[0].Files[0] != "/home/dev/app/main.go" ||
			h.Fix[1].Command != "go build ./... && echo ok" {
			t.Errorf("%s: fix %+v", mode, h.Fix)
		}
		js, _ := json.Marshal(res)
		if strings.Contains(string(js), "Zq3ZpX0oR9sV1tW2uX3yZ4aB5cD6eF7gH8iJ") || strings.Contains(string(js), "ghp_") {
			t.Errorf("%s: the token is in the result: %s", mode, js)
		}
	}
	// The redacted line, whole, when the query asks for it.
	res := search(t, db, query.SearchOptions{Query: "config token rejected", Mode: query.SearchLexical, Types: []string{schema.ContentToolError}})
	if len(res.Hits) == 0 || res.Hits[0].Error == nil || !strings.Contains(strings.Join(res.Hits[0].Error.Lines, "\n"), "[REDACTED:") {
		t.Fatalf("no redacted error line: %+v", res.Hits)
	}
	// An exchange without a failure has its prompt, and no story.
	res = search(t, db, query.SearchOptions{Query: "widget colours", Mode: query.SearchLexical, K: 1})
	if len(res.Hits) != 1 || res.Hits[0].Prompt != "list the widget colours of the shop" || res.Hits[0].Error != nil || res.Hits[0].Fix != nil {
		t.Errorf("a plain exchange: %+v", res.Hits)
	}
}

// Grouped by session, each session keeps its best hits, at most
// PerSession, different exchanges, best first.
func TestSearchGroupBySessionBest(t *testing.T) {
	db := openRank(t)
	for _, per := range []int{0, 2} {
		res := search(t, db, query.SearchOptions{Query: "widget shop", Mode: query.SearchLexical, GroupBy: "session", PerSession: per})
		if len(res.Sessions) == 0 {
			t.Fatal("no sessions")
		}
		want := per
		if want == 0 {
			want = 3
		}
		s := res.Sessions[0]
		if s.SessionID != "cccccccc-0000-4000-8000-000000000003" || len(s.Best) != want {
			t.Fatalf("per session %d: first session %s with %d best hits: %+v", per, s.SessionID, len(s.Best), s.Best)
		}
		seen := map[string]bool{}
		for i, h := range s.Best {
			if h.Rank != i+1 || h.SessionID != s.SessionID || h.ExchangeID == "" || seen[h.ExchangeID] || h.Snippet == "" ||
				i > 0 && h.Score > s.Best[i-1].Score {
				t.Errorf("best hit %d: %+v", i, h)
			}
			seen[h.ExchangeID] = true
		}
		if s.Snippet != s.Best[0].Snippet || s.ExchangeID != s.Best[0].ExchangeID {
			t.Errorf("the session's snippet is not its best hit's: %+v", s)
		}
	}
}
