package scrubtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Places are where in a session a credential is written.
var Places = []string{"prompt", "thinking", "answer", "tool-input", "file-write", "tool-output", "summary"}

// A Planted credential: its snippet, and where it was written.
type Planted struct {
	Snippet
	Platform, Place string
}

// A Home is a generated home directory holding agent sessions of every
// platform in their native formats, with credentials planted in them.
type Home struct {
	Dir     string
	Planted []Planted
	// LookAlikes are strings that look like secrets and are not: commit
	// SHAs, UUIDs, lockfile integrity hashes, go.sum lines, image data,
	// test vectors. Scrubbing keeps them.
	LookAlikes []string
	// AiderRoot is the folder to give pos-extract --platform aider --root.
	AiderRoot string
}

// SQLiteWriter writes a Cursor state.vscdb at path with the given
// cursorDiskKV rows (key, value): the caller brings the SQLite driver.
type SQLiteWriter func(path string, rows [][2]string) error

// Snippets generates the set's snippets from seed: every kind in every
// context it fits, each snippet with a credential of its own.
func Snippets(seed uint64) []Snippet {
	r := NewRand(seed)
	var out []Snippet
	for _, k := range Kinds {
		n := len(Contexts(k, k.gen(r), r))
		for i := 0; i < n; i++ {
			c := k.gen(r)
			c.Kind = k.Name
			s := Contexts(k, c, r)
			out = append(out, s[i%len(s)])
		}
	}
	return out
}

// WriteHome writes the set generated from seed into dir, laid out as the
// agents lay out a home ($HOME/.claude, $HOME/.codex, …; Aider's history in
// dir/projects/app). Every snippet goes to one platform and place, in turn,
// so that each kind reaches every platform and every context.
func WriteHome(dir string, seed uint64, sqlite SQLiteWriter) (*Home, error) {
	h := &Home{Dir: dir, AiderRoot: filepath.Join(dir, "projects")}
	platforms := natives
	if sqlite == nil {
		platforms = platforms[:len(platforms)-1] // no Cursor database without a driver
	}
	for i, s := range Snippets(seed) {
		p := Planted{Snippet: s, Platform: platforms[i%len(platforms)].platform, Place: Places[(i/len(platforms)+i)%len(Places)]}
		h.Planted = append(h.Planted, p)
	}
	r := NewRand(seed ^ 0xabcdef)
	h.LookAlikes = lookAlikes(r)
	by := map[string][]Planted{}
	for _, p := range h.Planted {
		by[p.Platform] = append(by[p.Platform], p)
	}
	w := &writer{dir: dir, r: r, looks: h.LookAlikes}
	for _, pl := range platforms {
		items := by[pl.platform]
		// Sessions of a few dozen turns, as agents write them.
		for n := 0; len(items) > 0; n++ {
			k := min(len(items), 30)
			if err := pl.write(w, n, items[:k], sqlite); err != nil {
				return nil, fmt.Errorf("%s: %w", pl.platform, err)
			}
			items = items[k:]
		}
	}
	if err := w.flushCursor(sqlite); err != nil {
		return nil, err
	}
	return h, nil
}

// lookAlikes are the ordinary strings of a coding session that look like
// secrets: they must be kept.
func lookAlikes(r *rng) []string {
	var out []string
	for i := 0; i < 4; i++ {
		out = append(out, r.str(hexLow, 40)) // commit SHAs
		out = append(out, r.uuid())
		out = append(out, "sha512-"+r.str(b64, 86)+"==")
		out = append(out, "h1:"+r.str(b64, 43)+"=")
		out = append(out, r.str(hexLow, 64)) // a test vector
	}
	out = append(out, "iVBORw0KGgoAAAANSUhEUgAA"+r.str(b64, 120))
	return out
}

// lookAlikeText is a tool output of the session holding the look-alikes
// in their usual places.
func lookAlikeText(l []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "commit %s\nAuthor: Dev <dev@example.com>\n\n    fix the build\n\n", l[0])
	fmt.Fprintf(&b, "request id %s failed\n", l[1])
	fmt.Fprintf(&b, "package-lock.json:\n    \"node_modules/left-pad\": {\n      \"version\": \"1.3.0\",\n      \"integrity\": \"%s\"\n    }\n", l[2])
	fmt.Fprintf(&b, "go.sum:\ngithub.com/google/uuid v1.6.0 %s\n", l[3])
	fmt.Fprintf(&b, "sha256_test.go:\n\t{in: \"abc\", want: \"%s\"},\n", l[4])
	fmt.Fprintf(&b, "$ git rev-parse HEAD\n%s\n", l[5])
	fmt.Fprintf(&b, "trace_id=%s span_id=%s\n", l[6], l[11])
	fmt.Fprintf(&b, "\"integrity\": \"%s\"\n", l[7])
	fmt.Fprintf(&b, "golang.org/x/sys v0.30.0/go.mod %s\n", l[8])
	fmt.Fprintf(&b, "expected digest %s\n", l[9])
	fmt.Fprintf(&b, "HEAD is now at %s\n", l[10])
	fmt.Fprintf(&b, "<img src=\"data:image/png;base64,%s\">\n", l[len(l)-1])
	for _, s := range l[12 : len(l)-1] {
		fmt.Fprintf(&b, "%s\n", s)
	}
	return b.String()
}

type writer struct {
	dir   string
	r     *rng
	looks []string
	rows  [][2]string
}

func (w *writer) write(rel string, data []byte) error {
	p := filepath.Join(w.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b))
}

func jsonl(lines []any) []byte {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(js(l))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

type obj = map[string]any

// texts are the words around a snippet in each place.
func prompt(s Snippet) string {
	if s.Cred.Command {
		return "Please run this for me:\n" + s.Text
	}
	return "Set up the deploy with these settings:\n" + s.Text + "\nthanks"
}

func thinking(s Snippet) string {
	return "The user pasted their configuration:\n" + s.Text + "\nI should write it to the config file and not echo it back."
}

func answer(s Snippet) string {
	return "I added this to the configuration:\n\n```\n" + s.Text + "\n```\n\nRestart the service to pick it up."
}

func command(s Snippet) string {
	if s.Cred.Command {
		return s.Text
	}
	return "cat >> .env <<'EOF'\n" + s.Text + "\nEOF"
}

func output(s Snippet) string { return "$ cat config/settings\n" + s.Text + "\n" }

func summary(s Snippet) string {
	return "This session is being continued from a previous conversation. Summary:\n1. The user asked to configure the deploy.\n2. Settings used:\n" + s.Text + "\n3. Next: run the tests."
}

func fileName(s Snippet) string {
	switch {
	case strings.HasPrefix(s.Context, "json"):
		return "config/settings.json"
	case strings.HasPrefix(s.Context, "yaml"):
		return "deploy/values.yaml"
	case s.Context == "toml":
		return "config.toml"
	case strings.HasPrefix(s.Context, "python"):
		return "app/settings.py"
	case s.Context == "js":
		return "src/config.js"
	case s.Context == "go":
		return "internal/config/config.go"
	case s.Context == "pem-file":
		return "keys/id_key.pem"
	}
	return ".env"
}

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func ts(n, i int) time.Time { return t0.Add(time.Duration(n)*time.Hour + time.Duration(i)*time.Second) }

func iso(t time.Time) string { return t.Format("2006-01-02T15:04:05.000Z") }

func (w *writer) uuid() string { return w.r.uuid() }

// claude writes a Claude Code session: user prompts, assistant thinking,
// text and tool_use lines, tool_result lines with toolUseResult, and a
// compaction summary line.
func (w *writer) claude(n int, items []Planted) error {
	sid := w.uuid()
	var lines []any
	parent := any(nil)
	add := func(i int, typ string, msg obj, extra obj) {
		u := w.uuid()
		l := obj{"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": "/home/dev/app", "sessionId": sid,
			"version": "2.1.39", "gitBranch": "main", "type": typ, "message": msg, "uuid": u, "timestamp": iso(ts(n, i))}
		for k, v := range extra {
			l[k] = v
		}
		lines = append(lines, l)
		parent = u
	}
	asst := func(i int, block obj) {
		add(i, "assistant", obj{"model": "claude-opus-4-6", "id": "msg_" + w.r.str(alnum, 24), "type": "message", "role": "assistant",
			"content": []obj{block}, "stop_reason": nil, "usage": obj{"input_tokens": 10, "output_tokens": 20}}, obj{"requestId": "req_" + w.r.str(alnum, 24)})
	}
	add(0, "user", obj{"role": "user", "content": "Help me configure the deploy of this app."}, nil)
	for i, p := range items {
		i++
		switch p.Place {
		case "prompt":
			add(i, "user", obj{"role": "user", "content": prompt(p.Snippet)}, nil)
		case "thinking":
			asst(i, obj{"type": "thinking", "thinking": thinking(p.Snippet), "signature": "sig"})
		case "answer":
			asst(i, obj{"type": "text", "text": answer(p.Snippet)})
		case "tool-input", "tool-output":
			id := "toolu_" + w.r.str(alnum, 24)
			cmd, out := "ls config", "settings\n"
			if p.Place == "tool-input" {
				cmd = command(p.Snippet)
			} else {
				cmd, out = "cat config/settings", output(p.Snippet)
			}
			asst(i, obj{"type": "tool_use", "id": id, "name": "Bash", "input": obj{"command": cmd, "description": "Configure"}})
			add(i, "user", obj{"role": "user", "content": []obj{{"type": "tool_result", "tool_use_id": id, "content": out}}},
				obj{"toolUseResult": obj{"stdout": out, "stderr": "", "interrupted": false}})
		case "file-write":
			id := "toolu_" + w.r.str(alnum, 24)
			f := "/home/dev/app/" + fileName(p.Snippet)
			asst(i, obj{"type": "tool_use", "id": id, "name": "Write", "input": obj{"file_path": f, "content": p.Text + "\n"}})
			add(i, "user", obj{"role": "user", "content": []obj{{"type": "tool_result", "tool_use_id": id, "content": "File created successfully at: " + f}}},
				obj{"toolUseResult": obj{"type": "create", "filePath": f, "content": p.Text + "\n"}})
		case "summary":
			lines = append(lines, obj{"parentUuid": parent, "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
				"sessionId": sid, "uuid": w.uuid(), "timestamp": iso(ts(n, i)), "compactMetadata": obj{"trigger": "auto", "preTokens": 150000}})
			add(i, "user", obj{"role": "user", "content": summary(p.Snippet)}, obj{"isCompactSummary": true})
		}
	}
	id := "toolu_" + w.r.str(alnum, 24)
	asst(len(items)+1, obj{"type": "tool_use", "id": id, "name": "Bash", "input": obj{"command": "git log -1; cat package-lock.json"}})
	add(len(items)+1, "user", obj{"role": "user", "content": []obj{{"type": "tool_result", "tool_use_id": id, "content": lookAlikeText(w.looks)}}}, nil)
	return w.write(fmt.Sprintf(".claude/projects/-home-dev-app/%s.jsonl", sid), jsonl(lines))
}

// codex writes a Codex rollout: user and assistant messages, reasoning
// summaries, function calls whose arguments and outputs are JSON strings,
// apply_patch calls, and a compaction.
func (w *writer) codex(n int, items []Planted) error {
	sid := w.uuid()
	var lines []any
	add := func(i int, typ string, payload obj) {
		lines = append(lines, obj{"timestamp": iso(ts(n, i)), "type": typ, "payload": payload})
	}
	add(0, "session_meta", obj{"id": sid, "timestamp": iso(ts(n, 0)), "cwd": "/home/dev/app", "originator": "codex_cli_rs", "cli_version": "0.110.0",
		"source": "cli", "model_provider": "openai"})
	add(0, "turn_context", obj{"turn_id": "turn-1", "cwd": "/home/dev/app", "model": "gpt-5.3-codex"})
	user := func(i int, text string) {
		add(i, "response_item", obj{"type": "message", "role": "user", "content": []obj{{"type": "input_text", "text": text}}})
		add(i, "event_msg", obj{"type": "user_message", "message": text, "images": []any{}})
	}
	call := func(i int, cmd, out string) {
		id := "call_" + w.r.str(alnum, 24)
		add(i, "response_item", obj{"type": "function_call", "name": "exec_command", "arguments": js(obj{"cmd": cmd, "workdir": "/home/dev/app"}), "call_id": id})
		add(i, "response_item", obj{"type": "function_call_output", "call_id": id, "output": "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n" + out})
	}
	user(0, "Help me configure the deploy of this app.")
	for i, p := range items {
		i++
		switch p.Place {
		case "prompt":
			user(i, prompt(p.Snippet))
		case "thinking":
			add(i, "response_item", obj{"type": "reasoning", "summary": []obj{{"type": "summary_text", "text": thinking(p.Snippet)}}, "content": nil, "encrypted_content": "gAAAA"})
		case "answer":
			add(i, "response_item", obj{"type": "message", "role": "assistant", "content": []obj{{"type": "output_text", "text": answer(p.Snippet)}}})
			add(i, "event_msg", obj{"type": "agent_message", "message": answer(p.Snippet)})
		case "tool-input":
			call(i, command(p.Snippet), "")
		case "tool-output":
			call(i, "cat config/settings", output(p.Snippet))
		case "file-write":
			id := "call_" + w.r.str(alnum, 24)
			patch := "*** Begin Patch\n*** Add File: " + fileName(p.Snippet) + "\n+" + strings.ReplaceAll(p.Text, "\n", "\n+") + "\n*** End Patch\n"
			add(i, "response_item", obj{"type": "custom_tool_call", "status": "completed", "call_id": id, "name": "apply_patch", "input": patch})
			add(i, "response_item", obj{"type": "custom_tool_call_output", "call_id": id, "output": js(obj{"output": "Success. Updated the following files:\nA " + fileName(p.Snippet) + "\n", "metadata": obj{"exit_code": 0}})})
		case "summary":
			add(i, "event_msg", obj{"type": "context_compacted"})
			add(i, "compacted", obj{"message": summary(p.Snippet), "replacement_history": []obj{{"type": "message", "role": "user", "content": []obj{{"type": "input_text", "text": "Help me configure the deploy of this app."}}}}})
		}
	}
	call(len(items)+1, "git log -1; cat package-lock.json", lookAlikeText(w.looks))
	add(len(items)+1, "event_msg", obj{"type": "task_complete", "turn_id": "turn-1"})
	t := ts(n, 0)
	return w.write(fmt.Sprintf(".codex/sessions/%s/rollout-%s-%s.jsonl", t.Format("2006/01/02"), t.Format("2006-01-02T15-04-05"), sid), jsonl(lines))
}

// gemini writes a Gemini CLI chat (the JSON file of older versions for
// even sessions, the JSONL of newer ones for odd).
func (w *writer) gemini(n int, items []Planted) error {
	sid := w.uuid()
	var msgs []any
	add := func(i int, m obj) {
		m["id"] = w.uuid()
		m["timestamp"] = iso(ts(n, i))
		msgs = append(msgs, m)
	}
	gem := func(i int, content string, thoughts string, calls []obj) {
		m := obj{"type": "gemini", "content": content, "model": "gemini-2.5-pro", "tokens": obj{"input": 100, "output": 20, "cached": 0, "thoughts": 0, "tool": 0, "total": 120}}
		if thoughts != "" {
			m["thoughts"] = []obj{{"subject": "Planning", "description": thoughts, "timestamp": iso(ts(n, i))}}
		}
		if calls != nil {
			m["toolCalls"] = calls
		}
		add(i, m)
	}
	tool := func(name string, args obj, out string) []obj {
		id := name + "-" + w.r.str(digits, 8)
		return []obj{{"id": id, "name": name, "args": args, "status": "success", "timestamp": iso(ts(n, 0)),
			"result": []obj{{"functionResponse": obj{"id": id, "name": name, "response": obj{"output": out}}}}}}
	}
	add(0, obj{"type": "user", "content": []obj{{"text": "Help me configure the deploy of this app."}}})
	for i, p := range items {
		i++
		switch p.Place {
		case "prompt":
			add(i, obj{"type": "user", "content": []obj{{"text": prompt(p.Snippet)}}})
		case "thinking":
			gem(i, "Working on it.", thinking(p.Snippet), nil)
		case "answer":
			gem(i, answer(p.Snippet), "", nil)
		case "tool-input":
			gem(i, "", "", tool("run_shell_command", obj{"command": command(p.Snippet), "description": "Configure"}, "Command: done\nExit Code: 0"))
		case "tool-output":
			gem(i, "", "", tool("read_file", obj{"absolute_path": "/home/dev/app/config/settings"}, output(p.Snippet)))
		case "file-write":
			gem(i, "", "", tool("write_file", obj{"file_path": "/home/dev/app/" + fileName(p.Snippet), "content": p.Text + "\n"}, "Successfully created and wrote to new file"))
		case "summary":
			add(i, obj{"type": "user", "content": []obj{{"text": "<state_snapshot>\n" + summary(p.Snippet) + "\n</state_snapshot>"}}})
		}
	}
	gem(len(items)+1, "", "", tool("run_shell_command", obj{"command": "git log -1"}, lookAlikeText(w.looks)))
	hash := w.r.str(hexLow, 64)
	if n%2 == 0 {
		doc := obj{"sessionId": sid, "projectHash": hash, "startTime": iso(ts(n, 0)), "lastUpdated": iso(ts(n, len(items)+1)), "messages": msgs, "kind": "main"}
		b, _ := json.MarshalIndent(doc, "", "  ")
		return w.write(fmt.Sprintf(".gemini/tmp/%s/chats/session-%s-%s.json", hash, ts(n, 0).Format("2006-01-02T15-04"), sid[:8]), b)
	}
	lines := []any{obj{"sessionId": sid, "projectHash": hash, "startTime": iso(ts(n, 0)), "lastUpdated": iso(ts(n, 0)), "kind": "main"}}
	lines = append(lines, msgs...)
	return w.write(fmt.Sprintf(".gemini/tmp/app/chats/session-%s-%s.jsonl", ts(n, 0).Format("2006-01-02T15-04"), sid[:8]), jsonl(lines))
}

// cline writes a Cline task folder: the API conversation history and the
// UI messages (whose api_req_started and tool asks hold JSON in strings).
func (w *writer) cline(n int, items []Planted) error {
	task := fmt.Sprint(ts(n, 0).UnixMilli())
	var api, ui []any
	ms := func(i int) int64 { return ts(n, i).UnixMilli() }
	say := func(i int, kind, text string) {
		ui = append(ui, obj{"ts": ms(i), "type": "say", "say": kind, "text": text, "conversationHistoryIndex": len(api) - 1})
	}
	ask := func(i int, kind, text string) {
		ui = append(ui, obj{"ts": ms(i), "type": "ask", "ask": kind, "text": text, "conversationHistoryIndex": len(api) - 1})
	}
	user := func(i int, text string) {
		api = append(api, obj{"role": "user", "content": []obj{{"type": "text", "text": text}}})
		say(i, "api_req_started", js(obj{"request": text, "tokensIn": 100, "tokensOut": 20, "cacheWrites": 0, "cacheReads": 0, "cost": 0.01}))
	}
	asst := func(blocks ...obj) {
		api = append(api, obj{"role": "assistant", "content": blocks, "modelInfo": obj{"modelId": "claude-sonnet-4-5", "providerId": "anthropic", "mode": "act"}})
	}
	first := "<task>\nHelp me configure the deploy of this app.\n</task>"
	say(0, "text", "Help me configure the deploy of this app.")
	user(0, first)
	for i, p := range items {
		i++
		switch p.Place {
		case "prompt":
			say(i, "user_feedback", prompt(p.Snippet))
			user(i, "<feedback>\n"+prompt(p.Snippet)+"\n</feedback>")
		case "thinking":
			say(i, "reasoning", thinking(p.Snippet))
			asst(obj{"type": "thinking", "thinking": thinking(p.Snippet), "signature": "sig"}, obj{"type": "text", "text": "Working on it."})
		case "answer":
			say(i, "completion_result", answer(p.Snippet))
			asst(obj{"type": "tool_use", "id": "toolu_" + w.r.str(alnum, 20), "name": "attempt_completion", "input": obj{"result": answer(p.Snippet)}})
		case "tool-input":
			ask(i, "command", command(p.Snippet))
			asst(obj{"type": "tool_use", "id": "toolu_" + w.r.str(alnum, 20), "name": "execute_command", "input": obj{"command": command(p.Snippet), "requires_approval": "false"}})
			user(i, "[execute_command for '"+command(p.Snippet)+"'] Result:\nCommand executed.")
		case "tool-output":
			say(i, "command_output", output(p.Snippet))
			asst(obj{"type": "tool_use", "id": "toolu_" + w.r.str(alnum, 20), "name": "execute_command", "input": obj{"command": "cat config/settings"}})
			user(i, "[execute_command for 'cat config/settings'] Result:\n"+output(p.Snippet))
		case "file-write":
			f := fileName(p.Snippet)
			ask(i, "tool", js(obj{"tool": "newFileCreated", "path": f, "content": p.Text + "\n"}))
			asst(obj{"type": "tool_use", "id": "toolu_" + w.r.str(alnum, 20), "name": "write_to_file", "input": obj{"path": f, "content": p.Text + "\n"}})
			user(i, "[write_to_file for '"+f+"'] Result:\nThe content was successfully saved to "+f+".")
		case "summary":
			say(i, "condense", summary(p.Snippet))
			user(i, summary(p.Snippet))
		}
	}
	user(len(items)+1, "[execute_command for 'git log -1'] Result:\n"+lookAlikeText(w.looks))
	dir := ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/" + task + "/"
	if err := w.write(dir+"api_conversation_history.json", []byte(js(api))); err != nil {
		return err
	}
	return w.write(dir+"ui_messages.json", []byte(js(ui)))
}

// push writes a log in the push protocol (PROTOCOL.md of extract/push).
func (w *writer) push(n int, items []Planted) error {
	sid := fmt.Sprintf("s-%d", n)
	lines := []any{obj{"v": 1, "type": "session", "session_id": sid, "timestamp": ts(n, 0).Format(time.RFC3339), "title": "Configure the deploy", "agent": "my-agent", "project": "/home/dev/app"}}
	msg := func(i int, m obj) {
		m["v"], m["type"], m["session_id"], m["timestamp"] = 1, "message", sid, ts(n, i).Format(time.RFC3339)
		m["id"] = fmt.Sprintf("m%d", len(lines))
		lines = append(lines, m)
	}
	for i, p := range items {
		i++
		switch p.Place {
		case "prompt":
			msg(i, obj{"role": "user", "text": prompt(p.Snippet)})
		case "thinking":
			msg(i, obj{"role": "assistant", "text": "Working on it.", "thinking": thinking(p.Snippet), "model": "claude-sonnet-4-5"})
		case "answer":
			msg(i, obj{"role": "assistant", "text": answer(p.Snippet), "model": "claude-sonnet-4-5"})
		case "tool-input":
			msg(i, obj{"role": "assistant", "text": "", "tools": []obj{{"name": "Bash", "call_id": fmt.Sprint("t", i), "input": obj{"command": command(p.Snippet)}}}})
		case "tool-output":
			msg(i, obj{"role": "tool", "tools": []obj{{"call_id": fmt.Sprint("t", i), "output": output(p.Snippet)}}})
		case "file-write":
			msg(i, obj{"role": "assistant", "text": "", "tools": []obj{{"name": "Write", "call_id": fmt.Sprint("t", i), "input": obj{"file_path": fileName(p.Snippet), "content": p.Text + "\n"}}}, "files": []string{fileName(p.Snippet)}})
		case "summary":
			lines = append(lines, obj{"v": 1, "type": "context_reset", "timestamp": ts(n, i).Format(time.RFC3339), "session_id": sid, "reason": "context_limit", "summary": summary(p.Snippet)})
		}
	}
	msg(len(items)+1, obj{"role": "tool", "tools": []obj{{"call_id": "tz", "output": lookAlikeText(w.looks)}}})
	return w.write(fmt.Sprintf(".local/share/pos/push/my-agent/%s.jsonl", sid), jsonl(lines))
}

// aider writes an Aider chat history: #### prompts, answers with
// SEARCH/REPLACE blocks, > tool lines.
func (w *writer) aider(n int, items []Planted) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\n# aider chat started at %s\n\n> Aider v0.86.1\n> Model: gpt-4o with diff edit format\n\n", ts(n, 0).Format("2006-01-02 15:04:05"))
	quote := func(s string) string { return "> " + strings.ReplaceAll(s, "\n", "\n> ") + "\n\n" }
	for _, p := range items {
		switch p.Place {
		case "prompt", "summary":
			text := prompt(p.Snippet)
			if p.Place == "summary" {
				text = summary(p.Snippet)
			}
			b.WriteString("#### " + strings.ReplaceAll(text, "\n", "\n#### ") + "\n\n")
		case "thinking":
			b.WriteString("<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>\n\n" + thinking(p.Snippet) + "\n\n</thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>\n\nDone.\n\n")
		case "answer":
			b.WriteString(answer(p.Snippet) + "\n\n")
		case "tool-input":
			b.WriteString("#### /run " + strings.ReplaceAll(command(p.Snippet), "\n", "\n#### ") + "\n\n")
		case "tool-output":
			b.WriteString(quote("Running cat config/settings") + quote(output(p.Snippet)))
		case "file-write":
			b.WriteString(fileName(p.Snippet) + "\n````\n<<<<<<< SEARCH\n=======\n" + p.Text + "\n>>>>>>> REPLACE\n````\n\n" + quote("Applied edit to "+fileName(p.Snippet)))
		}
	}
	b.WriteString(quote("Running git log -1") + quote(lookAlikeText(w.looks)))
	return w.write(fmt.Sprintf("projects/app%d/.aider.chat.history.md", n), []byte(b.String()))
}

// cursor collects a composer and its bubbles for the global database, and
// writes an agent transcript of the same turns.
func (w *writer) cursor(n int, items []Planted, sqlite SQLiteWriter) error {
	cid := w.uuid()
	var heads []obj
	bubble := func(i, typ int, b obj) {
		id := w.uuid()
		b["_v"], b["type"], b["bubbleId"] = 2, typ, id
		if typ == 2 {
			b["timingInfo"] = obj{"clientRpcSendTime": ts(n, i).UnixMilli(), "clientEndTime": ts(n, i).UnixMilli() + 500}
		}
		heads = append(heads, obj{"bubbleId": id, "type": typ})
		w.rows = append(w.rows, [2]string{"bubbleId:" + cid + ":" + id, js(b)})
	}
	tool := func(i int, name string, args obj, result obj) {
		bubble(i, 2, obj{"text": "", "toolFormerData": obj{"tool": 15, "toolCallId": "call_" + w.r.str(alnum, 12), "status": "completed", "name": name,
			"rawArgs": js(args), "params": js(args), "result": js(result)}})
	}
	var tr []any
	turn := func(role, text string) {
		tr = append(tr, obj{"role": role, "message": obj{"content": []obj{{"type": "text", "text": text}}}})
	}
	bubble(0, 1, obj{"text": "Help me configure the deploy of this app."})
	for i, p := range items {
		i++
		switch p.Place {
		case "prompt", "summary":
			text := prompt(p.Snippet)
			if p.Place == "summary" {
				text = summary(p.Snippet)
			}
			bubble(i, 1, obj{"text": text})
			turn("user", text)
		case "thinking":
			bubble(i, 2, obj{"text": "", "thinking": obj{"text": thinking(p.Snippet), "signature": "sig"}})
		case "answer":
			bubble(i, 2, obj{"text": answer(p.Snippet)})
			turn("assistant", answer(p.Snippet))
		case "tool-input":
			tool(i, "run_terminal_cmd", obj{"command": command(p.Snippet), "is_background": false}, obj{"output": "", "exitCode": 0})
		case "tool-output":
			tool(i, "run_terminal_cmd", obj{"command": "cat config/settings"}, obj{"output": output(p.Snippet), "exitCode": 0})
		case "file-write":
			tool(i, "edit_file", obj{"target_file": fileName(p.Snippet), "code_edit": p.Text + "\n"}, obj{"diff": obj{"chunks": []obj{{"diffString": "+ " + p.Text, "linesAdded": 1}}}, "isApplied": true})
		}
	}
	tool(len(items)+1, "run_terminal_cmd", obj{"command": "git log -1"}, obj{"output": lookAlikeText(w.looks)})
	w.rows = append(w.rows, [2]string{"composerData:" + cid, js(obj{"_v": 3, "composerId": cid, "name": "Configure the deploy",
		"createdAt": ts(n, 0).UnixMilli(), "lastUpdatedAt": ts(n, len(items)+1).UnixMilli(), "status": "completed", "unifiedMode": "agent",
		"fullConversationHeadersOnly": heads, "conversationMap": obj{}})})
	if len(tr) > 0 {
		return w.write(fmt.Sprintf(".cursor/projects/home-dev-app/agent-transcripts/%s/%s.jsonl", cid, cid), jsonl(tr))
	}
	return nil
}

func (w *writer) flushCursor(sqlite SQLiteWriter) error {
	if len(w.rows) == 0 || sqlite == nil {
		return nil
	}
	p := filepath.Join(w.dir, ".config", "Cursor", "User", "globalStorage", "state.vscdb")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return sqlite(p, w.rows)
}
