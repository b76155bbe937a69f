package query_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/schema"
)

func TestTranscript(t *testing.T) {
	db := open(t)
	tr, err := db.Transcript(context.Background(), query.TranscriptOptions{Session: "11111111-1111"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Session.SessionID != sessA {
		t.Fatalf("session %s, want %s", tr.Session.SessionID, sessA)
	}
	var prompts []string
	var sub *query.Thread
	var calls []query.ToolCall
	for _, e := range tr.Main.Entries {
		switch e.Kind {
		case query.EntryPrompt:
			prompts = append(prompts, e.Text)
		case query.EntrySubagent:
			sub = e.Thread
		case query.EntryReply:
			calls = append(calls, e.Calls...)
		}
	}
	if len(prompts) == 0 || prompts[0] != "Add a retry to the fetcher\nwith exponential backoff" {
		t.Errorf("prompts %q", prompts)
	}
	if sub == nil || sub.AgentID != "a1b2c3d" || len(sub.Entries) == 0 || sub.Entries[0].Text != "Find the callers of Get" {
		t.Fatalf("subagent thread %+v", sub)
	}
	if tr.Subagents != 1 || tr.Calls != 4 {
		t.Errorf("%d subagents, %d calls; want 1, 4", tr.Subagents, tr.Calls)
	}
	// The subagent sits after the Task call that started it.
	var kinds []string
	for _, e := range tr.Main.Entries[:4] {
		kinds = append(kinds, e.Kind)
	}
	if got := strings.Join(kinds, ","); got != "prompt,reply,reply,subagent" {
		t.Errorf("first entries %s", got)
	}
	if len(calls) == 0 || calls[0].Name != "Read" || !strings.HasPrefix(calls[0].Output, "package fetch") {
		t.Errorf("first call %+v", calls)
	}
	failed := false
	for _, c := range calls {
		failed = failed || c.IsError
	}
	if !failed {
		t.Error("no failed call: the fixture's go test call failed")
	}

	var md, page bytes.Buffer
	if err := query.TranscriptMarkdown(&md, tr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Add a retry to the fetcher\n", "## Prompt · 2026-03-01 10:00:00Z\n\nAdd a retry to the fetcher\nwith exponential backoff\n",
		"- **Bash** (failed)", "> ## Subagent a1b2c3d", "> Find the callers of Get"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if err := query.TranscriptHTML(&page, query.TranscriptPage{T: tr}); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	for _, want := range []string{"<!doctype html>", "<style>", `<details class="tool error">`, `<details class="entry subagent" open>`,
		"Add a retry to the fetcher\nwith exponential backoff"} {
		if !strings.Contains(h, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "http://", "https://", " src="} {
		if strings.Contains(h, bad) {
			t.Errorf("html holds %q: a page must load nothing", bad)
		}
	}
}

// TestTranscriptEscapes renders texts that are markup, and a fence, as
// text.
func TestTranscriptEscapes(t *testing.T) {
	evil := "<script>alert(1)</script><img src=x onerror=alert(2)> ``` ````"
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tr := &query.Transcript{Session: query.SessionRef{Platform: "claude_code", SessionID: "s1", Title: evil, Project: evil},
		Main: query.Thread{Entries: []query.Entry{
			{Kind: query.EntryPrompt, TS: ts, Text: evil},
			{Kind: query.EntryReply, TS: ts, Model: evil, Text: evil, Thinking: evil,
				Calls: []query.ToolCall{{Name: evil, Input: []byte(`{"command":"` + strings.ReplaceAll(evil, `"`, `\"`) + `"}`), Output: evil}}},
			{Kind: query.EntryCompaction, TS: ts, Text: evil, Summary: evil},
			{Kind: query.EntryNote, TS: ts, Role: "system", Type: evil, Text: evil},
			{Kind: query.EntrySubagent, TS: ts, Thread: &query.Thread{AgentID: evil, AgentType: evil,
				Entries: []query.Entry{{Kind: query.EntryPrompt, TS: ts, Text: evil}}}},
		}}}
	var page bytes.Buffer
	if err := query.TranscriptHTML(&page, query.TranscriptPage{T: tr, Back: "javascript:alert(3)"}); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	for _, bad := range []string{"<script", "<img", "javascript:"} {
		if strings.Contains(h, bad) {
			t.Errorf("html holds %q", bad)
		}
	}
	if !strings.Contains(h, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the prompt's text is not shown escaped")
	}
	var md bytes.Buffer
	if err := query.TranscriptMarkdown(&md, tr); err != nil {
		t.Fatal(err)
	}
	// The tool's output holds a run of four backticks: its fence has five.
	if !strings.Contains(md.String(), "`````\n"+evil+"\n`````") {
		t.Errorf("markdown fences:\n%s", md.String())
	}
}

// TestExportMessages writes a session's messages as canonical records
// that decode again, in time order, one per message of the session.
func TestExportMessages(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	ref := resolve(t, db, sessA)
	var out bytes.Buffer
	if err := db.ExportMessages(ctx, ref, &out); err != nil {
		t.Fatal(err)
	}
	tab, err := db.SQL(ctx, `SELECT count(*) FROM messages WHERE session_id = ?`, sessA)
	if err != nil {
		t.Fatal(err)
	}
	want := tab.Rows[0][0].(int64)
	dec := schema.NewDecoder(&out)
	var n int64
	var last time.Time
	tools := 0
	for rec, err := range dec.All() {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if rec.Kind != schema.KindMessage || rec.Schema != schema.Version || rec.SessionID != sessA || rec.ID == "" {
			t.Errorf("record %+v", rec)
		}
		if rec.TS.Before(last) {
			t.Errorf("record %s at %s before %s", rec.ID, rec.TS, last)
		}
		last = rec.TS
		tools += len(rec.Tools)
	}
	if n != want || tools == 0 {
		t.Errorf("%d records with %d tools; want %d records, some tools", n, tools, want)
	}
}
