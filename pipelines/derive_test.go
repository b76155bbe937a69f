package pipelines_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pos-lake/pos/internal/loadtest"
)

// The cuts pos makes of texts, in bytes (runes, for the ASCII texts here),
// and where a secret is placed to straddle each: once across the byte where
// the text was cut before pos-scrub saw it, once so that its marker
// straddles the place the cut is made now, after pos-scrub.
const (
	cutTitle    = 120 // a session's title, from its first prompt's first line
	cutContext  = 200 // a decision's context, the same line
	cutDecision = 600 // a decision's sentence
	cutPlan     = 200 // a plan's title, its heading
	cutReply    = 60  // a context pack reply's title: the prompt's first line
	cutDryRun   = 80  // a context pack item's title (--dry-run)
	chunkRun    = 797 // the byte where a chunk cuts a run of non-space characters (400-token chunks)
	snippetLead = 4   // words a search snippet shows before the first match
	snippetLen  = 32  // words in a snippet
)

// A secret of one of the kinds placed: written as name followed by secret,
// of which pos-scrub replaces secret; random is what must never reach the
// lake.
type secret struct {
	kind, name, secret string
	random             []string
}

var secretKinds = []string{"aws", "github", "password", "key"}

func newSecret(r *rand.Rand, kind string) secret {
	pick := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	switch kind {
	case "aws":
		body := pick(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
		return secret{kind, "", "AKIA" + body, []string{"AKIA" + body}}
	case "github":
		body := pick(36, alnum)
		return secret{kind, "", "ghp_" + body, []string{"ghp_" + body}}
	case "password":
		v := pick(6, "ABCDEFGHJKLMNPQRSTUVWXYZ") + pick(6, "23456789") + pick(8, "abcdefghijkmnopqrstuvwxyz")
		v = string(shuffle(r, []byte(v)))
		return secret{kind, "DB_PASSWORD=", v, []string{v}}
	}
	var lines []string
	for range 12 {
		lines = append(lines, pick(64, alnum+"+/"))
	}
	lines = append(lines, pick(40, alnum)+"==")
	block := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Join(lines, "\n") + "\n-----END RSA PRIVATE KEY-----"
	return secret{kind, "", block, lines}
}

func shuffle(r *rand.Rand, b []byte) []byte {
	r.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	return b
}

// fill is n bytes of plain words ending in a space (n >= 1).
func fill(n int) string {
	const words = "note that the build runs every step again after each change here "
	var b strings.Builder
	for b.Len() < n-1 {
		b.WriteString(words)
	}
	return b.String()[:max(n-1, 0)] + " "
}

// words is n plain words.
func words(n int) string {
	ws := strings.Fields("harbor lantern meadow quartz ribbon saddle timber velvet walnut yarrow")
	var out []string
	for i := range n {
		out = append(out, ws[i%len(ws)])
	}
	return strings.Join(out, " ")
}

// placement is a text with one secret where a cut falls: layout returns
// the text before the secret, given the marker pos-scrub writes for it
// ("" before it is known).
type placement struct {
	s      secret
	layout func(marker string) string
	before string
	after  string
	marker string // what pos-scrub writes for it here
}

func (p placement) line() string { return p.before + p.s.name + p.s.secret + p.after }

// straddle lays a secret out after lead so that it (scrub false) or its
// marker (scrub true) straddles byte at of the text.
func straddle(lead string, at int, scrub bool, s secret) func(string) string {
	return func(marker string) string {
		n := len(s.secret)
		if scrub {
			n = max(len(marker), 30)
		}
		return lead + fill(at-len(lead)-len(s.name)-n/2)
	}
}

// scrubbed runs pos-scrub over texts (each a message) and returns them
// scrubbed, in order.
func scrubbed(t *testing.T, dir, key string, texts []string) []string {
	t.Helper()
	var in bytes.Buffer
	for i, s := range texts {
		b, _ := json.Marshal(map[string]any{"schema": "pos/1", "kind": "message", "id": fmt.Sprint("p", i),
			"platform": "claude_code", "session_id": "probe", "role": "user", "content_type": "text", "text": s})
		in.Write(append(b, '\n'))
	}
	path := filepath.Join(dir, "probe.ndjson")
	os.WriteFile(path, in.Bytes(), 0o600)
	out := mustSh(t, fmt.Sprintf("pos-scrub --key %q -q < %q", key, path))
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct{ Text string }
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m.Text)
	}
	if len(got) != len(texts) {
		t.Fatalf("pos-scrub wrote %d records of %d", len(got), len(texts))
	}
	return got
}

// learn lays the placements out and sets their markers from pos-scrub's
// output, again until every marker is the one of its final text.
func learn(t *testing.T, dir, key string, ps []*placement) {
	t.Helper()
	for round := 0; ; round++ {
		var texts []string
		for _, p := range ps {
			p.before = p.layout(p.marker)
			texts = append(texts, p.line())
		}
		stable := true
		for i, s := range scrubbed(t, dir, key, texts) {
			p := ps[i]
			m := strings.TrimSuffix(strings.TrimPrefix(s, p.before+p.s.name), p.after)
			if markerLen(m) != len(m) || len(m) == 0 {
				t.Fatalf("pos-scrub does not redact this %s secret as one marker: %q", p.s.kind, s)
			}
			if p.layout(m) != p.before {
				stable = false
			}
			p.marker = m
		}
		if stable {
			return
		}
		if round == 3 {
			t.Fatal("the markers do not settle")
		}
	}
}

// A secret that straddles any place where pos cuts a text — a title, a
// decision's context and sentence, a plan's title, a subagent report's
// title, a chunk boundary, a search snippet, the titles and texts of a
// context pack, recent_turns' max_chars, table cells — is absent from every
// field of the lake and every answer of pos-query and pos-mcp, and wherever
// it was is its one marker, whole. Secrets of four kinds (an AWS key, a
// GitHub token, a password assignment, a private key block) are placed at
// each cut, once across the byte where the text used to be cut before
// pos-scrub, once so that the marker straddles the place it is cut now.
func TestSecretsAcrossCuts(t *testing.T) {
	tmp := t.TempDir()
	const key = "derive-test-key-0123456789abcdef0123456789"
	r := rand.New(rand.NewPCG(30, 4))
	var all []*placement
	place := func(kind string, layout func(secret) func(string) string, after string) *placement {
		sc := newSecret(r, kind)
		p := &placement{s: sc, layout: layout(sc), after: after}
		all = append(all, p)
		return p
	}
	at := func(lead string, cut int, scrub bool) func(secret) func(string) string {
		return func(s secret) func(string) string { return straddle(lead, cut, scrub, s) }
	}
	// A text cut to n bytes with "…" is cut at n-3 now.
	const ell = len("…")
	fixed := func(before string) func(secret) func(string) string {
		return func(secret) func(string) string { return func(string) string { return before } }
	}
	type session struct {
		id, slug       string
		first          *placement   // the first prompt's first line
		body           []*placement // lines after it
		reply          *placement   // the assistant's decision
		plan, subagent *placement
	}
	// One session for each place in the first prompt's first line, kind
	// and way of straddling; the reply and dry-run titles are cut after
	// pos-scrub only.
	var sessions []*session
	for _, c := range []struct {
		at    int
		scrub bool
	}{{cutTitle, false}, {cutTitle - ell, true}, {cutContext, false}, {cutContext - ell, true}, {cutReply, true}, {cutDryRun, true}} {
		for _, kind := range secretKinds {
			n := len(sessions)
			sessions = append(sessions, &session{
				id:    fmt.Sprintf("5ec0%04d-0000-4000-8000-%012d", n, n),
				first: place(kind, at("", c.at, c.scrub), " is the one. Let's use postgres for the queue."),
			})
		}
	}
	tag := func(i, j int) string { return fmt.Sprintf("zq%c%cmark%c", 'a'+i/26, 'a'+i%26, 'a'+j) }
	for i, s := range sessions {
		kind := func(j int) string { return secretKinds[(i+j)%len(secretKinds)] }
		// A match right after the secret: the snippet leads in with the
		// words before it, the marker's.
		s.body = append(s.body, place(kind(1), fixed("alpha beta gamma "), " "+tag(i, 0)+" "+words(40)))
		// A match whose window of snippetLen words ends two words into
		// the marker.
		s.body = append(s.body, place(kind(2), fixed("delta "+tag(i, 1)+" "+words(snippetLen-snippetLead-3)+" "), " "+words(10)))
		// A run of non-space characters glued to the marker, which the
		// chunker cuts at chunkRun.
		// An unquoted assignment's value runs to the next space (a comma
		// is part of it), so the password's run ends at its marker.
		glue := ","
		if kind(3) == "password" {
			glue = " "
		}
		s.body = append(s.body, place(kind(3), func(sc secret) func(string) string {
			return func(m string) string { return strings.Repeat("r", chunkRun-len(sc.name)-max(len(m), 30)/2-1) + "," }
		}, glue+strings.Repeat("t", 1500)))
		// Each kind once across the old cut, once with its marker across
		// the new one.
		scrub, shift := i%2 == 1, (i%2)*ell
		switch {
		case i < 8:
			s.reply = place(secretKinds[i/2], at("We decided to use ", cutDecision-shift, scrub), " as the deploy token.")
		case i < 16:
			s.slug = fmt.Sprintf("plan-%c-heron", 'a'+i)
			s.plan = place(secretKinds[(i-8)/2], at("", cutPlan-shift, scrub), " and the rest of the heading")
		default:
			s.subagent = place(secretKinds[(i-16)/2], at("", cutTitle-shift, scrub), " then report back.")
		}
	}
	learn(t, tmp, key, all)
	markers := map[string]*placement{}
	for _, p := range all {
		if q, ok := markers[p.marker]; ok && q != p {
			t.Fatalf("two secrets share the marker %s", p.marker)
		}
		markers[p.marker] = p
	}

	// The home: one Claude Code session per first-line placement.
	home := filepath.Join(tmp, "home", ".claude")
	proj := filepath.Join(home, "projects", "-work-app")
	os.MkdirAll(proj, 0o700)
	os.MkdirAll(filepath.Join(home, "plans"), 0o700)
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	line := func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) + "\n" }
	for i, s := range sessions {
		ts := func(k int) string {
			return t0.Add(time.Duration(i)*time.Hour + time.Duration(k)*time.Second).Format(time.RFC3339)
		}
		base := func(uuid, parent string, k int) map[string]any {
			m := map[string]any{"isSidechain": false, "userType": "external", "cwd": "/home/dev/app", "sessionId": s.id,
				"version": "2.1.40", "gitBranch": "main", "uuid": uuid, "timestamp": ts(k)}
			if parent != "" {
				m["parentUuid"] = parent
			}
			if s.slug != "" {
				m["slug"] = s.slug
			}
			return m
		}
		prompt := s.first.line()
		for _, b := range s.body {
			prompt += "\n" + b.line()
		}
		u := base(fmt.Sprintf("a%07d-0000-4000-8000-000000000001", i), "", 1)
		u["type"], u["message"] = "user", map[string]any{"role": "user", "content": prompt}
		reply := "Done: the queue is on postgres now."
		if s.reply != nil {
			reply = s.reply.line()
		}
		a := base(fmt.Sprintf("a%07d-0000-4000-8000-000000000002", i), u["uuid"].(string), 2)
		a["type"], a["requestId"] = "assistant", fmt.Sprint("req_", i)
		a["message"] = map[string]any{"model": "claude-opus-4-6", "id": fmt.Sprint("msg_", i), "type": "message", "role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": reply}}, "stop_reason": "end_turn",
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
		os.WriteFile(filepath.Join(proj, s.id+".jsonl"), []byte(line(u)+line(a)), 0o600)
		if s.plan != nil {
			os.WriteFile(filepath.Join(home, "plans", s.slug+".md"), []byte("# "+s.plan.line()+"\n\nThe steps follow.\n"), 0o600)
		}
		if s.subagent != nil {
			dir := filepath.Join(proj, s.id, "subagents")
			os.MkdirAll(dir, 0o700)
			os.WriteFile(filepath.Join(dir, "agent-ab12cd3.meta.json"), []byte(`{"agentType": "general-purpose"}`), 0o600)
			su := base(fmt.Sprintf("b%07d-0000-4000-8000-000000000001", i), "", 3)
			su["isSidechain"], su["agentId"], su["type"] = true, "ab12cd3", "user"
			su["message"] = map[string]any{"role": "user", "content": s.subagent.line()}
			sa := base(fmt.Sprintf("b%07d-0000-4000-8000-000000000002", i), su["uuid"].(string), 4)
			sa["isSidechain"], sa["agentId"], sa["type"], sa["requestId"] = true, "ab12cd3", "assistant", fmt.Sprint("req_s", i)
			sa["message"] = map[string]any{"model": "claude-sonnet-4-5", "id": fmt.Sprint("msg_s", i), "type": "message", "role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": "The report: all checks pass."}}, "stop_reason": "end_turn",
				"usage": map[string]any{"input_tokens": 5, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
			os.WriteFile(filepath.Join(dir, "agent-ab12cd3.jsonl"), []byte(line(su)+line(sa)), 0o600)
		}
	}

	lake := filepath.Join(tmp, "lake")
	env := []string{"POS_LAKE=" + lake}
	mustSh(t, fmt.Sprintf("pos-extract --root %q --full -q | pos-normalize -q | pos-scrub --key %q -q | pos-embed -q | pos-load --lake %q -q", home, key, lake), env...)

	// check fails if text holds a secret's random part (any 8 bytes of it)
	// or a key block's BEGIN line, or a redaction marker that is cut or
	// is not the one of a secret placed.
	seen := map[string]bool{}
	check := func(where, text string) {
		t.Helper()
		if strings.Contains(text, "PRIVATE KEY") {
			t.Errorf("%s holds part of a key block: …%s…", where, around(text, strings.Index(text, "PRIVATE KEY")))
		}
		for _, p := range all {
			for _, part := range p.s.random {
				for i := 0; i+8 <= len(part); i++ {
					if j := strings.Index(text, part[i:i+8]); j >= 0 {
						t.Errorf("%s holds part of the %s secret %q: …%s…", where, p.s.kind, part[i:i+8], around(text, j))
						return
					}
				}
			}
		}
		// Whole markers; any other piece of one (its head, its tail) is
		// a marker cut.
		starts := markerStarts(text)
		ends := map[int]bool{}
		for _, i := range starts {
			m := text[i : i+markerLen(text[i:])]
			if markers[m] == nil {
				t.Errorf("%s holds a marker no secret placed has: %s", where, m)
			}
			seen[m] = true
			ends[i+len(m)] = true
		}
		inside := func(j int) bool {
			for _, i := range starts {
				if j > i && j < i+markerLen(text[i:]) {
					return true
				}
			}
			return false
		}
		for _, j := range indexAll(text, "REDACTED") {
			if !inside(j) {
				t.Errorf("%s holds a cut marker: …%s…", where, around(text, j))
				return
			}
		}
		for _, m := range markerTailRE.FindAllStringIndex(text, -1) {
			if !ends[m[1]] {
				t.Errorf("%s holds the end of a cut marker: …%s…", where, around(text, m[0]))
				return
			}
		}
	}

	db := loadtest.Views(t, lake)
	for _, view := range []string{"raw", "messages", "exchanges", "sessions", "documents", "decisions", "file_refs", "chunks"} {
		rows, err := db.Query(`SELECT to_json(t)::VARCHAR FROM ` + view + ` t`)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var s string
			rows.Scan(&s)
			check(view, s)
			n++
		}
		rows.Close()
		if n == 0 && view != "file_refs" {
			t.Errorf("the lake has no %s", view)
		}
	}
	// Every secret was redacted in its message, and only its marker is
	// anywhere.
	for m, p := range markers {
		if !seen[m] {
			t.Errorf("the %s secret's marker %s is nowhere in the lake", p.s.kind, m)
		}
	}
	// The cuts were made: titles and contexts are cut to their sizes (all
	// but the one of a key block across the old cut: redacted, what is
	// left fits).
	if n := count(t, db, `SELECT count(*) FROM sessions WHERE title LIKE '%…' AND strlen(title) <= ?`, cutTitle); n < int64(2*len(secretKinds)-1) {
		t.Errorf("%d titles cut", n)
	}
	if n := count(t, db, `SELECT count(*) FROM decisions WHERE context LIKE '%…' AND strlen(context) <= ?`, cutContext); n < int64(2*len(secretKinds)-1) {
		t.Errorf("%d decision contexts cut", n)
	}
	if n := count(t, db, `SELECT count(*) FROM decisions WHERE text LIKE '%…' AND strlen(text) <= ?`, cutDecision); n < int64(2*len(secretKinds)-1) {
		t.Errorf("%d decision sentences cut", n)
	}
	if n := count(t, db, `SELECT count(*) FROM documents WHERE content_type = 'plan' AND title LIKE '%…'`); n < int64(2*len(secretKinds)-1) {
		t.Errorf("%d plan titles cut", n)
	}
	if n := count(t, db, `SELECT count(*) FROM documents WHERE content_type = 'subagent_summary' AND title LIKE 'general-purpose: %…'`); n < int64(2*len(secretKinds)-1) {
		t.Errorf("%d subagent report titles cut", n)
	}

	// pos-query: search (the snippets), sessions, decisions, context.
	for i := range sessions {
		for j := range 2 {
			out := mustSh(t, fmt.Sprintf("pos-query search --lake %q %s", lake, tag(i, j)))
			if !strings.Contains(out, tag(i, j)) {
				t.Errorf("search %s found nothing: %s", tag(i, j), out)
			}
			check("pos-query search "+tag(i, j), out)
		}
	}
	check("pos-query search (table)", mustSh(t, fmt.Sprintf("pos-query search --lake %q --format table --width 70 -k 20 %s %s", lake, tag(0, 0), tag(5, 1))))
	check("pos-query sessions", mustSh(t, fmt.Sprintf("pos-query sessions --lake %q --limit 100", lake)))
	check("pos-query sessions (table)", mustSh(t, fmt.Sprintf("pos-query sessions --lake %q --limit 100 --format table --width 90", lake)))
	check("pos-query decisions", mustSh(t, fmt.Sprintf("pos-query decisions --lake %q --limit 200", lake)))
	var ids []string
	for _, s := range sessions {
		ids = append(ids, s.id[:8])
	}
	for i := 0; i < len(ids); i += 6 {
		set := strings.Join(ids[i:min(i+6, len(ids))], " ")
		check("pos-query context", mustSh(t, fmt.Sprintf("pos-query context --lake %q --max-tokens 50000 %s", lake, set)))
		check("pos-query context --dry-run", mustSh(t, fmt.Sprintf("pos-query context --lake %q --dry-run --format ndjson %s", lake, set)))
		check("pos-query context --mode full", mustSh(t, fmt.Sprintf("pos-query context --lake %q --mode full %s", lake, set)))
	}

	// pos-mcp: search, recent_turns cut by max_chars across a marker,
	// context_pack, session_summary.
	cmd := exec.Command(filepath.Join(binDir, "pos-mcp"), "--lake", lake)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "derive", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := json.Marshal(res)
		if res.IsError {
			t.Fatalf("%s %v: %s", name, args, b)
		}
		check(fmt.Sprint("pos-mcp ", name, " ", args), string(b))
	}
	for i := range sessions {
		call("search", map[string]any{"query": tag(i, i%2)})
	}
	call("search", map[string]any{"query": tag(3, 0), "group_by_session": true})
	for i, s := range sessions {
		// The prompt as the lake has it, and a cut three characters into
		// each of its markers.
		var prompt string
		if err := db.QueryRow(`SELECT prompt FROM exchanges WHERE session_id = ? AND NOT sidechain`, s.id).Scan(&prompt); err != nil {
			t.Fatal(err)
		}
		for _, m := range markerStarts(prompt)[:2] {
			call("recent_turns", map[string]any{"session": s.id, "n": 1, "max_chars": len([]rune(prompt[:m])) + 3})
		}
		if i%4 == 0 {
			call("context_pack", map[string]any{"sessions": []string{s.id}, "max_tokens": 20000})
			call("session_summary", map[string]any{"session": s.id})
		}
	}
}

// markerRE is a redaction marker: [REDACTED:<rule>:<8 hex digits>].
var markerRE = regexp.MustCompile(`^\[REDACTED:[A-Za-z0-9_.-]{1,64}:[0-9a-f]{8}\]`)

// markerTailRE is how a marker ends.
var markerTailRE = regexp.MustCompile(`:[0-9a-f]{8}\]`)

// indexAll is where sub occurs in s.
func indexAll(s, sub string) []int {
	var out []int
	for i := 0; ; {
		k := strings.Index(s[i:], sub)
		if k < 0 {
			return out
		}
		out = append(out, i+k)
		i += k + len(sub)
	}
}

// markerLen is the length of the marker s starts with, or 0.
func markerLen(s string) int { return len(markerRE.FindString(s)) }

// markerStarts is where the markers of s start.
func markerStarts(s string) []int {
	var out []int
	for i := 0; ; {
		k := strings.Index(s[i:], "[REDACTED:")
		if k < 0 {
			return out
		}
		i += k
		if n := markerLen(s[i:]); n > 0 {
			out = append(out, i)
			i += n
			continue
		}
		i++
	}
}

// around is the text near i, for a message.
func around(s string, i int) string {
	return s[max(0, i-40):min(len(s), i+40)]
}
