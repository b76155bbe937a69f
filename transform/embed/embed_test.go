package embed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/testrec"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/schema"
)

func rec(kind schema.Kind, id string, mod func(*schema.Record)) *schema.Record {
	r := schema.New(kind)
	r.ID, r.Platform, r.SessionID = id, claudecode.Name, "s1"
	r.TS = time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	if mod != nil {
		mod(r)
	}
	return r
}

func stream(t *testing.T, recs ...*schema.Record) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := schema.NewEncoder(&b)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	enc.Flush()
	return b.Bytes()
}

func sample(t *testing.T) []byte {
	var lb strings.Builder
	for i := range 60 {
		fmt.Fprintf(&lb, "Step %d: the lake keeps every partition file complete before renaming it into place. ", i)
	}
	long := lb.String()
	recs := []*schema.Record{
		rec(schema.KindMessage, "m1", func(r *schema.Record) {
			r.Role, r.ContentType, r.Text = schema.RoleUser, schema.ContentText, "How do we rotate the logs?"
		}),
		rec(schema.KindMessage, "m2", func(r *schema.Record) {
			r.Role, r.ContentType, r.Text = schema.RoleAssistant, schema.ContentText, "With logrotate."
		}),
		rec(schema.KindRaw, "r1", func(r *schema.Record) { r.Raw = []byte(`{"type":"progress"}`) }),
		rec(schema.KindExchange, "e1", func(r *schema.Record) {
			r.Role, r.ContentType, r.Text = schema.RoleUser, schema.ContentExchange, "How do we rotate the logs?\n\n"+long
			r.Exchange = &schema.Exchange{Number: 1, Prompt: "How do we rotate the logs?", Response: long, PromptID: "m1"}
		}),
		rec(schema.KindExchange, "e2", func(r *schema.Record) {
			r.Agent = &schema.Agent{ID: "acompact-1", Type: "compact", Sidechain: true}
			r.Text = "Your task is to create a detailed summary...\n\nSummary: we added log rotation."
			r.Exchange = &schema.Exchange{Number: 1, Prompt: "Your task is to create a detailed summary...", Response: "Summary: we added log rotation."}
		}),
		rec(schema.KindDocument, "d1", func(r *schema.Record) {
			r.ContentType, r.Title, r.Text = schema.ContentSubagentSummary, "Explore: the log setup", "Logs go to /var/log/app."
			r.Agent = &schema.Agent{ID: "a1", Type: "Explore", Sidechain: true}
		}),
		rec(schema.KindMessage, "m3", func(r *schema.Record) {
			r.Role, r.ContentType, r.Text = schema.RoleUser, schema.ContentText, "!!!"
		}),
		rec(schema.KindSession, "sess", func(r *schema.Record) { r.Title = "logs" }),
		rec(schema.KindMessage, "m4", func(r *schema.Record) {
			r.Role, r.ContentType, r.Text = schema.RoleSystem, schema.ContentCompactSummary, "Summary: we added log rotation."
		}),
		rec("mystery", "x1", func(r *schema.Record) { r.Extra = []schema.Field{{Key: "zz", Value: []byte(`1`)}} }),
	}
	return stream(t, recs...)
}

func runEmbed(t *testing.T, in []byte, opt Options) ([]byte, Stats) {
	t.Helper()
	if opt.Provider == nil {
		opt.Provider = NewHash(0)
	}
	var out bytes.Buffer
	st, err := Embed(context.Background(), bytes.NewReader(in), &out, opt)
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), st
}

func TestEmbedStream(t *testing.T) {
	in := sample(t)
	out, st := runEmbed(t, in, Options{Chunker: Chunker{MaxTokens: 200, Overlap: 20}})
	// Every input line comes out as it was, in order; chunks follow their unit.
	inLines := strings.Split(strings.TrimSpace(string(in)), "\n")
	var passed []string
	var parents []string
	var last string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(l, `"kind":"chunk"`) {
			parents = append(parents, last)
			continue
		}
		passed = append(passed, l)
		last = l
	}
	if strings.Join(passed, "\n") != strings.Join(inLines, "\n") {
		t.Fatalf("records changed in passing:\n%s", out)
	}
	recs := testrec.Decode(t, bytes.NewReader(out))
	byType := map[string]int{}
	for i, r := range recs {
		if r.Kind != schema.KindChunk {
			continue
		}
		byType[r.ContentType]++
		c := r.Chunk
		if c.Model != HashModel || c.Dim != DefaultDim || len(c.Embedding) != DefaultDim {
			t.Errorf("chunk %s: model %s dim %d len %d", r.ID, c.Model, c.Dim, len(c.Embedding))
		}
		if r.ID != ChunkID(r.Platform, r.ParentID, r.ContentType, int(c.Index)) {
			t.Errorf("chunk id %s", r.ID)
		}
		if r.SessionID != "s1" || r.TS.IsZero() {
			t.Errorf("chunk %s lost its session or time", r.ID)
		}
		if recs[i-1].Kind == schema.KindChunk && recs[i-1].ParentID != r.ParentID {
			t.Errorf("chunk %s is not next to its unit", r.ID)
		}
	}
	want := map[string]int{schema.ContentUserPrompt: 1, schema.ContentExchange: byType[schema.ContentExchange],
		schema.ContentSubagentSummary: 1, schema.ContentCompactSummary: 1}
	if byType[schema.ContentExchange] < 5 { // the long exchange, cut, and the compaction agent's answer
		t.Errorf("exchange chunks: %d", byType[schema.ContentExchange])
	}
	for k, n := range want {
		if byType[k] != n {
			t.Errorf("%s chunks: %d, want %d", k, byType[k], n)
		}
	}
	for _, r := range recs {
		if r.Kind == schema.KindChunk && r.ParentID == "e2" && strings.Contains(r.Text, "Your task") {
			t.Error("a compaction agent's boilerplate prompt was indexed")
		}
		if r.Kind == schema.KindChunk && r.ParentID == "d1" && !strings.HasPrefix(r.Text, "Explore: the log setup\n\n") {
			t.Errorf("report chunk without its title: %q", r.Text)
		}
	}
	if st.In != 10 || st.Units != 6 || st.Skipped != 1 || st.Chunks != int64(len(recs)-10) || st.Out != int64(len(recs)) {
		t.Errorf("stats %+v (%d records out)", st, len(recs))
	}
	if st.Computed+st.Reused != st.Chunks || st.Reused != 1 { // the summary is the compaction agent's answer again
		t.Errorf("computed %d reused %d of %d", st.Computed, st.Reused, st.Chunks)
	}
	// Deterministic.
	again, _ := runEmbed(t, in, Options{Chunker: Chunker{MaxTokens: 200, Overlap: 20}})
	if !bytes.Equal(out, again) {
		t.Error("two runs differ")
	}
}

func TestEmbedCacheComputesNothingTwice(t *testing.T) {
	root := t.TempDir()
	in := sample(t)
	var outs [][]byte
	for run := 0; run < 2; run++ {
		c, err := OpenCache(root, HashModel, DefaultDim)
		if err != nil {
			t.Fatal(err)
		}
		out, st := runEmbed(t, in, Options{Cache: c})
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if run == 1 && (st.Computed != 0 || st.Reused != st.Chunks) {
			t.Errorf("second run computed %d, reused %d of %d", st.Computed, st.Reused, st.Chunks)
		}
		outs = append(outs, out)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("cached vectors differ from computed ones")
	}
}

func TestEmbedTypesAndBadLines(t *testing.T) {
	in := append(sample(t), []byte("{not json\n")...)
	var skipped []string
	_, st := runEmbed(t, in, Options{Types: []string{schema.ContentUserPrompt},
		OnSkip: func(b *schema.BadInput) error { skipped = append(skipped, b.Error()); return nil }})
	if st.Units != 2 || st.Chunks != 1 || st.BadLines != 1 || len(skipped) != 1 {
		t.Errorf("stats %+v, skipped %v", st, skipped)
	}
}

// many records across many jobs and workers keep their order.
func TestEmbedOrderAcrossJobs(t *testing.T) {
	var recs []*schema.Record
	for i := 0; i < 3000; i++ {
		id := fmt.Sprintf("m%04d", i)
		recs = append(recs, rec(schema.KindMessage, id, func(r *schema.Record) {
			r.Role, r.ContentType, r.Text = schema.RoleUser, schema.ContentText, "prompt "+id
		}))
	}
	out, st := runEmbed(t, stream(t, recs...), Options{Workers: 4})
	got := testrec.Decode(t, bytes.NewReader(out))
	if len(got) != 6000 || st.Chunks != 3000 {
		t.Fatalf("%d records, %d chunks", len(got), st.Chunks)
	}
	for i := 0; i < 3000; i++ {
		if got[2*i].ID != recs[i].ID || got[2*i+1].ParentID != recs[i].ID {
			t.Fatalf("order broken at %d", i)
		}
	}
}

type failing struct{ *Hash }

func (failing) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("endpoint down")
}

func TestEmbedProviderError(t *testing.T) {
	var out bytes.Buffer
	_, err := Embed(context.Background(), bytes.NewReader(sample(t)), &out, Options{Provider: failing{NewHash(8)}})
	if err == nil || !strings.Contains(err.Error(), "endpoint down") {
		t.Fatalf("error %v", err)
	}
}

func ExampleEmbed() {
	in := `{"schema":"pos/1","kind":"message","id":"m1","platform":"claude_code","session_id":"s","role":"user","content_type":"text","text":"Rotate the logs nightly"}` + "\n"
	var out bytes.Buffer
	st, _ := Embed(context.Background(), strings.NewReader(in), &out, Options{Provider: NewHash(8)})
	fmt.Println(st.In, "in,", st.Out, "out,", st.Chunks, "chunk,", st.Computed, "computed")
	// Output: 1 in, 2 out, 1 chunk, 1 computed
}
