package claudecode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

const s4 = "44444444-4444-4444-8444-444444444444"

// namesLines is a session that Claude Code labelled (ai-title) and the
// user renamed (/rename writes custom-title and agent-name), after which
// Claude Code labelled it again.
var namesLines = []string{
	`{"parentUuid":null,"isSidechain":false,"type":"user","sessionId":"` + s4 + `","uuid":"d0000000-0000-4000-8000-000000000001","timestamp":"2026-03-04T09:00:00.000Z","cwd":"/home/dev/app","message":{"role":"user","content":"the login test is flaky"}}`,
	`{"parentUuid":"d0000000-0000-4000-8000-000000000001","isSidechain":false,"type":"assistant","sessionId":"` + s4 + `","uuid":"d0000000-0000-4000-8000-000000000002","timestamp":"2026-03-04T09:00:05.000Z","cwd":"/home/dev/app","requestId":"req_d1","message":{"id":"msg_d1","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"Looking."}],"usage":{"input_tokens":3,"output_tokens":4}}}`,
	`{"type":"ai-title","aiTitle":"Fix the flaky login test","sessionId":"` + s4 + `"}`,
	`{"type":"custom-title","customTitle":"login-flake","sessionId":"` + s4 + `"}`,
	`{"type":"agent-name","agentName":"login-flake","sessionId":"` + s4 + `"}`,
	`{"type":"ai-title","aiTitle":"Login test fixes","sessionId":"` + s4 + `"}`,
	`{"type":"pr-link","sessionId":"` + s4 + `","prNumber":55,"prUrl":"https://github.com/acme/app/pull/55","prRepository":"acme/app","timestamp":"2026-03-04T09:01:00.000Z"}`,
	`{"type":"pr-link","sessionId":"` + s4 + `","prNumber":55,"prUrl":"https://github.com/acme/app/pull/55","prRepository":"acme/app","timestamp":"2026-03-04T09:02:00.000Z"}`,
	`{"type":"pr-link","sessionId":"` + s4 + `","prNumber":7,"prRepository":"acme/lib","timestamp":"2026-03-04T09:03:00.000Z"}`,
}

func sessionRecs(recs []*schema.Record) []*schema.Record {
	return find(recs, func(r *schema.Record) bool { return r.Kind == schema.KindSession })
}

func TestSessionNames(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-home-dev-app")
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, s4+".jsonl")
	write := func(lines ...string) { extracttest.AppendFile(t, path, strings.Join(lines, "\n")+"\n") }
	write(namesLines...)
	st := watermark.NewState()
	first := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	extracttest.Commit(st, first.Recs)

	// The user's name wins over Claude Code's labels, the later one too.
	ss := sessionRecs(first.Recs)
	if len(ss) != 1 || ss[0].Title != "login-flake" || ss[0].Session.TitleSource != schema.TitleUser || ss[0].SessionID != s4 {
		t.Fatalf("session records: %+v", ss)
	}
	// The pull requests it linked, once each (Claude Code writes a link
	// again on resume), by URL, made from the repository and number when
	// the line has no URL.
	if got := ss[0].Session.PullRequests; !slices.Equal(got, []string{"https://github.com/acme/app/pull/55", "https://github.com/acme/lib/pull/7"}) {
		t.Fatalf("pull requests %q", got)
	}
	// Each line is kept raw, a name with its neighbours' time, a link
	// with its own.
	for typ, prec := range map[string]schema.Precision{"ai-title": schema.PrecisionDerived, "custom-title": schema.PrecisionDerived,
		"agent-name": schema.PrecisionDerived, "pr-link": schema.PrecisionExact} {
		raws := find(first.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindRaw && r.NativeType == typ })
		if len(raws) == 0 || raws[0].SessionID != s4 || raws[0].TSPrecision != prec || raws[0].TS.IsZero() {
			t.Fatalf("%s lines: %d %+v", typ, len(raws), raws)
		}
	}
	if msgs := find(first.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage }); len(msgs) != 2 {
		t.Fatalf("%d messages, want the prompt and the reply", len(msgs))
	}

	// A sync that reads from a new prompt on, and so sees only a new
	// label, says so as the platform's: the lake keeps the user's name
	// above it (title_source).
	write(`{"parentUuid":"d0000000-0000-4000-8000-000000000002","isSidechain":false,"type":"user","sessionId":"`+s4+`","uuid":"d0000000-0000-4000-8000-000000000003","timestamp":"2026-03-04T10:00:00.000Z","cwd":"/home/dev/app","message":{"role":"user","content":"it failed again"}}`,
		`{"type":"ai-title","aiTitle":"Login flake, round two","sessionId":"`+s4+`"}`)
	inc := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	ss = sessionRecs(inc.Recs)
	if len(ss) != 1 || ss[0].Title != "Login flake, round two" || ss[0].Session.TitleSource != schema.TitlePlatform {
		t.Fatalf("incremental session records: %+v", ss)
	}
	extracttest.Commit(st, inc.Recs)

	// A blank name names nothing (the read starts again at the open
	// exchange, whose label holds); a file without names has no title.
	write(`{"type":"custom-title","customTitle":"  ","sessionId":"` + s4 + `"}`)
	blank := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	if ss := sessionRecs(blank.Recs); len(ss) != 1 || ss[0].Title != "Login flake, round two" || ss[0].Session.TitleSource != schema.TitlePlatform {
		t.Fatalf("a blank name: %+v", ss)
	}
	plain := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{fixture(t)}})
	for _, s := range sessionRecs(plain.Recs) {
		if s.Title != "" || s.Session.TitleSource != "" {
			t.Fatalf("a session without names has a title: %+v", s)
		}
	}
}
