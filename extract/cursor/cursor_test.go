package cursor

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract/extracttest"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/internal/testfs"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

func homeOpt(home string) extract.Options {
	return extract.Options{Home: home, Env: func(string) string { return "" }}
}

var find = extracttest.Find

func message(t *testing.T, recs []*schema.Record, session, bubble string) *schema.Record {
	t.Helper()
	id := schema.ID(platform, session, bubble)
	for _, r := range recs {
		if r.Kind == schema.KindMessage && r.ID == id {
			return r
		}
	}
	t.Fatalf("no message %s/%s", session, bubble)
	return nil
}

func sessionRec(t *testing.T, recs []*schema.Record, session string) *schema.Record {
	t.Helper()
	var out *schema.Record
	for _, r := range recs {
		if r.Kind == schema.KindSession && r.SessionID == session {
			if out != nil {
				t.Fatalf("two session records for %s", session)
			}
			out = r
		}
	}
	if out == nil {
		t.Fatalf("no session record for %s", session)
	}
	return out
}

func TestFixture(t *testing.T) {
	home := fixture(t)
	res := extracttest.Run(t, Adapter{}, homeOpt(home))

	// The composerData that is not JSON and the broken transcript line are
	// reported with where they are; the half-written last line is left
	// for the next run.
	if len(res.Skips) != 2 ||
		res.Skips[0].Key != "cursorDiskKV:composerData:"+cBad || !strings.HasSuffix(res.Skips[0].Path, "globalStorage/state.vscdb") ||
		res.Skips[1].Line != 4 || !strings.HasSuffix(res.Skips[1].Path, trMain+".jsonl") {
		t.Fatalf("skips: %v", res.Skips)
	}
	if got := res.Stats.Partial.Load(); got != 1 {
		t.Fatalf("partial lines %d", got)
	}
	for _, r := range res.Recs {
		if r.Source != nil && (strings.HasSuffix(r.Source.Path, ".backup") || strings.HasSuffix(r.Source.Path, "notes.txt") || strings.HasSuffix(r.Source.Path, trMain+".txt")) {
			t.Fatalf("read %s", r.Source.Path)
		}
	}

	// Every row is a raw record with its key; a bubble row's message follows
	// it with the same provenance; other messages point into their row.
	for i, r := range res.Recs {
		switch r.Kind {
		case schema.KindRaw:
			if len(r.Raw) == 0 || r.Source == nil || r.ID != schema.RawID(r) || (r.Source.Key == "" && r.Source.Line == 0) {
				t.Fatalf("raw record without raw or provenance: %+v", r)
			}
		case schema.KindMessage:
			if len(r.Raw) > 0 || r.Source == nil || r.Source.Key == "" && r.Source.Line == 0 {
				t.Fatalf("message %s without provenance", r.ID)
			}
			own := !strings.Contains(r.Source.Key, "#")
			if own && (res.Recs[i-1].Kind != schema.KindRaw || *res.Recs[i-1].Source != *r.Source) {
				t.Fatalf("message %s does not follow its row's raw record", r.Source.Key)
			}
		}
	}

	// 2025: order from fullConversationHeadersOnly, bodies from bubbleId
	// rows, project and workspace from the head, title from the composer.
	s := sessionRec(t, res.Recs, cKV)
	if s.Title != "Fix login redirect" || s.Session.TitleSource != "platform" || s.Project != "/home/dev/webapp" || s.Completeness != schema.CompletePartial {
		t.Fatalf("2025 session: %+v", s)
	}
	for _, w := range []string{`"mode":"agent"`, `"lines_added":5`, `"lines_removed":2`, `"context_usage_percent":42.5`, `"cost_cents":12`, `"model":"claude-4-sonnet"`, `"workspace":"aaaa1111"`, `"bodies_missing":2`, `"bubbles":11`} {
		if !strings.Contains(string(s.Meta), w) {
			t.Fatalf("2025 session meta %s lacks %s", s.Meta, w)
		}
	}
	u1, a1, a2, a3 := message(t, res.Recs, cKV, "u1"), message(t, res.Recs, cKV, "a1"), message(t, res.Recs, cKV, "a2"), message(t, res.Recs, cKV, "a3")
	t0 := time.UnixMilli(ms(1, 0)).UTC()
	if u1.Role != schema.RoleUser || !u1.TS.Equal(t0) || u1.TSPrecision != schema.PrecisionDerived || u1.Files[0] != "/home/dev/webapp/src/auth.ts" || u1.Source.Key != "cursorDiskKV:bubbleId:"+cKV+":u1" {
		t.Fatalf("prompt: %+v", u1)
	}
	if !a1.TS.Equal(t0) || a1.TSPrecision != schema.PrecisionExact || a1.ParentID != u1.ID || a1.RequestID != "gen-1" {
		t.Fatalf("answer: %+v", a1)
	}
	if a2.ContentType != schema.ContentToolUse || a2.Tools[0].Name != "read_file" || string(a2.Tools[0].Input) != `{"target_file": "src/auth.ts"}` ||
		!strings.Contains(a2.Tools[0].Output, "export function login") || a2.Files[0] != "/home/dev/webapp/src/auth.ts" {
		t.Fatalf("tool call: %+v", a2)
	}
	if a3.Usage == nil || a3.Usage.Input != 1200 || a3.Usage.Output != 300 || !a3.TS.Equal(time.UnixMilli(ms(1, 20)).UTC()) || a3.TSPrecision != schema.PrecisionDerived {
		t.Fatalf("turn end: %+v %+v", a3, a3.Usage)
	}
	if a4 := message(t, res.Recs, cKV, "a4"); a4.ContentType != schema.ContentThinking || a4.Thinking != "Guard the redirect once." || a4.Model != "claude-4.5-sonnet" {
		t.Fatalf("thinking: %+v", a4)
	}
	a5, a6 := message(t, res.Recs, cKV, "a5"), message(t, res.Recs, cKV, "a6")
	if a5.Completeness != schema.CompleteMetadata || a5.Source.Key != "cursorDiskKV:composerData:"+cKV+"#/fullConversationHeadersOnly/6" {
		t.Fatalf("pruned bubble: %+v", a5)
	}
	if a6.Completeness != schema.CompleteMetadata || a6.Source.Key != "cursorDiskKV:bubbleId:"+cKV+":a6" {
		t.Fatalf("NULL bubble: %+v", a6)
	}
	if a7 := message(t, res.Recs, cKV, "a7"); !a7.TS.Equal(time.UnixMilli(ms(5, 45)).UTC()) || a7.Tools[0].Name != "edit_file" {
		t.Fatalf("last bubble of the turn: %+v", a7)
	}
	u3, a8 := message(t, res.Recs, cKV, "u3"), message(t, res.Recs, cKV, "a8")
	if u3.TSPrecision != schema.PrecisionExact || !u3.TS.Equal(time.Date(2026, 3, 1, 10, 20, 0, 0, time.UTC)) || a8.TSPrecision != schema.PrecisionDerived || !a8.Tools[0].IsError {
		t.Fatalf("header time, tool error: %+v %+v", u3, a8)
	}
	orphan := find(res.Recs, func(r *schema.Record) bool { return r.Source != nil && strings.HasSuffix(r.Source.Key, ":zz-orphan") })
	if len(orphan) != 1 || orphan[0].Kind != schema.KindRaw || orphan[0].SessionID != cKV {
		t.Fatalf("bubble outside the order: %+v", orphan)
	}

	// A NULL composerData and a broken one: raw records; their bubbles
	// (and those of a composer without composerData) raw only.
	for _, key := range []string{"cursorDiskKV:composerData:" + cNull, "cursorDiskKV:bubbleId:" + cBad + ":b1", "cursorDiskKV:bubbleId:" + cOrphan + ":o1"} {
		rs := find(res.Recs, func(r *schema.Record) bool { return r.Source != nil && r.Source.Key == key })
		if len(rs) != 1 || rs[0].Kind != schema.KindRaw {
			t.Fatalf("%s: %+v", key, rs)
		}
	}
	if rs := find(res.Recs, func(r *schema.Record) bool {
		return r.Source != nil && r.Source.Key == "cursorDiskKV:composerData:"+cNull
	}); string(rs[0].Raw) != `{"$sqlite":"null"}` {
		t.Fatalf("NULL value raw: %s", rs[0].Raw)
	}
	// A value that is not JSON is reported, and kept raw, wrapped.
	bad := find(res.Recs, func(r *schema.Record) bool {
		return r.Source != nil && r.Source.Key == "cursorDiskKV:composerData:"+cBad
	})
	if len(bad) != 1 || string(bad[0].Raw) != `{"$sqlite":"text","value":"{not json"}` {
		t.Fatalf("non-JSON value: %+v", bad)
	}
	if e := sessionRec(t, res.Recs, cEmpty); e.Title != "" || e.Completeness != schema.CompleteFull || !strings.Contains(string(e.Meta), `"mode":"chat"`) {
		t.Fatalf("empty composer: %+v", e)
	}
	if h := sessionRec(t, res.Recs, cHeadOnly); h.Title != "Lost chat" || h.Completeness != schema.CompleteMetadata || h.Project != "/home/dev/webapp" {
		t.Fatalf("head without a body: %+v", h)
	}
	if k2 := message(t, res.Recs, cInlineKV, "k2"); k2.Source.Key != "cursorDiskKV:composerData:"+cInlineKV+"#/conversation/1" {
		t.Fatalf("inline conversation in a composerData row: %+v", k2.Source)
	}

	if rs := find(res.Recs, func(r *schema.Record) bool {
		return r.Source != nil && r.Source.Key == "cursorDiskKV:bubbleId:"+cInlineKV+":k2"
	}); len(rs) != 1 || rs[0].Kind != schema.KindRaw {
		t.Fatalf("bubble row beside an inline conversation: %+v", rs)
	}

	// 2024: the conversation inline in the workspace's composer.composerData.
	i2 := message(t, res.Recs, cInline, "i2")
	if i2.Text != "Added login.test.ts." || i2.Project != "/home/dev/multi" || i2.Source.Key != "ItemTable:composer.composerData#/allComposers/0/conversation/1" {
		t.Fatalf("2024 inline: %+v", i2)
	}
	if s := sessionRec(t, res.Recs, cInline); s.Title != "Add tests" || !strings.Contains(string(s.Meta), `"layout":"composer_inline"`) || !strings.Contains(string(s.Meta), `"workspace":"cccc3333"`) {
		t.Fatalf("2024 session: %+v", s)
	}

	// 2023: tabs and bubbles, times derived from the context cache and the
	// tab's last send, the empty input bubble skipped.
	tu1, ta1, tu2, ta2 := message(t, res.Recs, tab1, "t1-u1"), message(t, res.Recs, tab1, "t1-a1"), message(t, res.Recs, tab1, "t1-u2"), message(t, res.Recs, tab1, "t1-a2")
	if tu1.Text != "How do I center a div?" || !tu1.TS.Equal(time.UnixMilli(ms(10, 1)).UTC()) || tu1.TSPrecision != schema.PrecisionDerived ||
		tu1.Files[0] != "/home/dev/old site/index.html" || tu1.Project != "/home/dev/old site" {
		t.Fatalf("2023 prompt: %+v", tu1)
	}
	if ta1.Model != "gpt-4" || ta1.Text != "Use flexbox." || !ta1.TS.Equal(tu1.TS) {
		t.Fatalf("2023 answer: %+v", ta1)
	}
	if tu2.Text != "And vertically?" || !tu2.TS.Equal(time.UnixMilli(ms(12, 0)).UTC()) || ta2.Model != "" {
		t.Fatalf("2023 last prompt: %+v %+v", tu2, ta2)
	}
	if n := len(find(res.Recs, func(r *schema.Record) bool {
		return r.Kind == schema.KindMessage && (r.SessionID == tab1 || r.SessionID == tab2)
	})); n != 4 {
		t.Fatalf("2023 messages: %d, want 4 (drafts skipped)", n)
	}
	if s := sessionRec(t, res.Recs, tab1); excerpt.Title(s) != "How do I center a div?" {
		t.Fatalf("2023 title %q", s.Title)
	}
	if s := sessionRec(t, res.Recs, tab2); s.Title != "" || !s.TS.Equal(time.UnixMilli(ms(13, 0)).UTC()) {
		t.Fatalf("2023 empty tab: %+v", s)
	}

	// Agent transcripts.
	tr := find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage && r.SessionID == trMain })
	if len(tr) != 6 {
		t.Fatalf("transcript messages: %d", len(tr))
	}
	if tr[0].Text != "Refactor auth.ts" || tr[0].Role != schema.RoleUser || tr[0].TSPrecision != schema.PrecisionFileMtime || tr[0].Project != "/home/dev/webapp" {
		t.Fatalf("transcript prompt: %+v", tr[0])
	}
	if tr[1].Tools[0].Name != "Read" || tr[1].Files[0] != "/home/dev/webapp/src/auth.ts" || tr[2].Role != schema.RoleTool || tr[2].Tools[0].Output != "export function login() {}" {
		t.Fatalf("transcript tools: %+v %+v", tr[1], tr[2])
	}
	if tr[3].Thinking != "Split it." || tr[4].Agent == nil || tr[4].Agent.ID != trSub || !tr[4].Agent.Sidechain || tr[4].Text != "Find every caller of login." {
		t.Fatalf("transcript thinking, subagent: %+v %+v", tr[3], tr[4])
	}
	legacy := find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage && r.SessionID == trLegacy })
	if len(legacy) != 4 || legacy[0].Text != "What does build.ts do?" || legacy[1].Thinking != "Look at the file." || legacy[1].Text != "It bundles the app." ||
		legacy[1].Tools[0].Name != "read_file" || string(legacy[1].Tools[0].Input) != `{"target_file":"build.ts"}` || legacy[1].Tools[0].Output != "export default build" || legacy[1].Files[0] != "/home/dev/webapp/build.ts" {
		t.Fatalf("legacy transcript: %+v", legacy)
	}
	// The transcript of a conversation the database holds: raw only.
	dup := find(res.Recs, func(r *schema.Record) bool { return r.Source != nil && strings.HasSuffix(r.Source.Path, cKV+".jsonl") })
	if len(dup) != 1 || dup[0].Kind != schema.KindRaw {
		t.Fatalf("duplicate transcript: %+v", dup)
	}

	// The fixture's temporary home is written $HOME.
	got := bytes.ReplaceAll(extracttest.Encode(res.Recs), []byte(home), []byte("$HOME"))
	extracttest.Golden(t, extracttest.Testdata("cursor", "extract.golden.ndjson"), got, *update)
}

// TestCredentialsNeverRead plants credential rows and look-alike keys in
// every database and checks that nothing of them reaches the output.
func TestCredentialsNeverRead(t *testing.T) {
	home := fixture(t)
	st := watermark.NewState()
	res := extracttest.Run(t, Adapter{}, extract.Options{Home: home, State: st})
	if len(res.Recs) < 50 {
		t.Fatalf("only %d records", len(res.Recs))
	}
	for _, s := range append(secrets, "cursorAuth", "storage.serviceMachineId", "aiService.prompts", "checkpointId") {
		if bytes.Contains(extracttest.Encode(res.Recs), []byte(s)) {
			i := bytes.Index(extracttest.Encode(res.Recs), []byte(s))
			t.Fatalf("%q reached the output: …%s…", s, extracttest.Encode(res.Recs)[max(0, i-200):min(len(extracttest.Encode(res.Recs)), i+100)])
		}
	}
}

func TestSince(t *testing.T) {
	home := fixture(t)
	since := time.Date(2026, 3, 1, 10, 10, 0, 0, time.UTC)
	res := extracttest.Since(t, Adapter{}, extract.Options{Home: home, Since: since})
	if len(find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage && r.SessionID == cKV })) == 0 {
		t.Fatal("newer messages were dropped")
	}
	// Files older than --since are not read at all.
	none := extracttest.Run(t, Adapter{}, extract.Options{Home: home, Since: fixtureMtime.Add(time.Hour)})
	if len(none.Recs) != 0 {
		t.Fatalf("%d records from files older than --since", len(none.Recs))
	}
}

func TestDefaultLocations(t *testing.T) {
	opt := &extract.Options{Home: "/h", Env: func(k string) string {
		return map[string]string{"APPDATA": `C:\Users\u\AppData\Roaming`}[k]
	}}
	for goos, want := range map[string]string{
		"linux":   filepath.Join("/h", ".config", "Cursor", "User"),
		"darwin":  filepath.Join("/h", "Library", "Application Support", "Cursor", "User"),
		"windows": filepath.Join(`C:\Users\u\AppData\Roaming`, "Cursor", "User"),
	} {
		if got := userDirs(opt, goos); len(got) != 1 || got[0] != want {
			t.Errorf("%s: %v, want %s", goos, got, want)
		}
	}
	xdg := &extract.Options{Home: "/h", Env: func(k string) string { return map[string]string{"XDG_CONFIG_HOME": "/x"}[k] }}
	if got := userDirs(xdg, "linux"); got[0] != filepath.Join("/x", "Cursor", "User") {
		t.Errorf("XDG_CONFIG_HOME: %v", got)
	}
	if got := (Adapter{}).Locations(extract.Options{Home: "/h"}); len(got) != 3 || got[2] != filepath.Join("/h", ".cursor", "projects") {
		t.Errorf("locations %v", got)
	}
	if got := (Adapter{}).Locations(extract.Options{}); len(got) != 0 {
		t.Errorf("locations without a home: %v", got)
	}
}

// TestRoots checks that --root may name a User directory, a database, a
// workspaceStorage directory, an agent-transcripts directory or ~/.cursor.
func TestRoots(t *testing.T) {
	home := fixture(t)
	all := extracttest.Run(t, Adapter{}, homeOpt(home))
	user := filepath.Join(home, ".config", "Cursor", "User")
	count := func(res extracttest.Result, pred func(*schema.Record) bool) int { return len(find(res.Recs, pred)) }
	isMsg := func(r *schema.Record) bool { return r.Kind == schema.KindMessage }
	for _, c := range []struct {
		root  string
		want  func(*schema.Record) bool
		extra int // the transcript of a conversation in a database not read
	}{
		{user, func(r *schema.Record) bool { return isMsg(r) && strings.HasSuffix(r.Source.Path, ".vscdb") }, 0},
		{filepath.Dir(user), func(r *schema.Record) bool { return isMsg(r) && strings.HasSuffix(r.Source.Path, ".vscdb") }, 0},
		{filepath.Join(user, "globalStorage", dbName), func(r *schema.Record) bool {
			return isMsg(r) && strings.Contains(r.Source.Path, "globalStorage")
		}, 0},
		{filepath.Join(user, "workspaceStorage"), func(r *schema.Record) bool {
			return isMsg(r) && strings.Contains(r.Source.Path, "workspaceStorage")
		}, 0},
		{filepath.Join(home, ".cursor", "projects", "home-dev-webapp", "agent-transcripts"), func(r *schema.Record) bool {
			return isMsg(r) && strings.Contains(r.Source.Path, "agent-transcripts")
		}, 1},
		{filepath.Join(home, ".cursor"), func(r *schema.Record) bool { return isMsg(r) && strings.Contains(r.Source.Path, "agent-transcripts") }, 1},
	} {
		res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{c.root}})
		want := count(all, c.want) + c.extra
		if got := count(res, isMsg); got != want || want == 0 {
			t.Errorf("--root %s: %d messages, want %d", strings.TrimPrefix(c.root, home), got, want)
		}
	}
	// Only the global database: the head's project is not known, the
	// transcript of a conversation in it is read.
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{filepath.Join(user, "globalStorage", dbName)}})
	if s := sessionRec(t, res.Recs, cKV); s.Project != "" {
		t.Errorf("project without the workspace: %q", s.Project)
	}
	dup := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{filepath.Join(home, ".cursor", "projects", "home-dev-webapp", "agent-transcripts", cKV)}})
	if n := count(dup, isMsg); n != 1 {
		t.Errorf("transcript read alone: %d messages", n)
	}
}

// TestNotADatabase checks that a file that is not a database is reported
// and skipped, and that the failed snapshot leaves nothing behind.
func TestNotADatabase(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	bad := filepath.Join(dir, dbName)
	testfs.WriteFile(t, bad, strings.Repeat("not a database ", 400))
	good := filepath.Join(dir, "ws", dbName)
	writeDB(t, good, false, inlineRows())
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{dir}, Env: func(k string) string {
		if k == "TMPDIR" || k == "TEMP" {
			return tmp
		}
		return ""
	}})
	if len(res.Skips) != 1 || res.Skips[0].Path != bad || !strings.Contains(res.Skips[0].Error(), "cannot copy the database") {
		t.Fatalf("skips %v", res.Skips)
	}
	if len(find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage })) != 2 {
		t.Fatal("the good database was not read")
	}
	left, _ := os.ReadDir(tmp)
	if len(left) != 0 {
		t.Fatalf("snapshot left behind: %v", left)
	}
}

func TestSQLiteURI(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b c/state.vscdb":  "file:/a/b c/state.vscdb?mode=ro",
		"/a/#1?/x%y.vscdb":    "file:/a/%231%3F/x%25y.vscdb?mode=ro",
		"//server/share/x.db": "file:////server/share/x.db?mode=ro",
	} {
		if got := sqliteURI(in, "mode=ro"); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	// A path with '#' and '?' opens the right file.
	dir := filepath.Join(t.TempDir(), "odd #dir?")
	p := filepath.Join(dir, dbName)
	writeDB(t, p, false, inlineRows())
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{dir}})
	if len(res.Skips) != 0 || len(find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage })) != 2 {
		t.Fatalf("odd path: %v", res.Skips)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "odd ")); err == nil {
		t.Fatal("a database was created at the truncated path")
	}
}

func TestTranscriptIdentity(t *testing.T) {
	for in, want := range map[string]trIdentity{
		"/h/.cursor/projects/home-u-p/agent-transcripts/X/X.jsonl":           {session: "X", slug: "home-u-p"},
		"/h/.cursor/projects/home-u-p/agent-transcripts/X/subagents/S.jsonl": {session: "X", agent: "S", slug: "home-u-p"},
		"/h/.cursor/projects/home-u-p/agent-transcripts/Y.txt":               {session: "Y", slug: "home-u-p"},
		"/h/.cursor/projects/agent-transcripts/Z/Z.jsonl":                    {session: "Z"},
		"/elsewhere/X/subagents/S.jsonl":                                     {session: "X", agent: "S"},
		"/elsewhere/W.jsonl":                                                 {session: "W"},
		"/h/.cursor/projects/p/agent-transcripts/X/deeper/more/thing.jsonl":  {session: "thing", slug: "p"},
	} {
		if got := transcriptIdentity(in); got != want {
			t.Errorf("%s: %+v, want %+v", in, got, want)
		}
	}
	if slug("/home/me/dp-2.0/k_one") != "home-me-dp-2-0-k-one" || slug(`D:\Cursor\EDM`) != "D-Cursor-EDM" {
		t.Error("slug")
	}
}

// TestWorkersOrder checks that the output does not depend on how many
// sources are read at once.
func TestWorkersOrder(t *testing.T) {
	home := fixture(t)
	one := homeOpt(home)
	one.Workers = 1
	many := homeOpt(home)
	many.Workers = 8
	if a, b := extracttest.Encode(extracttest.Run(t, Adapter{}, one).Recs), extracttest.Encode(extracttest.Run(t, Adapter{}, many).Recs); !bytes.Equal(a, b) {
		t.Fatal("the output depends on the number of workers")
	}
}
