package gemini

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/schema"
)

// roundTrip checks that every record is a fixed point of the wire format.
func roundTrip(t *testing.T, recs []*schema.Record) {
	t.Helper()
	for _, rec := range recs {
		extracttest.FixedPoint(t, rec)
	}
}

func fuzzRun(out *[]*schema.Record) *run {
	return &run{
		opt:      &extract.Options{OnSkip: func(*schema.BadInput) error { return nil }},
		emit:     func(rec *schema.Record) error { *out = append(*out, rec); return nil },
		projects: &sync.Map{},
	}
}

// FuzzLine feeds arbitrary lines to the JSONL record parser and what
// follows it (the conversation bookkeeping, message records): it never
// panics and every record survives the wire format.
func FuzzLine(f *testing.F) {
	extracttest.SeedLines(f, "gemini/home/.gemini/tmp/*/chats/*.jsonl")
	f.Add([]byte(`{"id":"x","type":"gemini","content":{"functionResponse":{"response":7}},"toolCalls":[{"result":"s","resultDisplay":"d"}],"tokens":{"input":-1}}`))
	f.Add([]byte(`{"$set":{"messages":[{"id":"a","type":"user"},{"id":"a"},3]}}`))
	f.Add([]byte(`{"$rewindTo":"nothing"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out []*schema.Record
		r := fuzzRun(&out)
		fs := newFileState("/x/chats/session-x.jsonl", time.Unix(0, 0))
		b := extract.RawLine(bytes.TrimSpace(data))
		var rc record
		if len(b) == 0 || b[0] != '{' || parseRecord(b, &rc) != nil {
			return
		}
		if err := r.settle(fs); err != nil {
			t.Fatal(err)
		}
		c := newConv()
		c.put("seed", true, loc{1, -1}, schema.Line{Num: 1})
		ln := schema.Line{Num: 2, Offset: 10, Terminated: true}
		src := &schema.Source{Path: fs.path, Line: 2, Offset: 10}
		switch lineKind(&rc) {
		case "$rewindTo":
			c.rewind(*rc.RewindTo)
		case "message":
			c.put(rc.ID, rc.Type == "user", loc{2, -1}, ln)
			if err := r.message(fs, &rc, extract.OneLine(b), src); err != nil {
				t.Fatal(err)
			}
		case "$set":
			fs.learn(&rc.Set.metadata)
			ids, users := setIDs(rc.Set)
			c.reset(ids, users, ln)
			var m record
			for i, e := range rc.Set.Messages {
				if parseRecord(e, &m) == nil && m.ID != "" && c.final[m.ID] == (loc{2, i}) {
					s := *src
					s.Key = "$set.messages[" + strconv.Itoa(i) + "]"
					if err := r.message(fs, &m, nil, &s); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if len(c.order) != len(c.final) {
			t.Fatalf("conversation order %v and messages %v disagree", c.order, c.final)
		}
		if err := r.sessionRecord(fs); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, out)
	})
}

// FuzzConversation feeds arbitrary bytes to the legacy single-object chat
// parser: it never panics, and a file it accepts yields one raw record for
// its metadata and one per message.
func FuzzConversation(f *testing.F) {
	matches, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "gemini", "home", ".gemini", "tmp", "*", "chats", "*.json"))
	for _, m := range matches {
		b, _ := os.ReadFile(m)
		f.Add(b)
	}
	f.Add([]byte(`{"messages":[1,"x",{"id":"a","type":"user","content":"hi"}],"sessionId":"s"}`))
	f.Add([]byte(`{"messages":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		top, elems, err := splitConversation(extract.RawLine(data), false)
		if err != nil {
			return
		}
		var out []*schema.Record
		r := fuzzRun(&out)
		skips := 0
		r.opt.OnSkip = func(*schema.BadInput) error { skips++; return nil }
		if err := r.conversation(context.Background(), newFileState("/x/chats/session-x.json", time.Unix(0, 0)), data); err != nil {
			t.Fatal(err)
		}
		raw := 0
		for _, rec := range out {
			if rec.Kind == schema.KindRaw {
				raw++
			}
		}
		// Every message is kept in the raw layer, a message that is not
		// one of this format too (then also named).
		if len(top) == 0 || raw != 1+len(elems) || skips > len(elems) {
			t.Fatalf("%d raw records and %d skips for %d messages", raw, skips, len(elems))
		}
		roundTrip(t, out)
	})
}
