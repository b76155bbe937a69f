package cursor

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/testfs"
)

// The fixture is built by the tests themselves: a home directory with a
// Cursor User directory (a 2025 global database, a workspace database with
// composer heads, a 2023 aichat workspace, a 2024 inline-composer
// workspace) and ~/.cursor/projects agent transcripts, all with fixed
// modification times. Each database also holds credential rows and
// look-alike keys that must never be read.

var fixtureMtime = time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)

// Ids of the fixture's conversations.
const (
	cKV       = "11111111-1111-4111-8111-111111111111" // 2025 composer, bodies in bubbleId rows
	cNull     = "22222222-2222-4222-8222-222222222222" // composerData row is NULL
	cEmpty    = "33333333-3333-4333-8333-333333333333" // a new composer, no bubbles
	cInlineKV = "44444444-4444-4444-8444-444444444444" // global composer with an inline conversation
	cBad      = "55555555-5555-4555-8555-555555555555" // composerData that is not JSON
	cOrphan   = "66666666-6666-4666-8666-666666666666" // bubbles without a composerData row
	cHeadOnly = "77777777-7777-4777-8777-777777777777" // a head whose body is nowhere
	cInline   = "88888888-8888-4888-8888-888888888888" // 2024 workspace inline composer
	tab1      = "99999999-9999-4999-8999-999999999991" // 2023 tab
	tab2      = "99999999-9999-4999-8999-999999999992" // 2023 "New chat" tab
	trMain    = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaa1" // agent transcript
	trSub     = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbb1" // its subagent
	trLegacy  = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaa2" // legacy .txt transcript
)

// Secrets planted in rows the adapter must never read.
var secrets = []string{
	"SECRET-ACCESS-TOKEN-0001", "SECRET-REFRESH-TOKEN-0002", "secret-user@example.com",
	"SECRET-MACHINE-ID-0003", "SECRET-LOOKALIKE-0004", "SECRET-KV-TOKEN-0005",
	"SECRET-KV-LOOKALIKE-0006", "SECRET-KV-LOOKALIKE-0007", "SECRET-WS-0008", "SECRET-PROMPT-HISTORY-0009",
	"SECRET-CHECKPOINT-0010", "SECRET-BACKUP-0011",
}

// ms is an epoch-milliseconds time of the fixture: minute m after
// 2026-03-01T10:00Z, plus s seconds.
func ms(m, s int) int64 {
	return time.Date(2026, 3, 1, 10, m, s, 0, time.UTC).UnixMilli()
}

func msS(m, s int) string { return strconv.FormatInt(ms(m, s), 10) }

type kvRow struct {
	table, key string
	value      any // string (TEXT), []byte (BLOB), nil (NULL)
}

// writeDB creates a Cursor-style database with the given rows.
func writeDB(t testing.TB, path string, kvTable bool, rows []kvRow) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", sqliteURI(path, "_pragma=journal_mode(delete)"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{`CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`}
	if kvTable {
		stmts = append(stmts, `CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rows {
		if _, err := db.Exec(`INSERT INTO `+r.table+` (key, value) VALUES (?, ?)`, r.key, r.value); err != nil {
			t.Fatal(err)
		}
	}
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

type obj = map[string]any

func bubbleRow(composerID string, b obj) kvRow {
	return kvRow{"cursorDiskKV", "bubbleId:" + composerID + ":" + b["bubbleId"].(string), js(b)}
}

// globalRows is the 2025 global database.
func globalRows() []kvRow {
	rows := []kvRow{
		{"ItemTable", "cursorAuth/accessToken", "eyJ.SECRET-ACCESS-TOKEN-0001"},
		{"ItemTable", "cursorAuth/refreshToken", "SECRET-REFRESH-TOKEN-0002"},
		{"ItemTable", "cursorAuth/cachedEmail", "secret-user@example.com"},
		{"ItemTable", "storage.serviceMachineId", "SECRET-MACHINE-ID-0003"},
		{"ItemTable", "composer.composerDataX", js(obj{"allComposers": []obj{{"composerId": "SECRET-LOOKALIKE-0004", "conversation": []obj{{"type": 1, "bubbleId": "x", "text": "SECRET-LOOKALIKE-0004"}}}}})},
		{"cursorDiskKV", "cursorAuth/token", "SECRET-KV-TOKEN-0005"},
		{"cursorDiskKV", "composerData", js(obj{"composerId": "SECRET-KV-LOOKALIKE-0006", "name": "SECRET-KV-LOOKALIKE-0006"})},
		{"cursorDiskKV", "composerDataZ:1", js(obj{"composerId": "SECRET-KV-LOOKALIKE-0007"})},
		{"cursorDiskKV", "bubbleIdX:" + cKV + ":u1", js(obj{"type": 1, "text": "SECRET-KV-LOOKALIKE-0007"})},
		{"cursorDiskKV", "checkpointId:" + cKV + ":x", js(obj{"files": []string{"SECRET-CHECKPOINT-0010"}})},
		{"cursorDiskKV", "composerData:" + cKV, js(obj{
			"_v": 3, "composerId": cKV, "name": "Fix login redirect",
			"createdAt": ms(0, 0), "lastUpdatedAt": ms(30, 0), "status": "completed",
			"unifiedMode": "agent", "forceMode": "edit", "isAgentic": true,
			"fullConversationHeadersOnly": []obj{
				{"bubbleId": "u1", "type": 1}, {"bubbleId": "a1", "type": 2, "serverBubbleId": "s1"},
				{"bubbleId": "a2", "type": 2}, {"bubbleId": "a3", "type": 2, "serverBubbleId": "s3"},
				{"bubbleId": "u2", "type": 1}, {"bubbleId": "a4", "type": 2}, {"bubbleId": "a5", "type": 2},
				{"bubbleId": "a6", "type": 2}, {"bubbleId": "a7", "type": 2},
				{"bubbleId": "u3", "type": 1, "createdAt": "2026-03-01T10:20:00.000Z"}, {"bubbleId": "a8", "type": 2},
			},
			"conversationMap": obj{},
			"usageData":       obj{"claude-4-sonnet": obj{"costInCents": 12, "amount": 3}},
			"modelConfig":     obj{"modelName": "claude-4-sonnet", "maxMode": false},
			"totalLinesAdded": 5, "totalLinesRemoved": 2, "filesChangedCount": 1,
			"contextUsagePercent": 42.5, "contextTokensUsed": 85000, "contextTokenLimit": 200000,
		})},
		bubbleRow(cKV, obj{"_v": 2, "type": 1, "bubbleId": "u1", "text": "Why does login redirect forever?",
			"context":    obj{"fileSelections": []obj{{"uri": obj{"fsPath": "/home/dev/webapp/src/auth.ts", "scheme": "file"}}}},
			"tokenCount": obj{"inputTokens": 0, "outputTokens": 0}}),
		bubbleRow(cKV, obj{"_v": 2, "type": 2, "bubbleId": "a1", "text": "Let me look at auth.ts.", "usageUuid": "gen-1",
			"timingInfo": obj{"clientStartTime": 1136746.9, "clientRpcSendTime": ms(1, 0), "clientSettleTime": ms(1, 20), "clientEndTime": ms(1, 20)}}),
		bubbleRow(cKV, obj{"_v": 2, "type": 2, "bubbleId": "a2", "text": "", "usageUuid": "gen-1", "capabilityType": 15,
			"toolFormerData": obj{"tool": 5, "toolCallId": "call_1", "status": "completed", "name": "read_file",
				"rawArgs": `{"target_file": "src/auth.ts"}`, "params": `{"targetFile":"src/auth.ts"}`,
				"result": `{"contents":"export function login() {}"}`}}),
		bubbleRow(cKV, obj{"_v": 2, "type": 2, "bubbleId": "a3", "text": "The redirect loops because the guard re-runs.", "usageUuid": "gen-1",
			"tokenCount": obj{"inputTokens": 1200, "outputTokens": 300}}),
		bubbleRow(cKV, obj{"_v": 2, "type": 1, "bubbleId": "u2", "text": "Fix it.", "modelInfo": obj{"modelName": "claude-4.5-sonnet"}}),
		bubbleRow(cKV, obj{"_v": 2, "type": 2, "bubbleId": "a4", "text": "", "thinking": obj{"text": "Guard the redirect once.", "signature": "sig"},
			"timingInfo": obj{"clientStartTime": 99.5, "clientRpcSendTime": ms(5, 0), "clientSettleTime": ms(5, 40), "clientEndTime": ms(5, 45)}}),
		// a5 has no row: Cursor pruned it.
		{"cursorDiskKV", "bubbleId:" + cKV + ":a6", nil},
		bubbleRow(cKV, obj{"_v": 2, "type": 2, "bubbleId": "a7", "text": "",
			"toolFormerData": obj{"tool": 7, "toolCallId": "call_2", "status": "completed", "name": "edit_file", "userDecision": "accepted",
				"rawArgs": `{"target_file": "src/auth.ts", "code_edit": "if (done) return;"}`,
				"params":  obj{"relativeWorkspacePath": "src/auth.ts"},
				"result":  `{"diff":{"chunks":[{"diffString":"+ if (done) return;","linesAdded":3,"linesRemoved":1}]},"isApplied":true}`},
			"codeBlocks": []obj{{"uri": obj{"scheme": "file", "path": "/home/dev/webapp/src/auth.ts"}}}}),
		bubbleRow(cKV, obj{"_v": 2, "type": 1, "bubbleId": "u3", "text": "Run the tests."}),
		bubbleRow(cKV, obj{"_v": 2, "type": 2, "bubbleId": "a8", "text": "",
			"toolFormerData": obj{"tool": 15, "toolCallId": "call_3", "status": "error", "name": "run_terminal_cmd",
				"rawArgs": `{"command": "npm test"}`, "error": `{"clientVisibleErrorMessage":"terminal closed"}`}}),
		// A bubble of the composer that is not in its order (edited away).
		bubbleRow(cKV, obj{"_v": 2, "type": 1, "bubbleId": "zz-orphan", "text": "an abandoned draft"}),

		{"cursorDiskKV", "composerData:" + cNull, nil},
		{"cursorDiskKV", "composerData:" + cEmpty, js(obj{"_v": 3, "composerId": cEmpty, "createdAt": ms(40, 0), "unifiedMode": "chat",
			"fullConversationHeadersOnly": []obj{}, "conversationMap": obj{}, "status": "none", "usageData": obj{}})},
		{"cursorDiskKV", "composerData:" + cInlineKV, js(obj{"_v": 1, "composerId": cInlineKV, "name": "Explain the build",
			"createdAt": ms(50, 0), "unifiedMode": "chat",
			"conversation": []obj{
				{"type": 1, "bubbleId": "k1", "text": "Explain the build script."},
				{"type": 2, "bubbleId": "k2", "text": "It runs vite build.", "timingInfo": obj{"clientRpcSendTime": ms(50, 10), "clientEndTime": ms(50, 30)}},
			}})},
		// A bubble row beside the inline conversation: raw only.
		bubbleRow(cInlineKV, obj{"_v": 2, "type": 2, "bubbleId": "k2", "text": "It runs vite build."}),
		{"cursorDiskKV", "composerData:" + cBad, "{not json"},
		bubbleRow(cBad, obj{"_v": 2, "type": 1, "bubbleId": "b1", "text": "a bubble of a broken composer"}),
		bubbleRow(cOrphan, obj{"_v": 2, "type": 2, "bubbleId": "o1", "text": "an answer without a composer",
			"timingInfo": obj{"clientRpcSendTime": ms(55, 0)}}),
	}
	return rows
}

// headRows is the workspace database of the 2025 global composers.
func headRows() []kvRow {
	return []kvRow{
		{"ItemTable", "cursorAuth/workspaceOpenedDate", "SECRET-WS-0008"},
		{"ItemTable", "composer.composerData", js(obj{
			"allComposers": []obj{
				{"type": "head", "composerId": cKV, "name": "Fix login redirect loop", "createdAt": ms(0, 0), "lastUpdatedAt": ms(30, 0), "unifiedMode": "agent", "forceMode": "edit"},
				{"type": "head", "composerId": cHeadOnly, "name": "Lost chat", "createdAt": ms(45, 0), "unifiedMode": "chat"},
				{"type": "head", "composerId": cEmpty, "createdAt": ms(40, 0), "unifiedMode": "chat"},
			},
			"selectedComposerIds": []string{cKV}, "hasMigratedComposerData": true,
		})},
	}
}

// aichatRows is a 2023 workspace database.
func aichatRows() []kvRow {
	return []kvRow{
		{"ItemTable", "aiService.prompts", js([]obj{{"text": "SECRET-PROMPT-HISTORY-0009", "commandType": 1}})},
		{"ItemTable", "workbench.panel.aichat.view.aichat.chatdata.backup", "SECRET-BACKUP-0011"},
		{"ItemTable", "workbench.panel.aichat.view.aichat.chatdata", js(obj{
			"tabs": []obj{
				{"tabId": tab1, "chatTitle": "How do I center a div?\nwith flexbox", "lastSendTime": ms(12, 0), "tabState": "chat",
					"bubbles": []obj{
						{"type": "user", "id": "t1-u1", "messageType": 2, "rawText": "", "delegate": obj{"a": "How do I center a div?"},
							"contextCacheTimestamp": ms(10, 2), "longFilesFitTimestamp": ms(10, 1),
							"selections": []obj{{"text": "<div class=box>", "uri": obj{"fsPath": "/home/dev/old site/index.html"}}}},
						{"type": "ai", "id": "t1-a1", "messageType": 3, "rawText": "Use flexbox.", "modelType": "gpt-4", "aiType": "chat"},
						// cached again when the tab was reopened, after the last send
						{"type": "user", "id": "t1-u2", "messageType": 2, "initText": js(obj{"root": obj{"type": "root", "children": []obj{
							{"type": "paragraph", "children": []obj{{"type": "text", "text": "And vertically?"}}},
						}}}), "contextCacheTimestamp": ms(59, 0)},
						{"type": "ai", "id": "t1-a2", "rawText": "Add align-items: center.", "modelType": "default"},
						{"type": "user", "id": "t1-draft", "rawText": "", "delegate": obj{"a": ""}},
					}},
				{"tabId": tab2, "chatTitle": "New chat", "lastSendTime": ms(13, 0), "bubbles": []obj{{"type": "user", "id": "t2-draft", "rawText": ""}}},
			},
			"selectedTabId": tab1,
		})},
	}
}

// inlineRows is a late-2024 workspace database.
func inlineRows() []kvRow {
	return []kvRow{
		{"ItemTable", "composer.composerData", js(obj{
			"allComposers": []obj{
				{"composerId": cInline, "name": "Add tests", "createdAt": ms(20, 0), "unifiedMode": "edit",
					"conversation": []obj{
						{"type": 1, "bubbleId": "i1", "text": "Add a test for login."},
						{"type": 2, "bubbleId": "i2", "text": "Added login.test.ts.", "timingInfo": obj{"clientRpcSendTime": ms(20, 5), "clientEndTime": ms(20, 30)}},
					}},
			},
			"composerDataVersion": 0,
		})},
	}
}

// Agent transcripts.
var (
	transcriptJSONL = js(obj{"role": "user", "message": obj{"content": []obj{{"type": "text", "text": "<user_info>OS: linux</user_info>\n<user_query>\nRefactor auth.ts\n</user_query>"}}}}) + "\n" +
		js(obj{"role": "assistant", "message": obj{"content": []obj{{"type": "text", "text": "Reading it first."}, {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": obj{"path": "/home/dev/webapp/src/auth.ts"}}}}}) + "\n" +
		js(obj{"role": "user", "message": obj{"content": []obj{{"type": "tool_result", "tool_use_id": "toolu_1", "content": []obj{{"type": "text", "text": "export function login() {}"}}}}}}) + "\n" +
		"{this line is broken\n" +
		js(obj{"role": "assistant", "message": obj{"content": []obj{{"type": "thinking", "thinking": "Split it."}, {"type": "text", "text": "Split login into two functions."}}}}) + "\n" +
		js(obj{"type": "turn_ended", "status": "success"}) + "\n" +
		`{"role":"user","message":{"content":"still typ`
	subagentJSONL = js(obj{"role": "user", "message": obj{"content": "Find every caller of login."}}) + "\n" +
		js(obj{"role": "assistant", "message": obj{"content": []obj{{"type": "text", "text": "Two callers: app.ts and cli.ts."}}}}) + "\n"
	transcriptTXT = "user:\n<user_query>\nWhat does build.ts do?\n</user_query>\n\nA:\n[Thinking] Look at the file.\nIt bundles the app.\n[Tool call] read_file\n  target_file: build.ts\n[Tool result] read_file\nexport default build\n\nuser:\n<user_query>Thanks</user_query>\n\nassistant:\nYou're welcome.\n"
	// The same conversation as the composer cKV: its database holds it.
	dupJSONL = js(obj{"role": "user", "message": obj{"content": "Why does login redirect forever?"}}) + "\n"
)

// fixture builds the home directory and returns it.
func fixture(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	user := filepath.Join(home, ".config", "Cursor", "User")
	writeDB(t, filepath.Join(user, "globalStorage", dbName), true, globalRows())
	writeDB(t, filepath.Join(user, "globalStorage", dbName+".backup"), true, []kvRow{{"ItemTable", "composer.composerData", "SECRET-BACKUP-0011"}})
	ws := filepath.Join(user, "workspaceStorage")
	writeDB(t, filepath.Join(ws, "aaaa1111", dbName), true, headRows())
	testfs.WriteFile(t, filepath.Join(ws, "aaaa1111", "workspace.json"), `{"folder":"file:///home/dev/webapp"}`)
	writeDB(t, filepath.Join(ws, "bbbb2222", dbName), false, aichatRows())
	testfs.WriteFile(t, filepath.Join(ws, "bbbb2222", "workspace.json"), `{"folder":"file:///home/dev/old%20site"}`)
	writeDB(t, filepath.Join(ws, "cccc3333", dbName), false, inlineRows())
	testfs.WriteFile(t, filepath.Join(ws, "cccc3333", "workspace.json"), `{"workspace":"file:///home/dev/multi/proj.code-workspace"}`)
	tr := filepath.Join(home, ".cursor", "projects", "home-dev-webapp", "agent-transcripts")
	testfs.WriteFile(t, filepath.Join(tr, trMain, trMain+".jsonl"), transcriptJSONL)
	testfs.WriteFile(t, filepath.Join(tr, trMain, "subagents", trSub+".jsonl"), subagentJSONL)
	testfs.WriteFile(t, filepath.Join(tr, trLegacy+".txt"), transcriptTXT)
	testfs.WriteFile(t, filepath.Join(tr, cKV, cKV+".jsonl"), dupJSONL)
	// A legacy .txt beside a .jsonl of the same conversation is not read.
	testfs.WriteFile(t, filepath.Join(tr, trMain, trMain+".txt"), "user:\nignored\n")
	// Not a transcript: outside agent-transcripts.
	testfs.WriteFile(t, filepath.Join(home, ".cursor", "projects", "home-dev-webapp", "notes.txt"), "user:\nnot a transcript\n")
	touchAll(t, home)
	return home
}

// touchAll gives every file the fixture's modification time.
func touchAll(t testing.TB, dir string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		return os.Chtimes(p, fixtureMtime, fixtureMtime)
	})
	if err != nil {
		t.Fatal(err)
	}
}
