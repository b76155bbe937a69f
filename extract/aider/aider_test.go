package aider

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract/extracttest"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/normalize"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixture copies testdata/aider/projects to a temp dir with fixed mtimes, so
// outputs are reproducible, and returns the copy.
func fixture(t *testing.T) string {
	return extracttest.Fixture(t, "aider/projects", "projects")
}

// utc reads Aider's zone-less times as UTC, whatever the machine's zone.
func utc(k string) string {
	if k == "TZ" {
		return "UTC"
	}
	return ""
}

var find = extracttest.Find

// normalized runs copies of the records through pos-normalize in process,
// leaving recs as the adapter emitted them.
func normalized(t testing.TB, recs []*schema.Record) ([]*schema.Record, normalize.Stats) {
	t.Helper()
	copies := make([]*schema.Record, len(recs))
	for i, r := range recs {
		copies[i] = new(schema.Record)
		if err := schema.Unmarshal(schema.AppendRecord(nil, r), copies[i]); err != nil {
			t.Fatal(err)
		}
	}
	return extracttest.Normalize(t, normalize.Options{}, copies)
}

// checkContract checks what every adapter promises (extracttest.Contract),
// and that every raw record has its session and every message a full time.
func checkContract(t *testing.T, recs []*schema.Record) {
	t.Helper()
	extracttest.Contract(t, recs, 1)
	for _, r := range recs {
		switch r.Kind {
		case schema.KindRaw:
			if r.SessionID == "" {
				t.Fatalf("raw record without a session: %+v", r)
			}
		case schema.KindMessage:
			if r.TS.IsZero() || r.TSPrecision == "" || r.Completeness != schema.CompleteFull {
				t.Fatalf("message %s: ts %v %q, completeness %q", r.ID, r.TS, r.TSPrecision, r.Completeness)
			}
		}
	}
}

func TestFixture(t *testing.T) {
	root := fixture(t)
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}})
	if len(res.Skips) != 0 {
		t.Fatalf("skips: %v", res.Skips)
	}
	// notes' last line has no newline yet: it is left for the next run.
	if got := res.Stats.Partial.Load(); got != 1 {
		t.Fatalf("partial lines %d", got)
	}
	checkContract(t, res.Recs)
	for _, r := range res.Recs {
		if r.Source != nil && !strings.HasSuffix(r.Source.Path, HistoryFile) {
			t.Fatalf("read %s, which is not a chat history", r.Source.Path)
		}
	}
	msgs := find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage })
	byLine := func(file string, line int64) *schema.Record {
		t.Helper()
		for _, m := range msgs {
			if m.Source.Line == line && filepath.Base(filepath.Dir(m.Source.Path)) == file {
				return m
			}
		}
		t.Fatalf("no message at %s:%d", file, line)
		return nil
	}
	blocks := map[string]int{}
	for _, r := range find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindRaw }) {
		var b rawBlock
		if err := decodeRaw(r, &b); err != nil {
			t.Fatal(err)
		}
		blocks[b.Block]++
	}
	if blocks[blockHeader] != 3 || blocks[blockUser] != 9 || blocks[blockAssistant] != 8 || blocks[blockStatus] != 12 {
		t.Fatalf("blocks %v", blocks)
	}

	// A command: its files are named.
	if m := byLine("webapp", 10); m.ContentType != schema.ContentCommand || strings.Join(m.Files, ",") != "src/auth.ts,src/login.ts" ||
		m.TSPrecision != schema.PrecisionExact || !m.TS.Equal(time.Date(2026, 2, 10, 9, 0, 12, 0, time.UTC)) {
		t.Fatalf("/add: %+v", m)
	}
	// A two-line prompt, timed by the input history.
	p := byLine("webapp", 14)
	if p.Role != schema.RoleUser || p.Text != "The login page redirects forever.\nFix the redirect check in auth.ts" ||
		!p.TS.Equal(time.Date(2026, 2, 10, 9, 1, 30, 250e6, time.UTC)) {
		t.Fatalf("prompt: %+v", p)
	}
	// The reply: its "#### " heading and "> " quote stay in it; its edit and
	// its shell command are calls; the Tokens line after it is its usage.
	a := byLine("webapp", 17)
	if a.Role != schema.RoleAssistant || !strings.Contains(a.Text, "#### Why it loops") || !strings.Contains(a.Text, "> The redirect target") ||
		len(a.Tools) != 2 || a.Tools[0].Name != "edit" || a.Tools[1].Name != "shell" || a.Files[0] != "src/auth.ts" ||
		a.Model != "anthropic/claude-sonnet-4-20250514" || a.TSPrecision != schema.PrecisionDerived || !a.TS.Equal(p.TS) ||
		*a.Usage != (schema.Usage{Input: 12000, Output: 345, CacheCreation: 2500, CacheRead: 1100}) || string(a.Meta) != `{"cost_usd":0.05}` {
		t.Fatalf("reply: %+v %+v", a, a.Usage)
	}
	if !strings.Contains(string(a.Tools[0].Input), `"path":"src/auth.ts"`) || string(a.Tools[1].Input) != `{"command":"npm test"}` {
		t.Fatalf("calls: %s %s", a.Tools[0].Input, a.Tools[1].Input)
	}
	// The status lines after it: the edit's result and the commit.
	s := byLine("webapp", 40)
	if s.Role != schema.RoleTool || s.ContentType != schema.ContentToolResult || len(s.Tools) != 1 || s.Tools[0].CallID != a.Tools[0].CallID ||
		s.Usage != nil || string(s.Meta) != `{"commits":["1a2b3c4"]}` || !strings.HasPrefix(s.Text, "Tokens: 12k sent") {
		t.Fatalf("status: %+v", s)
	}
	// A SEARCH/REPLACE of a markdown file whose content has fences, a
	// "> " line and a "#### " line stays one reply.
	r2 := byLine("webapp", 49)
	if len(r2.Tools) != 2 || r2.Files[1] != "README.md" || !strings.Contains(r2.Text, "#### Testing") || r2.Usage.Input != 13000 {
		t.Fatalf("reply with a markdown edit: %+v", r2)
	}
	// A multi-line error of Aider's (blank lines and all) is one status
	// block; the reply after it, with no prompt of its own, has its usage.
	if m := byLine("webapp", 76); m.Role != schema.RoleTool || !strings.Contains(m.Text, "SearchReplaceNoExactMatch") ||
		!strings.Contains(m.Text, "Don't re-send them.") || string(m.Meta) != `{"commits":["5d6e7f8"]}` {
		t.Fatalf("multi-line status: %+v", m)
	}
	if m := byLine("webapp", 95); m.Role != schema.RoleAssistant || m.Usage.Input != 14000 {
		t.Fatalf("reflected reply: %+v", m)
	}
	// The second session: whole edit format, a reply opening with a
	// "#### " heading, a reply cut at the token limit, a usage report with
	// no reply before it.
	if m := byLine("webapp", 119); m.Role != schema.RoleAssistant || !strings.HasPrefix(m.Text, "#### Result") || m.Usage.Input != 1_200_000 || m.Meta != nil {
		t.Fatalf("/ask reply: %+v", m)
	}
	if m := byLine("webapp", 127); len(m.Tools) != 1 || m.Tools[0].Name != "write" || m.Files[0] != "src/auth.ts" || m.Model != "openai/gpt-4o-mini" {
		t.Fatalf("whole-file edit: %+v", m)
	}
	if m := byLine("webapp", 139); m.Role != schema.RoleAssistant || !strings.Contains(m.Text, "hit a token limit") {
		t.Fatalf("cut reply: %+v", m)
	}
	if m := byLine("webapp", 146); m.Role != schema.RoleUser || m.Text != "continue" || m.TSPrecision != schema.PrecisionExact {
		t.Fatalf("prompt after a cut reply: %+v", m)
	}
	unmatched := byLine("webapp", 155)
	if unmatched.TSPrecision != schema.PrecisionDerived || !unmatched.TS.Equal(time.Date(2026, 2, 11, 14, 35, 10, 120e6, time.UTC)) {
		t.Fatalf("prompt missing from the input history: %+v", unmatched)
	}
	if m := byLine("webapp", 157); m.Role != schema.RoleSystem || m.Usage.Input != 900 || string(m.Meta) != `{"cost_usd":0.0001}` {
		t.Fatalf("usage with no reply: %+v", m)
	}
	// A file whose trailing spaces were stripped, without input history.
	if m := byLine("notes", 6); m.Text != "summarize notes.md\nin three bullets" || m.TSPrecision != schema.PrecisionDerived ||
		!m.TS.Equal(time.Date(2026, 1, 5, 8, 15, 0, 0, time.UTC)) {
		t.Fatalf("stripped prompt: %+v", m)
	}
	if m := byLine("notes", 9); m.Usage == nil || m.Usage.Input != 1234 || m.Model != "gpt-4o" {
		t.Fatalf("stripped reply: %+v", m)
	}

	// Sessions: one per header, ids stable, what Aider announced in the
	// session records.
	sess := find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindSession })
	if len(sess) != 3 || sess[1].SessionID == sess[2].SessionID {
		t.Fatalf("sessions: %d", len(sess))
	}
	// notes is read first (files go oldest first, then by path).
	if sess[1].SessionID != schema.ID(platform, "webapp/"+HistoryFile, "2026-02-10 09:00:00") || sess[1].SessionID != p.SessionID ||
		string(sess[2].Meta) != `{"aider_version":"0.86.1","cost_usd":0.61,"edit_format":"whole","model":"openai/gpt-4o-mini","started_at":"2026-02-11 14:30:05"}` {
		t.Fatalf("session records: %s %s", sess[1].SessionID, sess[2].Meta)
	}

	// pos-normalize derives one exchange per prompt.
	out, st := normalized(t, res.Recs)
	if st.Exchanges != 9 || st.Skipped != 0 {
		t.Fatalf("normalize: %+v", st)
	}
	// The exchange with a failed edit holds both replies and their usage.
	p47 := byLine("webapp", 47).ID
	ex := find(out, func(r *schema.Record) bool { return r.Kind == schema.KindExchange && r.Exchange.PromptID == p47 })
	if len(ex) != 1 || ex[0].Usage.Input != 27000 || ex[0].Exchange.ToolCount != 3 || ex[0].Exchange.MessageCount != 5 || !strings.Contains(ex[0].Exchange.Response, "README.md has no Usage") {
		t.Fatalf("exchange: %+v %+v", ex[0].Usage, ex[0].Exchange)
	}
	extracttest.GoldenRecords(t, extracttest.Testdata("aider", "extract.golden.ndjson"), res.Recs, filepath.Dir(root), *update)
}

func decodeRaw(r *schema.Record, b *rawBlock) error {
	return jsonUnmarshal(r.Raw, b)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func TestIncremental(t *testing.T) {
	root := fixture(t)
	first, st := extracttest.FirstRun(t, Adapter{}, extract.Options{Roots: []string{root}}, 2)
	ids := extracttest.IDs(first.Recs)

	// notes: the half-written prompt is completed and answered. The next
	// run reads from the last prompt on, with the same ids for what it
	// read before.
	notes := filepath.Join(root, "notes", HistoryFile)
	extracttest.AppendFile(t, notes, "\n\nYou're welcome.\n\n> Tokens: 1.3k sent, 5 received. Cost: $0.01 request, $0.03 session.\n")
	inc := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	checkContract(t, inc.Recs)
	msgs := find(inc.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage })
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text)
	}
	if len(msgs) != 6 || msgs[0].Text != "summarize notes.md\nin three bullets" || !ids[msgs[0].ID] || msgs[3].Text != "thanks" ||
		msgs[4].Text != "You're welcome." || msgs[4].Usage.Input != 1300 || msgs[4].Model != "gpt-4o" || msgs[0].Source.Line != 6 {
		t.Fatalf("incremental messages %q", texts)
	}
	sess := find(inc.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindSession })
	if len(sess) != 1 || string(sess[0].Meta) != `{"aider_version":"0.50.1","cost_usd":0.03,"edit_format":"diff","model":"gpt-4o","started_at":"2026-01-05 08:15:00"}` {
		t.Fatalf("session record after resume: %+v", sess)
	}
	last := inc.Recs[len(inc.Recs)-1]
	if last.Kind != schema.KindCheckpoint || last.Checkpoint.Size != last.Checkpoint.Seen || last.Checkpoint.Lines != 14 {
		t.Fatalf("checkpoint %+v", last.Checkpoint)
	}
	extracttest.Commit(st, inc.Recs)

	// webapp: a new session and a prompt, timed by a new input entry.
	web := filepath.Join(root, "webapp")
	extracttest.AppendFile(t, filepath.Join(web, InputFile), "\n# 2026-02-12 08:00:03.000000\n+and now?\n")
	extracttest.AppendFile(t, filepath.Join(web, HistoryFile), "\n# aider chat started at 2026-02-12 08:00:00\n\n#### and now?  \n\nNothing left.\n")
	inc2 := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	msgs = find(inc2.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage })
	// It resumes at the last prompt of the session that was open.
	if len(msgs) != 4 || msgs[0].Text != "this prompt is not in the input history" || msgs[2].Text != "and now?" ||
		msgs[2].TSPrecision != schema.PrecisionExact || !msgs[2].TS.Equal(time.Date(2026, 2, 12, 8, 0, 3, 0, time.UTC)) ||
		msgs[2].SessionID != schema.ID(platform, "webapp/"+HistoryFile, "2026-02-12 08:00:00") || msgs[3].Text != "Nothing left." {
		for _, m := range msgs {
			t.Logf("%s %q", m.Role, m.Text)
		}
		t.Fatalf("new session")
	}
	// The session that was open is re-emitted whole before the new one.
	sess = find(inc2.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindSession })
	if len(sess) != 2 || !strings.Contains(string(sess[0].Meta), `"cost_usd":0.61`) {
		t.Fatalf("sessions: %+v", sess)
	}
}

func TestNoRootsReadsNothing(t *testing.T) {
	home := fixture(t)
	if l := (Adapter{}).Locations(extract.Options{Home: home}); len(l) != 0 {
		t.Fatalf("default locations %v", l)
	}
	if res := extracttest.Run(t, Adapter{}, extract.Options{Home: home}); len(res.Recs) != 0 {
		t.Fatalf("read %d records without a root", len(res.Recs))
	}
}

func TestRootIsAFile(t *testing.T) {
	root := fixture(t)
	other := filepath.Join(root, "webapp", "chat.md")
	b, _ := os.ReadFile(filepath.Join(root, "notes", HistoryFile))
	os.WriteFile(other, b, 0o644)
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{other}})
	if n := len(find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage })); n != 4 {
		t.Fatalf("a history given as a file: %d messages", n)
	}
}

func TestSince(t *testing.T) {
	root := fixture(t)
	since := time.Date(2026, 2, 11, 0, 0, 0, 0, time.UTC)
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, Since: since})
	n := 0
	for _, r := range res.Recs {
		if r.Kind == schema.KindMessage || r.Kind == schema.KindRaw {
			n++
			if r.TS.Before(since) {
				t.Fatalf("record older than --since: %s %v", r.ID, r.TS)
			}
		}
	}
	if n == 0 {
		t.Fatal("newer records were dropped")
	}
}

func TestParseTokens(t *testing.T) {
	for _, tc := range []struct {
		in        string
		want      schema.Usage
		cost, ses float64
		ok        bool
	}{
		{"Tokens: 2.4k sent, 104 received. Cost: $0.00042 message, $0.00042 session.", schema.Usage{Input: 2400, Output: 104}, 0.00042, 0.00042, true},
		{"Tokens: 10k sent, 412 received. Cost: $0.0018 message, $0.01 session.", schema.Usage{Input: 10000, Output: 412}, 0.0018, 0.01, true},
		{"Tokens: 15k sent, 3.1k cache write, 1.2k cache hit, 496 received. Cost: $0.07 message, $0.19 session.", schema.Usage{Input: 15000, Output: 496, CacheCreation: 3100, CacheRead: 1200}, 0.07, 0.19, true},
		{"Tokens: 1.2M sent, 85 received.", schema.Usage{Input: 1200000, Output: 85}, 0, 0, true},
		{"Tokens: 1,234 sent, 56 received. Cost: $0.01 request, $0.02 session.", schema.Usage{Input: 1234, Output: 56}, 0.01, 0.02, true},
		{"Tokens: many", schema.Usage{}, 0, 0, false},
		{"Applied edit to x", schema.Usage{}, 0, 0, false},
	} {
		got, ok := parseTokens(tc.in)
		if ok != tc.ok || got.usage != tc.want || got.cost != tc.cost || got.sessionCost != tc.ses {
			t.Errorf("%q: %+v %v", tc.in, got, ok)
		}
	}
}

// Independent counts over the real file: Aider's usage lines, by regular
// expression, not by the adapter's parser.
var (
	corpusTokensRE = regexp.MustCompile(`(?m)^> Tokens: ([0-9.]+)(k?) sent, ([0-9.]+)(k?) received\. Cost: \$([0-9.]+) message, \$([0-9.]+) session\.`)
	corpusPromptRE = regexp.MustCompile(`(?m)^#### `)
	corpusHeaderRE = regexp.MustCompile(`(?m)^# aider chat started at `)
)

func TestCorpus(t *testing.T) {
	dir, res := extracttest.Corpus(t, Adapter{}, "aider")
	checkContract(t, res.Recs)
	var raws, msgs, prompts, exact, replies int
	var got schema.Usage
	var cost float64
	for _, r := range res.Recs {
		switch r.Kind {
		case schema.KindRaw:
			raws++
		case schema.KindMessage:
			msgs++
			if r.Role == schema.RoleUser {
				prompts++
				if r.TSPrecision == schema.PrecisionExact {
					exact++
				}
			}
			if r.Role == schema.RoleAssistant {
				replies++
				got.Add(r.Usage)
				var m struct {
					Cost float64 `json:"cost_usd"`
				}
				if len(r.Meta) > 0 {
					if err := jsonUnmarshal(r.Meta, &m); err != nil {
						t.Fatal(err)
					}
				}
				cost += m.Cost
			}
		}
	}
	files, _ := (&extract.Options{}).Walk(context.Background(), []string{dir}, extract.Match{Name: func(p string) bool { return filepath.Base(p) == HistoryFile }})
	var want schema.Usage
	var wantCost, lastSession float64
	var wantPrompts, headers int
	for _, f := range files {
		b, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		num := func(s, k string) int64 {
			v, _ := strconv.ParseFloat(s, 64)
			if k == "k" {
				v *= 1000
			}
			return int64(math.Round(v))
		}
		for _, m := range corpusTokensRE.FindAllStringSubmatch(string(b), -1) {
			want.Input += num(m[1], m[2])
			want.Output += num(m[3], m[4])
			c, _ := strconv.ParseFloat(m[5], 64)
			wantCost += c
			lastSession, _ = strconv.ParseFloat(m[6], 64)
		}
		// Prompts: runs of consecutive "#### " lines.
		inPrompt := false
		for _, l := range strings.Split(string(b), "\n") {
			p := corpusPromptRE.MatchString(l)
			if p && !inPrompt {
				wantPrompts++
			}
			inPrompt = p
		}
		headers += len(corpusHeaderRE.FindAllIndex(b, -1))
	}
	t.Logf("corpus: %d files, %d raw records, %d messages, %d prompts (%d timed by the input history), usage %+v, cost $%.5f (session total $%.2f)",
		len(files), raws, msgs, prompts, exact, got, cost, lastSession)
	if len(files) != 1 || raws != 39 || msgs != 38 || prompts != 12 || wantPrompts != 12 || headers != 1 || replies != 12 {
		t.Fatalf("counts: %d files, %d raw, %d messages, %d prompts (want %d), %d replies", len(files), raws, msgs, prompts, wantPrompts, replies)
	}
	if exact != 12 {
		t.Fatalf("%d of 12 prompts timed by the input history", exact)
	}
	if got != want || want.Input != 73600 || want.Output != 4303 {
		t.Fatalf("usage %+v, want %+v", got, want)
	}
	if math.Abs(cost-wantCost) > 1e-9 || math.Abs(cost-0.01346) > 1e-9 {
		t.Fatalf("cost %v, want %v", cost, wantCost)
	}
	out, st := normalized(t, res.Recs)
	if st.Exchanges != 12 || st.Messages != 38 || st.Raw != 39 || st.Sessions != 1 {
		t.Fatalf("normalize: %+v", st)
	}
	for _, r := range out {
		if r.Kind == schema.KindSession && (r.Usage.Input != want.Input || r.Session.ExchangeCount != 12) {
			t.Fatalf("session rollup: %+v %+v", r.Usage, r.Session)
		}
	}
}
