package cline

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/schema"
)

// independent is what encoding/json alone says about a task's files: the
// number of elements of each, and the sums of the ui's api_req_started rows.
type independent struct {
	elements map[string]int // path -> elements (1 for task_metadata.json)
	usage    map[string]schema.Usage
	cost     map[string]float64
}

func countIndependently(t *testing.T, files []extract.SourceFile) independent {
	ind := independent{elements: map[string]int{}, usage: map[string]schema.Usage{}, cost: map[string]float64{}}
	for _, f := range files {
		b, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f.Path) == metaFile {
			ind.elements[f.Path] = 1
			continue
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(b, &elems); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		ind.elements[f.Path] = len(elems)
		if filepath.Base(f.Path) != uiFile {
			continue
		}
		task := filepath.Base(filepath.Dir(f.Path))
		for _, e := range elems {
			var row struct {
				Say  string `json:"say"`
				Text string `json:"text"`
			}
			json.Unmarshal(e, &row)
			if row.Say != "api_req_started" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(row.Text), &m); err != nil {
				t.Fatalf("%s: api_req_started text: %v", f.Path, err)
			}
			num := func(k string) float64 { v, _ := m[k].(float64); return v }
			u := ind.usage[task]
			u.Add(&schema.Usage{Input: int64(num("tokensIn")), Output: int64(num("tokensOut")), CacheCreation: int64(num("cacheWrites")), CacheRead: int64(num("cacheReads"))})
			ind.usage[task] = u
			ind.cost[task] += num("cost")
		}
	}
	return ind
}

func TestCorpus(t *testing.T) {
	dir, res := extracttest.Corpus(t, Adapter{}, "cline")
	checkStream(t, res.Recs)
	files, err := (&extract.Options{}).Walk(context.Background(), []string{dir}, extract.Match{Name: func(p string) bool { return isTaskFile(filepath.Base(p)) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Fatalf("%d corpus files, want 4", len(files))
	}
	ind := countIndependently(t, files)

	// Every element of every file is one raw record; the messages of each
	// file are those its elements make.
	raws, msgs := map[string]int{}, map[string]int{}
	for _, r := range res.Recs {
		switch r.Kind {
		case schema.KindRaw:
			raws[r.Source.Path]++
		case schema.KindMessage:
			msgs[filepath.Base(filepath.Dir(r.Source.Path))+"/"+filepath.Base(r.Source.Path)]++
		}
	}
	for _, f := range files {
		if raws[f.Path] != ind.elements[f.Path] {
			t.Errorf("%s: %d raw records, want one per element (%d)", f.Path, raws[f.Path], ind.elements[f.Path])
		}
	}
	wantMsgs := map[string]int{
		// 36 answers, 34 tool results, the task, the resumption note.
		"1769064454592/" + apiFile: 72,
		// The orphan ui file: 2 prompts and 9 assistant rows.
		"coregems/" + uiFile: 11,
	}
	for k, n := range wantMsgs {
		if msgs[k] != n {
			t.Errorf("%s: %d messages, want %d", k, msgs[k], n)
		}
	}
	if len(msgs) != len(wantMsgs) {
		t.Errorf("messages per file %v", msgs)
	}

	// Through pos-normalize: messages, exchanges and the token sums of the
	// session rollups equal the ui's api_req_started rows summed apart.
	out := normalized(t, res.Recs)
	type counts struct {
		messages, exchanges int
		usage               schema.Usage
	}
	got := map[string]*counts{}
	c := func(s string) *counts {
		if got[s] == nil {
			got[s] = &counts{}
		}
		return got[s]
	}
	sessions := map[string]*schema.Record{}
	for _, r := range out {
		switch r.Kind {
		case schema.KindMessage:
			c(r.SessionID).messages++
			c(r.SessionID).usage.Add(r.Usage)
		case schema.KindExchange:
			c(r.SessionID).exchanges++
		case schema.KindSession:
			sessions[r.SessionID] = r
		}
	}
	want := map[string]counts{
		// One prompt: the resumption carried no new instructions.
		"1769064454592": {72, 1, schema.Usage{Input: 360, Output: 30169, CacheCreation: 128708, CacheRead: 1280342}},
		// The rows of each of the 5 responses merge into one message.
		"coregems": {7, 2, schema.Usage{Input: 40, Output: 2488, CacheCreation: 28108, CacheRead: 24686}},
	}
	for s, w := range want {
		g := c(s)
		if g.messages != w.messages || g.exchanges != w.exchanges || g.usage != w.usage {
			t.Errorf("%s: %d messages, %d exchanges, usage %+v; want %+v", s, g.messages, g.exchanges, g.usage, w)
		}
		if g.usage != ind.usage[s] {
			t.Errorf("%s: message usage %+v, api_req_started rows sum to %+v", s, g.usage, ind.usage[s])
		}
		rs := sessions[s]
		if rs == nil || rs.Usage == nil || *rs.Usage != ind.usage[s] {
			t.Errorf("%s: session rollup usage %+v, want %+v", s, rs, ind.usage[s])
			continue
		}
		var meta struct {
			Cost float64 `json:"cost"`
		}
		json.Unmarshal(rs.Meta, &meta)
		if math.Abs(meta.Cost-ind.cost[s]) > 1e-9 {
			t.Errorf("%s: session cost %v, api_req_started rows sum to %v", s, meta.Cost, ind.cost[s])
		}
	}
	if math.Abs(ind.cost["1769064454592"]-2.200621) > 1e-6 {
		t.Errorf("gmfstu cost %v", ind.cost["1769064454592"])
	}

	// The real task: its place, model, version and times. Its 34
	// files_in_context entries name 29 files once resolved (Cline lists a
	// file again when it is read or edited by another path).
	s, meta := sessionOf(t, res.Recs, "1769064454592")
	if s.Project != "/workspaces/Online-Card-Architecture" || meta["version"] != "3.51.0" || meta["model"] != "claude-opus-4-5-20251101" ||
		meta["fork"] != "cline" || len(s.Files) != 29 || !strings.HasPrefix(s.Title, "You have been given a Dockerized codebase") {
		t.Fatalf("gmfstu session: %+v %v", s, meta)
	}
	m := messagesOf(res.Recs, "1769064454592")
	for i, r := range m {
		if r.TSPrecision != schema.PrecisionDerived || (i > 0 && r.TS.Before(m[i-1].TS)) {
			t.Fatalf("message %d: %s at %v (previous %v)", i, r.TSPrecision, r.TS, m[i-1].TS)
		}
	}
}
