package damage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

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
