// Package damage writes a damaged home: the session histories of Claude
// Code, Codex and Gemini CLI (JSONL) and Cline (a task folder's JSON
// files) with valid lines beside every kind of damage a real disk holds —
// truncated lines, random bytes, invalid UTF-8, NUL and control bytes,
// invalid escapes, lone surrogates, nesting 10,000 levels deep, JSON that
// is no object, bad timestamps, token counts that are strings or below
// zero, a byte order mark, CRLF line ends, a 20 MB line, duplicate lines,
// empty, blank-only and binary files, a symbolic-link loop, a directory
// and a FIFO named like a history, and a live session whose last line is
// half written. It records what the lake must hold for each line, so that
// a test can check a pipeline's result line by line.
//
// The valid lines are the real ones of the corpus (../shared/corpus) when
// it is there, else lines of the same shapes; the output depends on the
// seed alone.
package damage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Expect says what the lake must hold for a native line or element, and
// whether a diagnostic must name it.
type Expect int

const (
	// Valid: a raw row holding Raw byte for byte; not named.
	Valid Expect = iota
	// Warned: a raw row holding Raw byte for byte; named (a field of it
	// could not be read: a time that is no time, a count that is no
	// count).
	Warned
	// Repaired: a raw row of strict JSON whose source_altered names
	// Altered; named.
	Repaired
	// RawOnly: a raw row holding Raw (JSON that is not an object, so no
	// message); named.
	RawOnly
	// AsText: a raw row holding one JSON string whose value is Raw (a line
	// nested too deeply to keep as JSON); named.
	AsText
	// Skipped: no raw row (not JSON); named.
	Skipped
	// Entry: a directory entry that is no readable history (a link loop,
	// a directory, a FIFO); named as path: reason, and the run goes on.
	Entry
)

var expectNames = [...]string{"valid", "warned", "repaired", "raw only", "as text", "skipped", "entry"}

func (e Expect) String() string { return expectNames[e] }

// Line is one native line (or JSON element, or directory entry) of the
// home.
type Line struct {
	Platform string
	Path     string
	Num      int64  // 1-based line of a JSONL file; 0 otherwise
	Key      string // an element of a JSON file: its source key (ui_messages.json[3])
	What     string // the damage; "" for a valid line
	Expect   Expect
	Raw      string // what the raw layer holds (see Expect)
	Altered  string // Repaired: a repair source_altered names
}

// Where is how a diagnostic names the line: path:line, path:key, or the
// path of an entry.
func (l Line) Where() string {
	switch {
	case l.Num > 0:
		return l.Path + ":" + strconv.FormatInt(l.Num, 10)
	case l.Key != "":
		return l.Path + ":" + l.Key
	}
	return l.Path
}

// Options configure Write.
type Options struct {
	Seed int64
	// Corpus is the corpus directory (../shared/corpus); "" or a missing
	// directory: lines of the same shapes are made up.
	Corpus string
	// BigLine is the size of the one huge line (20 MB when 0).
	BigLine int
	// NoEntries leaves out the directory entries that are no history
	// (link loop, directory, FIFO).
	NoEntries bool
}

// Home is a damaged home Write made.
type Home struct {
	Dir   string
	Lines []Line
	// Live is the last line of a live session, half written: not in the
	// lake until Complete writes its end.
	Live     Line
	liveRest []byte

	rng    *rand.Rand
	corpus string
	seq    int
}

// Write makes a damaged home in dir.
func Write(dir string, opt Options) (*Home, error) {
	if opt.BigLine == 0 {
		opt.BigLine = 20 << 20
	}
	h := &Home{Dir: dir, rng: rand.New(rand.NewPCG(uint64(opt.Seed), 30)), corpus: opt.Corpus}
	if h.corpus != "" {
		if _, err := os.Stat(h.corpus); err != nil {
			h.corpus = ""
		}
	}
	for _, f := range []func(Options) error{h.claude, h.codex, h.gemini, h.cline} {
		if err := f(opt); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Complete writes the end of the live session's last line, as the agent
// does when it finishes writing it.
func (h *Home) Complete() error {
	f, err := os.OpenFile(h.Live.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(h.liveRest); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Damaged is the lines a diagnostic must name.
func (h *Home) Damaged() []Line {
	var out []Line
	for _, l := range h.Lines {
		if l.Expect != Valid {
			out = append(out, l)
		}
	}
	return out
}

// jsonl builds a JSONL file line by line.
type jsonl struct {
	h        *Home
	platform string
	path     string
	buf      bytes.Buffer
	n        int64
}

func (h *Home) file(platform, path string) *jsonl {
	return &jsonl{h: h, platform: platform, path: path}
}

// add writes a line (eol "\n" or "\r\n") and records what it must become.
func (f *jsonl) add(text string, exp Expect, what, raw, altered, eol string) {
	f.buf.WriteString(text)
	f.buf.WriteString(eol)
	f.n++
	f.h.Lines = append(f.h.Lines, Line{Platform: f.platform, Path: f.path, Num: f.n, What: what, Expect: exp, Raw: raw, Altered: altered})
}

// valid adds a valid line, kept byte for byte.
func (f *jsonl) valid(text string) { f.add(text, Valid, "", text, "", "\n") }

// blank adds a line with nothing but blanks: no record, no diagnostic.
func (f *jsonl) blank(text string) {
	f.buf.WriteString(text + "\n")
	f.n++
}

func (f *jsonl) write() error {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(f.path, f.buf.Bytes(), 0o644)
}

// carrier makes a valid line of a platform that holds text in a string
// (the marker is replaced by the text as it is, escapes and bad bytes
// included), at time ts.
type carrier func(text, ts string) string

const marker = "\x00MARK\x00"

// put puts raw bytes where the carrier's marker is.
func put(c carrier, text, ts string) string {
	return strings.Replace(c(marker, ts), jsonString(marker), `"`+text+`"`, 1)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// damage adds the line-level damage every JSONL platform gets, each line
// in the platform's own shape: c carries a text, usage makes a line with
// token counts (a number's text each), badTS is a valid line with a time
// that is no time.
func (h *Home) damage(f *jsonl, c carrier, usage func(in, out string) string, badTS string) {
	ts := "2026-02-10T21:30:00.000Z"
	valid := c("a valid prompt between damaged lines", ts)
	type step func()
	steps := []step{
		func() { // a line cut in the middle, then a newline
			f.add(valid[:len(valid)/2], Skipped, "truncated", "", "", "\n")
		},
		func() {
			f.add(string(h.random(60+h.rng.IntN(140))), Skipped, "random bytes", "", "", "\n")
		},
		func() {
			// Bytes that are no UTF-8, a surrogate encoded in UTF-8 (CESU-8)
			// and a cut sequence.
			f.add(put(c, "bad \xff\xfe utf-8 \xed\xa0\x80 \xc3", ts), Repaired, "invalid UTF-8", "", "utf8", "\n")
		},
		func() { // valid, if unusual: kept byte for byte, not named
			line := `{"odd":[1e999,-0,0.5E-3],"emoji":"\ud83d\ude00","nul":"\u0000","slash":"\/",` + valid[1:]
			f.valid(line)
		},
		func() { l := usage(`1e30`, `12`); f.add(l, Warned, "token count out of range", l, "", "\n") },
		func() { f.add(put(c, "a NUL \x00 byte", ts), Repaired, "NUL byte in a string", "", "control", "\n") },
		func() {
			f.add(put(c, "bell \x07 escape \x1b[2J", ts), Repaired, "control characters", "", "control", "\n")
		},
		func() { f.add(put(c, `C:\path\qux \0`, ts), Repaired, "invalid escape", "", "escape", "\n") },
		func() {
			f.add(put(c, `hello \ud800 world`, ts), Repaired, "lone high surrogate", "", "surrogate", "\n")
		},
		func() {
			f.add(put(c, `\ud800\u0041 not a pair`, ts), Repaired, "high surrogate, no low one", "", "surrogate", "\n")
		},
		func() { f.add(put(c, `low \udc00 alone`, ts), Repaired, "lone low surrogate", "", "surrogate", "\n") },
		func() {
			f.add(put(c, `ends with \ud83d`, ts), Repaired, "surrogate at the end of a string", "", "surrogate", "\n")
		},
		func() {
			line := `{"\ud800key":1,` + valid[1:]
			f.add(line, Repaired, "lone surrogate in a key", "", "surrogate", "\n")
		},
		func() {
			deep := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
			line := `{"nested":` + deep + "," + valid[1:]
			f.add(line, AsText, "nested 10,000 levels", line, "", "\n")
		},
		func() { f.add(`[1,2,3]`, RawOnly, "an array", `[1,2,3]`, "", "\n") },
		func() { f.add(`42`, RawOnly, "a number", `42`, "", "\n") },
		func() { f.add(`"just a string"`, RawOnly, "a string", `"just a string"`, "", "\n") },
		func() { f.add(`null`, RawOnly, "null", `null`, "", "\n") },
		func() { f.add(`true`, RawOnly, "true", `true`, "", "\n") },
		func() { f.add(badTS, Warned, "bad timestamp", badTS, "", "\n") },
		func() { l := usage(`"1200"`, `"34"`); f.add(l, Warned, "token counts as strings", l, "", "\n") },
		func() { l := usage(`-1200`, `-34`); f.add(l, Warned, "negative token counts", l, "", "\n") },
		func() { f.add(valid+" "+valid, Skipped, "two values on a line", "", "", "\n") },
		func() { f.add(valid+"\x00", Skipped, "a NUL byte after the value", "", "", "\n") },
		func() { // the same line twice: two raw rows
			f.valid(valid)
			f.valid(valid)
		},
		func() { f.add(valid, Valid, "", valid, "", "\r\n") },
		func() { f.blank(" \t ") },
	}
	h.rng.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
	for _, s := range steps {
		s()
	}
}

// random is n random bytes without a newline, never JSON: the first is a
// byte no JSON text starts with (PNG's 0x89).
func (h *Home) random(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(h.rng.IntN(256))
		if b[i] == '\n' {
			b[i] = 0
		}
	}
	b[0] = 0x89
	return b
}

// corpusLines returns the lines of corpus files (relative paths), or nil
// without a corpus.
func (h *Home) corpusLines(rels ...string) []string {
	if h.corpus == "" {
		return nil
	}
	var out []string
	for _, rel := range rels {
		b, err := os.ReadFile(filepath.Join(h.corpus, rel))
		if err != nil {
			return nil
		}
		for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
			out = append(out, l)
		}
	}
	return out
}

func (h *Home) uuid() string {
	h.seq++
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", h.rng.Uint32(), h.rng.IntN(1<<16), h.seq, h.rng.IntN(1<<12), h.rng.Uint64()&(1<<48-1))
}

// entries adds what is no history file but is named like one: a link to
// itself, a directory and a FIFO.
func (h *Home) entries(platform, dir, prefix string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	loop := filepath.Join(dir, prefix+"loop.jsonl")
	if err := os.Symlink(filepath.Base(loop), loop); err != nil {
		return err
	}
	sub := filepath.Join(dir, prefix+"dir.jsonl")
	if err := os.Mkdir(sub, 0o755); err != nil {
		return err
	}
	fifo := filepath.Join(dir, prefix+"fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		return err
	}
	for _, p := range []struct{ path, what string }{{loop, "symbolic-link loop"}, {sub, "directory"}, {fifo, "FIFO"}} {
		h.Lines = append(h.Lines, Line{Platform: platform, Path: p.path, What: p.what, Expect: Entry})
	}
	return nil
}

// claude writes a Claude Code project: a session of real lines among
// every damage, with a BOM, CRLF lines and one line of BigLine bytes; a
// live session; empty, blank-only and binary files.
func (h *Home) claude(opt Options) error {
	const platform = "claude_code"
	proj := filepath.Join(h.Dir, ".claude", "projects", "-home-dev-webapp")
	session := h.uuid()
	c := func(text, ts string) string {
		return `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/webapp","sessionId":"` + session +
			`","version":"2.1.38","gitBranch":"main","type":"user","message":{"role":"user","content":` + jsonString(text) +
			`},"uuid":"` + h.uuid() + `","timestamp":"` + ts + `"}`
	}
	usage := func(in, out string) string {
		return `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/webapp","sessionId":"` + session +
			`","version":"2.1.38","gitBranch":"main","message":{"model":"claude-opus-4-6","id":"msg_` + strconv.Itoa(h.rng.IntN(1e9)) +
			`","type":"message","role":"assistant","content":[{"type":"text","text":"Done."}],"stop_reason":null,"stop_sequence":null,` +
			`"usage":{"input_tokens":` + in + `,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":` + out +
			`}},"requestId":"req_` + strconv.Itoa(h.rng.IntN(1e9)) + `","type":"assistant","uuid":"` + h.uuid() + `","timestamp":"2026-02-10T21:31:00.000Z"}`
	}
	real := h.corpusLines("claude/spotter/short.jsonl", "claude/spotter/tool_heavy.jsonl")
	if real == nil {
		for i := range 12 {
			real = append(real, c(fmt.Sprintf("prompt %d: refactor the router", i), fmt.Sprintf("2026-02-10T21:%02d:00.000Z", i)),
				usage(strconv.Itoa(100+i), strconv.Itoa(10+i)))
		}
	}
	f := h.file(platform, filepath.Join(proj, session+".jsonl"))
	// A byte order mark before the first line: not part of the JSON.
	f.buf.WriteString("\xEF\xBB\xBF")
	f.valid(real[0])
	half := len(real) / 2
	for i, l := range real[1:half] {
		if i%5 == 4 {
			f.add(l, Valid, "", l, "", "\r\n")
		} else {
			f.valid(l)
		}
	}
	h.damage(f, c, usage, strings.Replace(c("when was this?", "ts"), `"timestamp":"ts"`, `"timestamp":"yesterday at noon"`, 1))
	f.valid(c(h.bigText(opt.BigLine), "2026-02-10T21:40:00.000Z"))
	for _, l := range real[half:] {
		f.valid(l)
	}
	if err := f.write(); err != nil {
		return err
	}

	// A live session: its last line is being written.
	live := h.file(platform, filepath.Join(proj, h.uuid()+".jsonl"))
	for i := range 3 {
		live.valid(c(fmt.Sprintf("live prompt %d", i), fmt.Sprintf("2026-02-11T09:0%d:00.000Z", i)))
	}
	last := usage("321", "12")
	cut := len(last) * 2 / 3
	live.buf.WriteString(last[:cut])
	h.Live = Line{Platform: platform, Path: live.path, Num: live.n + 1, What: "live half-written line", Expect: Valid, Raw: last}
	h.liveRest = []byte(last[cut:] + "\n")
	if err := live.write(); err != nil {
		return err
	}

	// Files that hold nothing, blanks, or binary bytes.
	if err := os.WriteFile(filepath.Join(proj, "empty.jsonl"), nil, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(proj, "blank.jsonl"), []byte("\n  \n\t\r\n\n"), 0o644); err != nil {
		return err
	}
	bin := h.file(platform, filepath.Join(proj, "binary.jsonl"))
	for range 3 {
		bin.add(string(h.random(40+h.rng.IntN(200))), Skipped, "binary bytes", "", "", "\n")
	}
	if err := bin.write(); err != nil {
		return err
	}
	if !opt.NoEntries {
		return h.entries(platform, proj, "")
	}
	return nil
}

// bigText is n bytes of prose.
func (h *Home) bigText(n int) string {
	words := []string{"router", "the", "handler", "refactor", "test", "flaky", "timeout", "cache", "build", "deploy"}
	var b strings.Builder
	b.Grow(n + 16)
	for b.Len() < n {
		b.WriteString(words[h.rng.IntN(len(words))])
		if h.rng.IntN(12) == 0 {
			b.WriteString(".\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// codex writes a Codex rollout: a real one among every damage.
func (h *Home) codex(opt Options) error {
	const platform = "codex"
	dir := filepath.Join(h.Dir, ".codex", "sessions", "2026", "02", "23")
	id := "019c8bfe-ec25-79e0-97d7-bda6a9c575ff"
	real := h.corpusLines("codex/localpush/sessions/2026/02/23/rollout-2026-02-23T20-34-25-" + id + ".jsonl")
	c := func(text, ts string) string {
		return `{"timestamp":"` + ts + `","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":` +
			jsonString(text) + `}]}}`
	}
	usage := func(in, out string) string {
		return `{"timestamp":"2026-02-23T19:40:00.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":` +
			in + `,"cached_input_tokens":0,"output_tokens":` + out + `,"reasoning_output_tokens":0,"total_tokens":0},"last_token_usage":null},"rate_limits":null}}`
	}
	if real == nil {
		real = []string{`{"timestamp":"2026-02-23T19:34:26.098Z","type":"session_meta","payload":{"id":"` + id +
			`","timestamp":"2026-02-23T19:34:25.573Z","cwd":"/home/dev/api","originator":"codex_cli_rs","cli_version":"0.104.0","source":"cli","model_provider":"openai"}}`}
		for i := range 10 {
			real = append(real, c(fmt.Sprintf("prompt %d", i), fmt.Sprintf("2026-02-23T19:35:%02d.000Z", i)))
		}
	}
	f := h.file(platform, filepath.Join(dir, "rollout-2026-02-23T20-34-25-"+id+".jsonl"))
	f.valid(real[0]) // session_meta first
	half := len(real) / 2
	for _, l := range real[1:half] {
		f.valid(l)
	}
	h.damage(f, c, usage, strings.Replace(c("when?", "ts"), `"timestamp":"ts"`, `"timestamp":"2026-13-45T99:00:00Z"`, 1))
	for _, l := range real[half:] {
		f.valid(l)
	}
	if err := f.write(); err != nil {
		return err
	}
	if !opt.NoEntries {
		return h.entries(platform, dir, "rollout-2026-02-24T00-00-00-")
	}
	return nil
}

// gemini writes a Gemini CLI JSONL chat: the corpus's chat (a legacy JSON
// file) as JSONL lines, among every damage.
func (h *Home) gemini(opt Options) error {
	const platform = "gemini"
	chats := filepath.Join(h.Dir, ".gemini", "tmp", "webapp", "chats")
	session := h.uuid()
	meta := `{"sessionId":"` + session + `","projectHash":"d30f91067027d10192e4aed3e7b03fecf08089dd3370f047f14f38b1845c8042",` +
		`"startTime":"2026-06-05T04:59:39.932Z","lastUpdated":"2026-06-05T04:59:44.839Z","kind":"main"}`
	var real []string
	if h.corpus != "" {
		var conv struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if b, err := os.ReadFile(filepath.Join(h.corpus, "gemini", "kvsankar", "session-01.json")); err == nil && json.Unmarshal(b, &conv) == nil {
			for _, m := range conv.Messages {
				var buf bytes.Buffer
				json.Compact(&buf, m)
				real = append(real, buf.String())
			}
		}
	}
	c := func(text, ts string) string {
		return `{"id":"` + h.uuid() + `","timestamp":"` + ts + `","type":"user","content":[{"text":` + jsonString(text) + `}]}`
	}
	usage := func(in, out string) string {
		return `{"id":"` + h.uuid() + `","timestamp":"2026-06-05T05:00:00.000Z","type":"gemini","content":"Done.","thoughts":[],` +
			`"tokens":{"input":` + in + `,"output":` + out + `,"cached":0,"thoughts":0,"tool":0,"total":0},"model":"gemini-2.5-flash"}`
	}
	if real == nil {
		real = []string{c("Refactor the router.", "2026-06-05T04:59:42.197Z"), usage("4383", "8")}
	}
	f := h.file(platform, filepath.Join(chats, "session-2026-06-05T04-59-"+session[:8]+".jsonl"))
	f.valid(meta)
	f.valid(real[0])
	h.damage(f, c, usage, strings.Replace(c("when?", "ts"), `"timestamp":"ts"`, `"timestamp":"not-a-time"`, 1))
	for _, l := range real[1:] {
		f.valid(l)
	}
	f.valid(`{"$set":{"lastUpdated":"2026-06-05T05:01:00.000Z"}}`)
	if err := f.write(); err != nil {
		return err
	}
	if !opt.NoEntries {
		sub := filepath.Join(chats, "session-2026-06-06T00-00-dir.jsonl")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		h.Lines = append(h.Lines, Line{Platform: platform, Path: sub, What: "directory", Expect: Entry})
	}
	return nil
}

// cline writes Cline task folders: the corpus's task with damaged
// elements among its ui rows, a task whose history file is binary, and a
// task whose ui file is empty (not written yet).
func (h *Home) cline(opt Options) error {
	const platform = "cline"
	tasks := filepath.Join(h.Dir, ".cline", "data", "tasks")
	id := "1769064454592"
	dir := filepath.Join(tasks, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	api, ui := h.clineCorpus(id)
	if api == nil {
		api = []string{`{"role":"user","content":[{"type":"text","text":"<task>\nRefactor the router.\n</task>"}]}`,
			`{"role":"assistant","content":[{"type":"text","text":"I will refactor it."}]}`}
		ui = []string{`{"ts":1769064455000,"type":"say","say":"task","text":"Refactor the router."}`,
			`{"ts":1769064455442,"type":"say","say":"api_req_started","text":"{\"tokensIn\":10,\"tokensOut\":814,\"cacheWrites\":0,\"cacheReads\":0,\"cost\":0.07}","conversationHistoryIndex":-1}`,
			`{"ts":1769064457948,"type":"say","say":"text","text":"I will refactor it.","conversationHistoryIndex":0}`}
	}
	type elem struct {
		text          string
		exp           Expect
		what, altered string
		raw           string
	}
	deep := strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000)
	req := func(in, out string) string {
		return `{"ts":1769064999000,"type":"say","say":"api_req_started","text":"{\"tokensIn\":` + strings.ReplaceAll(in, `"`, `\"`) +
			`,\"tokensOut\":` + strings.ReplaceAll(out, `"`, `\"`) + `,\"cacheWrites\":0,\"cacheReads\":0,\"cost\":0.01}"}`
	}
	bad := []elem{
		{`{"ts":1769064999001,"type":"say","say":"text","text":"hello \ud800 world"}`, Repaired, "lone surrogate", "surrogate", ""},
		{"{\"ts\":1769064999002,\"type\":\"say\",\"say\":\"text\",\"text\":\"bell \x07 NUL \x00\"}", Repaired, "control bytes", "control", ""},
		{"{\"ts\":1769064999003,\"type\":\"say\",\"say\":\"text\",\"text\":\"bad \xff utf-8\"}", Repaired, "invalid UTF-8", "utf8", ""},
		{`{"ts":1769064999004,"type":"say","say":"text","deep":` + deep + `}`, AsText, "nested 10,000 levels", "", ""},
		{`[1,2]`, RawOnly, "an array", "", `[1,2]`},
		{`"a string"`, RawOnly, "a string", "", `"a string"`},
		{`null`, RawOnly, "null", "", `null`},
		{`{"ts":"last tuesday","type":"say","say":"text","text":"when?"}`, Warned, "bad timestamp", "", ""},
		{req(`-10`, `-814`), Warned, "negative token counts", "", ""},
		{req(`"10"`, `"814"`), Warned, "token counts as strings", "", ""},
		{`{"ts" 1769064999005}`, Skipped, "not JSON", "", ""},
	}
	var elems []elem
	for _, u := range ui {
		elems = append(elems, elem{text: u, exp: Valid, raw: u})
	}
	for _, b := range bad {
		if b.raw == "" && (b.exp == Warned || b.exp == AsText) {
			b.raw = b.text
		}
		at := h.rng.IntN(len(elems) + 1)
		elems = append(elems[:at], append([]elem{b}, elems[at:]...)...)
	}
	var buf bytes.Buffer
	buf.WriteString("\xEF\xBB\xBF[") // a byte order mark: not part of the JSON
	for i, e := range elems {
		if i > 0 {
			buf.WriteString(",\n")
		}
		buf.WriteString(e.text)
		h.Lines = append(h.Lines, Line{Platform: platform, Path: filepath.Join(dir, "ui_messages.json"), Key: "ui_messages.json[" + strconv.Itoa(i) + "]",
			What: e.what, Expect: e.exp, Raw: e.raw, Altered: e.altered})
	}
	buf.WriteString("]\n")
	if err := os.WriteFile(filepath.Join(dir, "ui_messages.json"), buf.Bytes(), 0o644); err != nil {
		return err
	}
	buf.Reset()
	buf.WriteString("[")
	for i, a := range api {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString(a)
		h.Lines = append(h.Lines, Line{Platform: platform, Path: filepath.Join(dir, "api_conversation_history.json"),
			Key: "api_conversation_history.json[" + strconv.Itoa(i) + "]", Expect: Valid, Raw: a})
	}
	buf.WriteString("]")
	if err := os.WriteFile(filepath.Join(dir, "api_conversation_history.json"), buf.Bytes(), 0o644); err != nil {
		return err
	}

	// A task whose history file is binary, and one whose ui file is empty.
	bin := filepath.Join(tasks, "1769064460000")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	p := filepath.Join(bin, "api_conversation_history.json")
	if err := os.WriteFile(p, h.random(300), 0o644); err != nil {
		return err
	}
	h.Lines = append(h.Lines, Line{Platform: platform, Path: p, Key: "api_conversation_history.json", What: "binary file", Expect: Skipped})
	empty := filepath.Join(tasks, "1769064470000")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(empty, "ui_messages.json"), nil, 0o644)
}

// clineCorpus returns the elements of the corpus task's history and ui
// files, compacted, or nil.
func (h *Home) clineCorpus(id string) (api, ui []string) {
	if h.corpus == "" {
		return nil, nil
	}
	read := func(name string) []string {
		b, err := os.ReadFile(filepath.Join(h.corpus, "cline", "gmfstu", id, name))
		if err != nil {
			return nil
		}
		var elems []json.RawMessage
		if json.Unmarshal(b, &elems) != nil {
			return nil
		}
		out := make([]string, len(elems))
		for i, e := range elems {
			var buf bytes.Buffer
			json.Compact(&buf, e)
			out[i] = buf.String()
		}
		return out
	}
	api, ui = read("api_conversation_history.json"), read("ui_messages.json")
	if api == nil || ui == nil {
		return nil, nil
	}
	return api, ui
}
