package cursor

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

func TestIncremental(t *testing.T) {
	home := fixture(t)
	opt := func(st *watermark.State) extract.Options { return extract.Options{Home: home, State: st} }
	first, st := extracttest.FirstRun(t, Adapter{}, opt(nil), 8)
	if st.Len() != 8 {
		t.Fatalf("%d watermarks, want 8 (4 databases, 4 transcripts)", st.Len())
	}

	// Cursor switches the global database to WAL mode and keeps it open:
	// its writes land in the -wal file and the main file does not change.
	global := filepath.Join(home, ".config", "Cursor", "User", "globalStorage", dbName)
	w, err := sql.Open("sqlite", sqliteURI(global, "_pragma=journal_mode(wal)&_pragma=wal_autocheckpoint(0)&_pragma=busy_timeout(5000)"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`INSERT INTO ItemTable VALUES ('x.y', '1')`); err != nil {
		t.Fatal(err)
	}
	walRun := extracttest.Run(t, Adapter{}, opt(st))
	extracttest.Commit(st, walRun.Recs)
	if n := len(find(walRun.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindCheckpoint })); n != 1 {
		t.Fatalf("after the switch to WAL: %d databases read", n)
	}
	mainBefore, _ := os.Stat(global)
	if _, err := w.Exec(`INSERT INTO cursorDiskKV VALUES (?, ?), (?, ?)`,
		"bubbleId:"+cEmpty+":n1", js(obj{"_v": 2, "type": 1, "bubbleId": "n1", "text": "A new question."}),
		"composerData:"+cEmpty, js(obj{"_v": 3, "composerId": cEmpty, "createdAt": ms(40, 0), "unifiedMode": "chat",
			"fullConversationHeadersOnly": []obj{{"bubbleId": "n1", "type": 1}}})); err != nil {
		t.Fatal(err)
	}
	mainAfter, _ := os.Stat(global)
	if mainAfter.Size() != mainBefore.Size() || !mainAfter.ModTime().Equal(mainBefore.ModTime()) {
		t.Fatal("the write reached the main file: the test does not test the -wal fingerprint")
	}
	inc := extracttest.Run(t, Adapter{}, opt(st))
	n1 := find(inc.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage && r.Text == "A new question." })
	if len(n1) != 1 || n1[0].ID != schema.ID(platform, cEmpty, "n1") {
		t.Fatalf("a write in the -wal only was not read: %d records", len(inc.Recs))
	}
	for _, r := range inc.Recs {
		if r.Source != nil && r.Source.Path != global {
			t.Fatalf("read %s, which did not change", r.Source.Path)
		}
	}
	// The re-read database gives the same ids: the load dedupes them.
	ids := extracttest.IDs(first.Recs)
	if m := message(t, inc.Recs, cKV, "a3"); !ids[m.ID] {
		t.Fatal("message ids changed between runs")
	}
	extracttest.Commit(st, inc.Recs)

	// The transcript's half-written line is completed and an answer
	// appended: the next run starts at the open exchange's prompt.
	p := filepath.Join(home, ".cursor", "projects", "home-dev-webapp", "agent-transcripts", trMain, trMain+".jsonl")
	extracttest.AppendFile(t, p, `ing"}}`+"\n"+js(obj{"role": "assistant", "message": obj{"content": []obj{{"type": "text", "text": "Done."}}}})+"\n")
	tr := extracttest.Run(t, Adapter{}, opt(st))
	var texts []string
	for _, r := range tr.Recs {
		if r.Kind == schema.KindMessage {
			texts = append(texts, r.Text)
		}
	}
	// Line 1 is the open exchange's prompt (the broken line 4 is reported
	// again, as it is read again).
	if len(texts) != 6 || texts[0] != "Refactor auth.ts" || texts[4] != "still typing" || texts[5] != "Done." {
		t.Fatalf("incremental transcript: %q", texts)
	}
	if m := find(tr.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage && r.Text == "still typing" }); m[0].Source.Line != 7 || m[0].ParentID == "" {
		t.Fatalf("line numbers or parents lost: %+v", m[0])
	}
	cp := tr.Recs[len(tr.Recs)-1]
	if cp.Kind != schema.KindCheckpoint || cp.Checkpoint.Size != cp.Checkpoint.Seen || cp.Checkpoint.Lines != 6 {
		t.Fatalf("checkpoint %+v", cp.Checkpoint)
	}
	extracttest.Commit(st, tr.Recs)
	// The last prompt is now line 7: the run after resumes there.
	extracttest.AppendFile(t, p, js(obj{"type": "turn_ended", "status": "success"})+"\n")
	tr2 := extracttest.Run(t, Adapter{}, opt(st))
	msgs := find(tr2.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage })
	if len(msgs) != 2 || msgs[0].Text != "still typing" || msgs[0].ParentID != schema.ID(platform, trMain, "", "line", "5") {
		t.Fatalf("second resume: %+v", msgs)
	}
	extracttest.Commit(st, tr2.Recs)

	// A legacy .txt that is rewritten is read whole again.
	legacy := filepath.Join(home, ".cursor", "projects", "home-dev-webapp", "agent-transcripts", trLegacy+".txt")
	if err := os.WriteFile(legacy, []byte(transcriptTXT+"\nuser:\nOne more?\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lt := extracttest.Run(t, Adapter{}, opt(st))
	if n := len(find(lt.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage && r.SessionID == trLegacy })); n != 5 {
		t.Fatalf("rewritten legacy transcript: %d messages", n)
	}
	for _, r := range lt.Recs {
		if r.Source != nil && !strings.HasSuffix(r.Source.Path, ".txt") && r.Kind != schema.KindCheckpoint {
			t.Fatalf("read %s", r.Source.Path)
		}
	}
}
