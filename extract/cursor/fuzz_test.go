package cursor

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
)

// FuzzNative feeds arbitrary bytes to every parser of Cursor's JSON values,
// as each kind of row or line: a bubble, a composerData row, the ItemTable
// chat values and an agent transcript line. None may panic, and every
// record made survives the wire format.
func FuzzNative(f *testing.F) {
	for _, rows := range [][]kvRow{globalRows(), headRows(), aichatRows(), inlineRows()} {
		for _, r := range rows {
			if s, ok := r.value.(string); ok {
				f.Add([]byte(s))
			}
		}
	}
	for _, l := range []string{transcriptJSONL, subagentJSONL, dupJSONL} {
		for _, line := range splitLines(l) {
			f.Add([]byte(line))
		}
	}
	// Real values, when the corpus is there.
	corpusSeeds(f)
	f.Add([]byte(`{"type":"ai","thinking":"x","toolFormerData":{"tool":"7","rawArgs":{"a":1},"params":[1],"result":5,"error":{"m":1}}}`))
	f.Add([]byte(`{"tabs":[{"tabId":"t","bubbles":[{"type":"user","initText":"{\"root\":{\"children\":[{\"children\":[{\"text\":\"hi\"}]}]}}"},null,7]}]}`))
	f.Add([]byte(`{"allComposers":[{"composerId":"c","conversation":[{"type":2,"timingInfo":{"clientRpcSendTime":"1e400"}}]},{"type":"head","composerId":"h"}]}`))
	f.Add([]byte(`{"role":"user","message":{"content":{"type":"tool_result","content":[{"type":"text","text":"x"}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out []*schema.Record
		opt := &extract.Options{OnSkip: func(*schema.BadInput) error { return nil }}
		emit := func(r *schema.Record) error {
			out = append(out, r)
			return nil
		}
		idx := &index{heads: map[string]*headInfo{}, composers: map[string]bool{}, bodied: map[string]bool{}, projects: map[string]string{}, slugs: map[string]string{}}
		r := &run{opt: opt, idx: idx}
		dr := &dbRun{run: r, emit: emit, d: &dbFile{path: "/x/state.vscdb", mtime: time.Unix(1700000000, 0).UTC()}}
		ctx := context.Background()

		for _, key := range []string{keyChatData, keyComposerData} {
			if err := dr.itemRow(ctx, &row{table: "ItemTable", key: key, value: data}); err != nil {
				t.Fatal(err)
			}
		}
		// As a bubble with a row of its own, in a 2025 composer.
		cv := dr.newConversation("s", "/p", layoutKV)
		var b bubble
		e := &convEntry{id: "b", key: "cursorDiskKV:bubbleId:s:b", raw: compactJSON(data)}
		if decode(data, &b) == nil {
			e.b, e.role = &b, bubbleRole(b.Type, 2)
		}
		if err := cv.add(e); err != nil {
			t.Fatal(err)
		}
		if err := cv.flush(); err != nil {
			t.Fatal(err)
		}
		// As a composer with an inline conversation.
		var c composer
		if decode(data, &c) == nil {
			c.ComposerID = "c"
			if err := dr.composer(ctx, nil, nil, &c, "cursorDiskKV:composerData:c", layoutInline); err != nil {
				t.Fatal(err)
			}
		}
		// As an agent transcript line.
		tr := &trRun{run: r, emit: emit, path: "/p/agent-transcripts/s/s.jsonl", id: trIdentity{session: "s"}}
		var l trLine
		if raw := extract.RawLine(data); decode(raw, &l) == nil {
			rec, _ := tr.jsonLine(&l, true, raw, extract.Line{Line: schema.Line{Bytes: data, Num: 1, Terminated: true}})
			if err := tr.emitLine(rec); err != nil {
				t.Fatal(err)
			}
		}

		for _, rec := range out {
			enc := schema.AppendRecord(nil, rec)
			var back schema.Record
			if err := schema.Unmarshal(enc, &back); err != nil {
				t.Fatalf("record does not round-trip: %v\n%s", err, enc)
			}
			if len(rec.Raw) > 0 && !json.Valid(rec.Raw) {
				t.Fatalf("raw is not JSON: %s", rec.Raw)
			}
		}
	})
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}

// corpusSeeds adds a sample of the corpus databases' whitelisted values.
func corpusSeeds(f *testing.F) {
	dir := filepath.Join("..", "..", "..", "shared", "corpus", "cursor")
	if d := os.Getenv("POS_CORPUS"); d != "" {
		dir = filepath.Join(d, "cursor")
	}
	dbs, _ := findDatabases(context.Background(), &extract.Options{}, []string{dir})
	for _, d := range dbs {
		db, err := openLive(d.Path)
		if err != nil {
			continue
		}
		for _, q := range []string{
			`SELECT value FROM ItemTable WHERE key IN ('` + keyChatData + `', '` + keyComposerData + `')`,
			`SELECT value FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;' AND value IS NOT NULL LIMIT 3`,
			`SELECT value FROM cursorDiskKV WHERE key >= 'bubbleId:' AND key < 'bubbleId;' AND value IS NOT NULL AND length(value) < 20000 LIMIT 40`,
		} {
			rows, err := db.Query(q)
			if err != nil {
				continue
			}
			for rows.Next() {
				var v sql.RawBytes
				if rows.Scan(&v) == nil {
					f.Add([]byte(string(v)))
				}
			}
			rows.Close()
		}
		db.Close()
	}
}
