package scrub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/schema"
)

// Fake credentials, built from pieces so that no file holds one whole.
var (
	ghp      = "ghp_" + "Zq3ZpX0oR9sV1tW2uX3yZ4aB5cD6eF7gH8iJ"
	akia     = "AKIA" + "Q3EGRZLWV6XN2PJB"
	awsSec   = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzq81kLpQ" + "2v"
	slackBot = "xoxb-" + "17283946501-4928374650192-" + "Qm9vZ2xlR2hvc3RUb2tlbjE2"
	pgPass   = "Pd8-v!kQ2zW" + "rT9x"
	pemBody  = "MIIEowIBAAKCAQEAr8Ft0q2pW9cV1xY7kLmNoPqRsTuVwXyZ" + "q7Lw2Jd9Hs4Kf1Xc8Vb3Nm6Tg0Ry5Ue2Wi7Oa4Pz9Sx1Dk8Fh3G"
	bearer   = "Qx7Lm2Pz9Rk4" + "Vw8Nt1Hy6Gc3Bd5F"
	pemLabel = "RSA " + "PRIVATE KEY"
	pem      = "-----BEGIN " + pemLabel + "-----\n" + pemBody + "\n" + pemBody[10:] + "Q==\n-----END " + pemLabel + "-----"
)

func newScrubber(t testing.TB, opt Options) *Scrubber {
	t.Helper()
	if opt.Key == nil {
		opt.Key = testKey
	}
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var markerRE = regexp.MustCompile(`\[REDACTED:([a-z0-9-]+):[0-9a-f]{8}\]`)

func TestText(t *testing.T) {
	s := newScrubber(t, Options{PII: true})
	for _, tc := range []struct {
		in     string
		rules  []string // labels of the markers, in order
		secret []string // must be gone
	}{
		{"export GITHUB_TOKEN=" + ghp, []string{"github-pat"}, []string{ghp}},
		{"AWS_ACCESS_KEY_ID=" + akia + "\naws_secret_access_key = " + awsSec, []string{"aws-access-token", "secret"}, []string{akia, awsSec}},
		{"bot " + slackBot + " posts", []string{"slack-bot-token"}, []string{slackBot}},
		{"DATABASE_URL=postgres://app:" + pgPass + "@db.internal:5432/app", []string{"secret"}, []string{pgPass}},
		{"key:\n" + pem + "\nend", []string{"private-key"}, []string{pemBody}},
		{"key (cut):\n" + pem[:len(pem)-40] + "\n\nThat was it.", []string{"private-key-block"}, []string{pemBody}},
		{`{"password": "` + pgPass + `"}`, []string{"secret"}, []string{pgPass}},
		{"curl -u deploy:" + pgPass + " https://ci.internal/api", []string{"secret"}, []string{pgPass}},
		{"Authorization: Bearer " + bearer, []string{"secret"}, []string{bearer}},
		{"mail jane.roe@acme-corp.io or call +1 415-555-0132", []string{"email", "phone"}, []string{"jane.roe@acme-corp.io", "555-0132"}},
		{"cd /home/jdoe/src && ls C:\\Users\\jdoe\\app", []string{"username", "username"}, []string{"jdoe"}},
		{"ssh 203.0.113.7 and 2001:db8::8a2e:370:7334", []string{"ipv4", "ipv6"}, []string{"203.0.113.7", "2001:db8"}},
	} {
		out, n := s.Text(tc.in)
		var rules []string
		for _, m := range markerRE.FindAllStringSubmatch(out, -1) {
			rules = append(rules, m[1])
		}
		if fmt.Sprint(rules) != fmt.Sprint(tc.rules) || n != len(tc.rules) {
			t.Errorf("%q:\n got %q (%d)\nwant markers %v", tc.in, out, n, tc.rules)
		}
		for _, sec := range tc.secret {
			if strings.Contains(out, sec) {
				t.Errorf("%q: %q survives in %q", tc.in, sec, out)
			}
		}
	}
}

// TestKept lists text that looks a little like a secret and is not one:
// it must come out unchanged.
func TestKept(t *testing.T) {
	s := newScrubber(t, Options{PII: true})
	for _, in := range []string{
		"The task is to ask the desk why they keep the keys in files.",
		"const password = process.env.DB_PASSWORD!;",
		"token: string; password?: string; secret: Optional[str] = None",
		"if (password == confirmPassword) { return token; }",
		"api_key = os.environ[\"API_KEY\"]",
		"password: ${DB_PASSWORD}",
		"Authorization: Bearer YOUR_API_TOKEN",
		"Authorization: Bearer <token>",
		"postgres://user:password@localhost:5432/db",
		"redis://localhost:6379/0",
		"**JWT Token Specification:**",
		"Let me get the token differently:",
		"max_tokens = 4096; input_tokens: 1234; token_count=99",
		"password_reset_url = https://example.com/reset",
		"-----BEGIN RSA PRIVATE KEY----- is what the header looks like",
		"var m map[string]string; secret := m[\"x\"]",
		"run at 12:30:45 on 2024-01-15, version 1.2.3, build 1234567890",
		"git@github.com:org/repo.git and noreply@anthropic.com",
		"see https://api.github.com/users/octocat and /home/USER/project",
		"std::vector<int> and fe80::1 and 127.0.0.1",
		"[REDACTED:github-pat:5f0c9a1e] and password=[REDACTED:generic-assignment:00112233]",
	} {
		if out, n := s.Text(in); n != 0 || out != in {
			t.Errorf("%q changed to %q", in, out)
		}
	}
}

// record is a record of every kind of field with a secret in it.
func record() string {
	raw := map[string]any{
		"type": "assistant",
		"message": map[string]any{"content": []any{
			map[string]any{"type": "text", "text": "token " + ghp},
			map[string]any{"type": "tool_use", "input": map[string]any{"command": "echo " + ghp}},
		}},
		"toolUseResult": `{"stdout":"AWS_SECRET_ACCESS_KEY=` + awsSec + `"}`,
		"snapshot":      map[string]any{"trackedFileBackups": map[string]any{"/home/jdoe/.env": map[string]any{"v": 1}}},
	}
	rawJSON, _ := json.Marshal(raw)
	rec := map[string]any{
		"schema": "pos/1", "kind": "message", "id": "m1", "platform": "claude_code", "session_id": "s1",
		"ts": "2026-01-02T03:04:05.678Z", "role": "assistant", "content_type": "text",
		"title":    "setting " + akia,
		"text":     "use " + ghp + "\n" + pem,
		"thinking": "slack " + slackBot,
		"tools": []any{map[string]any{"name": "Bash", "call_id": "c1",
			"input": map[string]any{"command": "psql postgres://app:" + pgPass + "@db/app"}, "output": "key " + akia}},
		"files":   []any{"/home/jdoe/secrets/" + ghp},
		"cwd":     "/home/jdoe/work",
		"user":    "jdoe",
		"source":  map[string]any{"path": "/home/jdoe/.claude/projects/x.jsonl", "offset": 10, "mtime": "2026-01-02T03:04:05.000Z"},
		"meta":    map[string]any{"hook": map[string]any{"env": map[string]any{"GITHUB_TOKEN": ghp}}},
		"x_extra": map[string]any{"note": "slack " + slackBot, "nested": `{"password":"` + pgPass + `"}`},
		"raw":     json.RawMessage(rawJSON),
	}
	b, _ := json.Marshal(rec)
	return string(b)
}

func scrubLines(t *testing.T, s *Scrubber, in string) string {
	t.Helper()
	var out bytes.Buffer
	if _, err := s.Stream(context.Background(), strings.NewReader(in), &out, "test"); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestEveryField(t *testing.T) {
	s := newScrubber(t, Options{PII: true})
	out := scrubLines(t, s, record()+"\n")
	for _, sec := range []string{ghp, akia, awsSec, slackBot, pgPass, pemBody, "jdoe"} {
		for _, f := range []string{sec, string(escapeJSON([]byte(sec)))} {
			if strings.Contains(out, f) {
				t.Errorf("%q survives:\n%s", f, out)
			}
		}
	}
	var rec schema.Record
	if err := schema.Unmarshal([]byte(strings.TrimSpace(out)), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Kind != schema.KindMessage || rec.Platform != "claude_code" || rec.TS.IsZero() || rec.Source.Mtime.IsZero() {
		t.Errorf("structural fields changed: %+v", rec)
	}
	var raw map[string]any
	if err := json.Unmarshal(rec.Raw, &raw); err != nil {
		t.Fatalf("raw is not JSON: %v\n%s", err, rec.Raw)
	}
	// JSON held in a string stays JSON.
	var inner map[string]any
	if err := json.Unmarshal([]byte(raw["toolUseResult"].(string)), &inner); err != nil {
		t.Errorf("toolUseResult: %v", err)
	}
	// The same secret has the same marker everywhere.
	m := map[string]int{}
	for _, mk := range markerRE.FindAllString(out, -1) {
		m[mk]++
	}
	if len(m) >= len(markerRE.FindAllString(out, -1)) {
		t.Errorf("no marker repeats: %v", m)
	}
}

func TestRecordAPI(t *testing.T) {
	s := newScrubber(t, Options{})
	dec := schema.NewDecoder(strings.NewReader(record() + "\n"))
	dec.KeepLines = true
	var rec schema.Record
	if err := dec.Decode(&rec); err != nil {
		t.Fatal(err)
	}
	if rec.Line == nil {
		t.Fatal("decoder kept no line")
	}
	changed, err := s.Record(&rec)
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	if rec.Line != nil {
		t.Error("a changed record keeps its line")
	}
	if strings.Contains(rec.Text, ghp) || strings.Contains(string(rec.Raw), ghp) || strings.Contains(rec.Tools[0].Output, akia) {
		t.Errorf("secret left: %+v", rec)
	}
	clean := schema.New(schema.KindMessage)
	clean.Text = "nothing here"
	if changed, err := s.Record(clean); err != nil || changed {
		t.Errorf("clean record: changed %v, err %v", changed, err)
	}
}

func TestIdempotent(t *testing.T) {
	s := newScrubber(t, Options{PII: true})
	once := scrubLines(t, s, record()+"\n")
	if twice := scrubLines(t, s, once); twice != once {
		t.Errorf("second pass changed:\n%s\n%s", once, twice)
	}
}

func TestMarkerKeyed(t *testing.T) {
	a, _ := newScrubber(t, Options{Key: []byte("key one: 32 bytes or more, for tests")}).Text("t=" + ghp)
	b, _ := newScrubber(t, Options{Key: []byte("key one: 32 bytes or more, for tests")}).Text("x " + ghp)
	c, _ := newScrubber(t, Options{Key: []byte("key two: 32 bytes or more, for tests")}).Text("t=" + ghp)
	ma, mb, mc := markerRE.FindString(a), markerRE.FindString(b), markerRE.FindString(c)
	if ma == "" || ma != mb || ma == mc {
		t.Errorf("markers %q %q %q: want the first two equal, the third different", ma, mb, mc)
	}
	if _, err := New(Options{}); err == nil {
		t.Error("New without a key: no error")
	}
}

func TestPIIExemptions(t *testing.T) {
	s := newScrubber(t, Options{PII: true})
	in := `{"schema":"pos/1","kind":"checkpoint","platform":"claude_code","checkpoint":{"platform":"claude_code","path":"/home/jdoe/.claude/projects/p/s.jsonl","size":1,"resume":1,"seen":1,"lines":1,"context":{"token":"` + ghp + `"}}}` + "\n" +
		`{"schema":"pos/1","kind":"message","platform":"claude_code","user":"root","cwd":"/Users/jdoe/x"}` + "\n"
	out := scrubLines(t, s, in)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(lines[0], "/home/jdoe/.claude") || strings.Contains(lines[0], ghp) {
		t.Errorf("checkpoint: want its path kept (a watermark) and its secret gone:\n%s", lines[0])
	}
	if !strings.Contains(lines[1], `"user":"root"`) || strings.Contains(lines[1], "jdoe") {
		t.Errorf("message: want a system user kept and the home user gone:\n%s", lines[1])
	}
	// Without --pii nothing personal is touched.
	plain := scrubLines(t, newScrubber(t, Options{}), in)
	if !strings.Contains(plain, "/Users/jdoe/x") {
		t.Errorf("without PII: %s", plain)
	}
}

func TestUnchangedLinesVerbatim(t *testing.T) {
	s := newScrubber(t, Options{Workers: 2})
	var in strings.Builder
	for i := range 3000 {
		if i%7 == 0 {
			fmt.Fprintf(&in, `{"schema":"pos/1","kind":"message","id":"m%d","text":"key %s"}`+"\n", i, ghp)
		} else {
			// Not canonical (spacing, order): written back as read.
			fmt.Fprintf(&in, `{"schema":"pos/1","kind":"raw",  "raw":{"n":%d, "t":"plain"},"id":"r%d"}`+"\n", i, i)
		}
	}
	out := scrubLines(t, s, in.String())
	got, want := strings.Split(out, "\n"), strings.Split(in.String(), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines out, %d in", len(got), len(want))
	}
	for i := range want[:len(want)-1] {
		if i%7 == 0 {
			if strings.Contains(got[i], ghp) || !strings.Contains(got[i], fmt.Sprintf(`"id":"m%d"`, i)) {
				t.Fatalf("line %d: %s", i+1, got[i])
			}
		} else if w := strings.TrimSuffix(want[i], "}") + `,"scrub":"secrets"}`; got[i] != w {
			// As read, but for pos-scrub's mark as the last member.
			t.Fatalf("line %d changed:\n%s\n%s", i+1, w, got[i])
		}
	}
}

func TestBadInput(t *testing.T) {
	in := `{"schema":"pos/1","kind":"message","text":"ok"}` + "\n" +
		`{"schema":"pos/1","kind":"raw","raw":{"a":tru}}` + "\n" + // lazily read: caught by the scrubber
		`not json` + "\n" +
		`{"schema":"pos/1","kind":"message","text":"` + ghp + `"}` + "\n"
	var bad []*schema.BadInput
	s := newScrubber(t, Options{OnSkip: func(b *schema.BadInput) error { bad = append(bad, b); return nil }})
	var out bytes.Buffer
	rep, err := s.Stream(context.Background(), strings.NewReader(in), &out, "in.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 2 || bad[0].Line != 2 || bad[1].Line != 3 || bad[0].Path != "in.ndjson" || rep.Skipped != 2 {
		t.Fatalf("bad %v, report %+v", bad, rep)
	}
	if got := strings.Count(out.String(), "\n"); got != 2 || strings.Contains(out.String(), ghp) {
		t.Errorf("output:\n%s", out.String())
	}
	// Without OnSkip (--strict) the first bad line stops the run, after
	// the lines before it.
	out.Reset()
	_, err = newScrubber(t, Options{}).Stream(context.Background(), strings.NewReader(in), &out, "in.ndjson")
	var b *schema.BadInput
	if !errors.As(err, &b) || b.Line != 2 || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("strict: err %v, output %q", err, out.String())
	}
}

func TestAllowlist(t *testing.T) {
	a, err := ParseAllowlist(strings.NewReader(`
# reviewed false positives
rule generic-assignment
regex ^AKIA
stopword zq3zpx   # case-insensitive
path **/fixtures/**
path *.golden
`))
	if err != nil {
		t.Fatal(err)
	}
	s := newScrubber(t, Options{Allowlist: a})
	for in, want := range map[string]int{
		"id " + akia:                     0, // regex
		"t " + ghp:                       0, // stopword
		`{"password": "` + pgPass + `"}`: 0, // rule
		"bot " + slackBot:                1,
	} {
		if _, n := s.Text(in); n != want {
			t.Errorf("%q: %d redactions, want %d", in, n, want)
		}
	}
	for p, want := range map[string]bool{
		"/repo/test/fixtures/a/b.jsonl": true, "/x/y.golden": true, "/x/y.jsonl": false, "": false,
	} {
		if a.pathAllowed(p) != want {
			t.Errorf("path %q: allowed %v", p, !want)
		}
	}
	for _, bad := range []string{"rule", "regex (", "colour red", "path [", "rule no-such-rule"} {
		a, err := ParseAllowlist(strings.NewReader(bad))
		if err == nil {
			_, err = New(Options{Key: testKey, Allowlist: a})
		}
		if err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestLoadKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pos", "scrub.key")
	k1, err := LoadKey(path)
	if err != nil || len(k1) != 64 {
		t.Fatalf("%q %v", k1, err)
	}
	fi, _ := os.Stat(path)
	di, _ := os.Stat(filepath.Dir(path))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Errorf("modes %v %v", fi.Mode().Perm(), di.Mode().Perm())
	}
	if k2, err := LoadKey(path); err != nil || !bytes.Equal(k1, k2) {
		t.Errorf("second load: %q %v", k2, err)
	}
	os.Chmod(path, 0o644)
	if _, err := LoadKey(path); err == nil {
		t.Error("a key file others can read: no error")
	}
}

func TestReport(t *testing.T) {
	s := newScrubber(t, Options{})
	var out bytes.Buffer
	rep, err := s.Stream(context.Background(), strings.NewReader(record()+"\n"), &out, "-")
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	rep.WriteText(&text, "pos-scrub: ")
	rep.WriteJSON(&js)
	for _, sec := range []string{ghp, akia, pgPass, slackBot} {
		if strings.Contains(text.String()+js.String(), sec) {
			t.Errorf("report holds %q", sec)
		}
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Rules["github-pat"] == 0 || back.Platforms["claude_code"].Changed != 1 {
		t.Errorf("json report %s: %v", js.String(), err)
	}
	if !strings.Contains(text.String(), "github-pat") || rep.Records != 1 || rep.Changed != 1 || rep.Redactions < 5 {
		t.Errorf("%+v\n%s", rep, text.String())
	}
}

// TestJSONRewrite checks that redacting any span of any document leaves
// valid JSON whose strings differ only where the span was.
func TestJSONRewrite(t *testing.T) {
	s := newScrubber(t, Options{})
	docs := []string{
		`{"a":"x\ny","b":["\u00e9\ud83d\ude00","q\"uo\\te"],"c":{"d\u0041":1.5e3,"e":null}}`,
		`{"k":"{\"inner\":\"v\\nw\"}","n":-0.25,"t":true}`,
		`  { "sp" : [ "a" , "b" ] }  `,
	}
	sc := newScanner(s)
	for _, d := range docs {
		if err := sc.doc.parse([]byte(d)); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		text := string(sc.doc.text)
		for a := 0; a < len(text); a++ {
			for b := a + 1; b <= len(text) && b <= a+12; b++ {
				sc.doc.parse([]byte(d))
				sc.spans = append(sc.spans[:0], span{start: a, end: b, rule: s.rs.byID["jwt"]})
				out, changed := sc.applyForTest()
				if !changed {
					continue
				}
				if !json.Valid(out) {
					t.Fatalf("%s, span %d-%d %q: invalid output %s", d, a, b, text[a:b], out)
				}
			}
		}
	}
}

// applyForTest applies sc.spans to sc.doc as scrubDoc does once the
// rules have found them.
func (sc *scanner) applyForTest() ([]byte, bool) {
	sc.settle(sc.doc.text, &sc.doc)
	return sc.apply(map[string]int64{})
}

func FuzzScrub(f *testing.F) {
	f.Add([]byte(record()))
	f.Add([]byte(`{"schema":"pos/1","kind":"raw","raw":{"t":"password=` + pgPass + `","u":"\u0041\n"}}`))
	f.Add([]byte(`{"schema":"pos/1","kind":"message","text":"` + strings.ReplaceAll(pem, "\n", `\n`) + `"}`))
	for _, text := range []string{
		`DB_PASSWORD=Xk3pQ9zLmNc&rUbmkLCw2 && mysql -uroot -p'Tr0u(b4)dor&3' shop; htpasswd -nb admin Zq8vN3kLm2xW9pRt`,
		`see (AIzaYveW48Ft9TP4tL1YUFztDhPU0O5INMlzxNK). ok?api_key=Zq8vN3kLm2xW9pRt4sYb&user=bob`,
		`sourcegraph sgp_0123456789abcdef0123456789abcdef01234567 commit 0d4b5c0e8a2f9e1b7c3d6a5f4e2b1c0d9e8f7a6b`,
	} {
		f.Add([]byte(`{"schema":"pos/1","kind":"message","text":` + strconvQuote(text) + `}`))
	}
	s := newScrubber(f, Options{PII: true})
	f.Fuzz(func(t *testing.T, line []byte) {
		watch := time.AfterFunc(20*time.Second, func() {
			buf := make([]byte, 1<<20)
			panic(fmt.Sprintf("stuck on %q\n%s", line, buf[:runtime.Stack(buf, true)]))
		})
		defer watch.Stop()
		var rec schema.Record
		if bytes.IndexByte(line, '\n') >= 0 || schema.Unmarshal(line, &rec) != nil {
			return
		}
		var once, twice bytes.Buffer
		if _, err := s.Stream(context.Background(), bytes.NewReader(append(line, '\n')), &once, "fuzz"); err != nil {
			return // rejected as bad input
		}
		var back schema.Record
		if err := schema.Unmarshal(bytes.TrimSuffix(once.Bytes(), []byte("\n")), &back); err != nil {
			t.Fatalf("output is not a record: %v\n%s", err, once.Bytes())
		}
		if _, err := s.Stream(context.Background(), bytes.NewReader(once.Bytes()), &twice, "fuzz"); err != nil || !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Fatalf("not a fixed point (%v):\n%s\n%s", err, once.Bytes(), twice.Bytes())
		}
	})
}

func TestShortKeyRefused(t *testing.T) {
	for _, k := range []string{"", "x", strings.Repeat("k", MinKeyLen-1)} {
		if _, err := New(Options{Key: []byte(k)}); !errors.Is(err, ErrShortKey) {
			t.Errorf("key of %d bytes: %v, want ErrShortKey", len(k), err)
		}
	}
	if _, err := New(Options{Key: []byte(strings.Repeat("k", MinKeyLen))}); err != nil {
		t.Error(err)
	}
	p := filepath.Join(t.TempDir(), "scrub.key")
	os.WriteFile(p, []byte("x\n"), 0o600)
	if _, err := LoadKey(p); !errors.Is(err, ErrShortKey) || !strings.Contains(err.Error(), p) {
		t.Errorf("short key file: %v", err)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
