package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func sample() *Record {
	ts := time.Date(2026, 2, 10, 21, 11, 56, 846e6, time.UTC)
	return &Record{
		Schema: Version, Kind: KindMessage, ID: "abc", Platform: "claude_code",
		SessionID: "s1", TS: ts, TSPrecision: PrecisionExact, Role: RoleAssistant,
		ContentType: ContentText, Text: "héllo \"world\"\n<tag>&\t\x01",
		Tools:    []Tool{{Name: "Read", CallID: "t1", Input: json.RawMessage(`{"file_path":"/a"}`)}},
		Model:    "claude-opus-4-6",
		Usage:    &Usage{Input: 3, Output: 10, CacheCreation: 100, CacheRead: 5},
		Advisor:  []ModelUsage{{Model: "claude-opus-4-6", Usage: Usage{Input: 7000, Output: 700, CacheCreation: 1000, CacheRead: 2000, CacheCreation1h: 1000}}, {Model: "m2", Usage: Usage{Input: 1}}},
		Agent:    &Agent{ID: "a1", Sidechain: true},
		Files:    []string{"/a"},
		Source:   &Source{Path: "/x.jsonl", Line: 4, Offset: 120, Mtime: ts},
		Raw:      json.RawMessage(`{"type":"assistant","n":1}`),
		Tags:     []string{"golang", "testing"},
		Decision: &Decision{Confidence: 0.9, Status: "decision", Patterns: []string{"lets_use"}, ExchangeID: "e", MessageID: "m", Context: "why?"},
		FileRef:  &FileRef{Path: "/a.go", Action: "edit", Tool: "Edit"},
		Extra:    []Field{{Key: "zz_future", Value: json.RawMessage(`{"a":[1,2]}`)}, {Key: "aa", Value: json.RawMessage(`true`)}},
	}
}

// fixedPoint encodes r, decodes the encoding and encodes the result again,
// failing t unless the two encodings are equal: what the wire format
// carries passes through every stage unchanged. It returns the encoding
// and the decoded record.
func fixedPoint(t testing.TB, r *Record) ([]byte, *Record) {
	t.Helper()
	b := AppendRecord(nil, r)
	var got Record
	if err := UnmarshalWith(testFast, b, &got); err != nil {
		t.Fatalf("re-decoding %s: %v", b, err)
	}
	if b2 := AppendRecord(nil, &got); !bytes.Equal(b, b2) {
		t.Fatalf("not a fixed point:\n%s\n%s", b, b2)
	}
	return b, &got
}

func TestRoundTripKeepsEverything(t *testing.T) {
	r := sample()
	b, got := fixedPoint(t, r)
	if got.Text != r.Text || got.Usage.CacheCreation != 100 || !got.TS.Equal(r.TS) || got.Tools[0].Name != "Read" ||
		len(got.Advisor) != 2 || got.Advisor[0] != r.Advisor[0] || got.Advisor[1] != r.Advisor[1] {
		t.Fatalf("fields lost: %+v", got)
	}
	// Unknown fields come out sorted after the known ones.
	if !bytes.HasSuffix(b, []byte(`,"aa":true,"zz_future":{"a":[1,2]}}`)) {
		t.Fatalf("unknown fields not kept in order: %s", b)
	}
	// The output is valid JSON that encoding/json agrees with.
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["text"] != r.Text {
		t.Fatalf("encoding/json reads text %q", m["text"])
	}
}

func TestInvalidUTF8BecomesReplacement(t *testing.T) {
	r := New(KindMessage)
	r.Text = "a\xffb"
	b := AppendRecord(nil, r)
	if !json.Valid(b) || !strings.Contains(string(b), "a\uFFFDb") {
		t.Fatalf("got %s", b)
	}
}

func TestDecoderErrorsAndRecovery(t *testing.T) {
	in := strings.Join([]string{
		`{"schema":"pos/1","kind":"message","id":"1"}`,
		``,
		`{"schema":"pos/1","kind":"message","id":"2"`,
		`{"schema":"pos/1","kind":"message","id":"3"} x`,
		`{"schema":"pos/1","id":"4"}`,
		`{"kind":"message","id":"5","text":"a\u00e9\"b"}`,
		`[1]`,
	}, "\n")
	var ids []string
	var bad []int64
	for rec, err := range NewDecoder(strings.NewReader(in)).All() {
		var se *SyntaxError
		if errors.As(err, &se) {
			bad = append(bad, se.Line)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ID)
	}
	if strings.Join(ids, ",") != "1,5" {
		t.Fatalf("ids %v", ids)
	}
	if len(bad) != 4 || bad[0] != 3 || bad[3] != 7 {
		t.Fatalf("bad lines %v", bad)
	}
}

func TestHugeLine(t *testing.T) {
	big := strings.Repeat("x\"y\n", 5<<20) // 20 MB of text, escaped to 30 MB
	r := New(KindMessage)
	r.Text = big
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for range 2 {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	enc.Flush()
	n := 0
	for rec, err := range NewDecoder(&buf).All() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Text != big {
			t.Fatal("text changed")
		}
		n++
	}
	if n != 2 {
		t.Fatalf("read %d records", n)
	}
}

func TestLineTooLongIsSkipped(t *testing.T) {
	in := "short\n" + strings.Repeat("z", 3000) + "\nafter\nlast"
	lr := NewLineReader(strings.NewReader(in))
	lr.MaxLine = 100
	var got []string
	var tooLong int
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, ErrLineTooLong) {
			tooLong++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(l.Bytes)+map[bool]string{true: "", false: "(partial)"}[l.Terminated])
	}
	if tooLong != 1 || strings.Join(got, ",") != "short,after,last(partial)" {
		t.Fatalf("got %v, too long %d", got, tooLong)
	}
}

func TestZstdStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.ndjson.zst")
	w, err := Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	enc := NewEncoder(w)
	want := sample()
	if err := enc.Encode(want); err != nil {
		t.Fatal(err)
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if !bytes.HasPrefix(raw, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		t.Fatal("file is not zstd")
	}
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got Record
	if err := NewDecoder(r).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.ID != want.ID || got.Text != want.Text {
		t.Fatalf("got %+v", got)
	}
}

func TestIDStable(t *testing.T) {
	if ID("a", "b") != ID("a", "b") || ID("a", "b") == ID("ab") || len(ID("x")) != 32 {
		t.Fatal("ids not stable or not separated")
	}
}

func TestEachKeepsOrderAndReportsBadLines(t *testing.T) {
	var in strings.Builder
	for i := range 3000 {
		if i%1000 == 7 {
			in.WriteString("oops\n")
		}
		fmt.Fprintf(&in, `{"kind":"message","id":"%d"}`+"\n", i)
	}
	next := 0
	var bad []string
	n, err := Each(context.Background(), strings.NewReader(in.String()), EachOptions{Name: "s.ndjson", OnSkip: func(b *BadInput) error {
		bad = append(bad, b.Error())
		return nil
	}}, func(r *Record) error {
		if r.ID != strconv.Itoa(next) {
			t.Fatalf("got %s, want %d", r.ID, next)
		}
		next++
		return nil
	})
	if err != nil || n != 3 || next != 3000 || !strings.HasPrefix(bad[0], "s.ndjson:8: ") {
		t.Fatalf("err %v, skipped %d, records %d, bad %v", err, n, next, bad)
	}
	stop := errors.New("stop")
	_, err = Each(context.Background(), strings.NewReader(in.String()), EachOptions{Name: "s"}, func(r *Record) error { return nil })
	var bi *BadInput
	if !errors.As(err, &bi) || bi.Line != 8 {
		t.Fatalf("without onSkip: %v", err)
	}
	_, err = Each(context.Background(), strings.NewReader(in.String()), EachOptions{Name: "s"}, func(r *Record) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("fn error: %v", err)
	}
}

func TestLazyKindsPassVerbatim(t *testing.T) {
	raw := sample()
	raw.Kind = KindRaw
	line := AppendRecord(nil, raw)
	in := string(line) + "\n" + `{"schema":"pos/1","kind":"rawish","id":"x"}` + "\n"
	dec := NewDecoder(strings.NewReader(in))
	dec.Lazy = []Kind{KindRaw}
	var r Record
	if err := dec.Decode(&r); err != nil || r.Kind != KindRaw || r.ID != "" || !bytes.Equal(r.Line, line) {
		t.Fatalf("lazy raw: %v %+v", err, r)
	}
	if got := AppendRecord(nil, &r); !bytes.Equal(got, line) {
		t.Fatal("a lazy record does not encode to its line")
	}
	if err := dec.Decode(&r); err != nil || r.Kind != "rawish" || r.ID != "x" || r.Line != nil {
		t.Fatalf("other kinds are decoded: %v %+v", err, r)
	}
}

// RawID remembers the last paths' bases; the ids are those of the formula,
// whatever the order the paths come in (two files of one length share a
// slot).
func TestRawIDPathBase(t *testing.T) {
	paths := []string{"/home/u/.claude/projects/-p/s1.jsonl", "/home/u/.claude/projects/-q/s1.jsonl", "/a/b/c.jsonl", "/a//b/./c.jsonl",
		"rel/x.jsonl", "x.jsonl", "/x.jsonl", "/home/u/.claude/projects/-p/s2.jsonl", "/dir/sub/", ""}
	for round := range 3 {
		for i, p := range paths {
			if round == 1 {
				p = paths[len(paths)-1-i]
			}
			rec := New(KindRaw)
			rec.Platform, rec.SessionID, rec.Raw = "claude_code", "s", []byte(`{"a":1}`)
			rec.Source = &Source{Path: p, Offset: 7}
			want := ID("claude_code", "raw", "s", filepath.Join(filepath.Base(filepath.Dir(p)), filepath.Base(p)), "7", ContentHash(rec.Raw))
			if got := RawID(rec); got != want {
				t.Fatalf("%q: %s, want %s", p, got, want)
			}
		}
	}
}

// TestIDValues pins ids: they are keys in every lake already written, so a
// change of how they are computed must not change one.
func TestIDValues(t *testing.T) {
	r := &Record{Platform: "claude_code", SessionID: "s", Source: &Source{Path: "/x/y/z.jsonl", Offset: 42, Key: "k"}, Raw: []byte(`{"a":1}`)}
	for _, c := range []struct{ got, want string }{
		{ID("a", "b"), "59b271ae1bbcb1d31d41929817f4b16f"},
		{ID(""), "e3b0c44298fc1c149afbf4c8996fb924"},
		{ID("claude_code", "raw", "s1", "p/f.jsonl", "123", "ff"), "7c0e18c69b3ad1d6932fc740eedd976d"},
		{ID(string(make([]byte, 300))), "d13d4a8b3b8add19b5970157f09d00c1"},
		{RawID(r), "b716ffc89f9de42341b117e81dbd5e1e"},
	} {
		if c.got != c.want {
			t.Errorf("id %s, want %s", c.got, c.want)
		}
	}
}

func BenchmarkID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		ID("claude_code", "raw", "b505d705-676a-4a05-b299-31fa9f2851ba", "-home-marco-projects-spotter/b505d705-676a-4a05-b299-31fa9f2851ba.jsonl", "10491", "9f3a6c1d2e4b5a70")
	}
}

// RawID keeps of a source path what filepath.Join(filepath.Base(
// filepath.Dir(path)), filepath.Base(path)) gives, for any path.
func FuzzRawBase(f *testing.F) {
	for _, p := range []string{"a/b/c.jsonl", "c", "/c", "", ".", "..", "a/..", "//a//b//", "a/./b", `a\b/c`} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		want := filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path))
		if got := string(appendRawBase([]byte("x"), path)); got != "x"+want {
			t.Errorf("appendRawBase(%q) = %q, want %q", path, got[1:], want)
		}
	})
}

func TestRawIDIsID(t *testing.T) {
	for _, r := range []*Record{
		{Platform: "codex", SessionID: "s", Source: &Source{Path: "a/b/c.jsonl", Offset: 7}, Raw: []byte(`{}`)},
		{Platform: "cursor", SessionID: "", Source: &Source{Path: "db", Key: "bubble:1"}, Raw: []byte(`[1]`)},
		{Platform: "aider", SessionID: "x"},
		{Platform: "gemini", SessionID: "s", Source: &Source{Path: "c.jsonl"}},
		{Platform: "gemini", SessionID: "s", Source: &Source{Path: "/c.jsonl"}},
		{Platform: "gemini", SessionID: "s", Source: &Source{Path: "a/../b/./c.jsonl/"}},
		{Platform: "gemini", SessionID: "s", Source: &Source{Path: ""}},
		{Platform: "gemini", SessionID: "s", Source: &Source{Path: "../.."}},
	} {
		var base, at string
		if s := r.Source; s != nil {
			base, at = filepath.Join(filepath.Base(filepath.Dir(s.Path)), filepath.Base(s.Path)), strconv.FormatInt(s.Offset, 10)
			if s.Key != "" {
				at += "/" + s.Key
			}
		}
		if got, want := RawID(r), ID(r.Platform, "raw", r.SessionID, base, at, ContentHash(r.Raw)); got != want {
			t.Errorf("%+v: RawID %s, ID %s", r, got, want)
		}
	}
}

// writeSizes records the size of each write it is given.
type writeSizes struct {
	bytes.Buffer
	sizes []int
}

func (w *writeSizes) Write(p []byte) (int, error) {
	w.sizes = append(w.sizes, len(p))
	return w.Buffer.Write(p)
}

// An encoder's first writes are small and double up to its buffer's size,
// so the next stage starts early; the stream is the same either way.
func TestEncoderRamp(t *testing.T) {
	var w writeSizes
	enc := NewEncoder(&w)
	var want bytes.Buffer
	for i := range 6000 {
		r := &Record{Schema: Version, Kind: KindMessage, ID: fmt.Sprint(i), Platform: "claude_code",
			Role: "user", Text: strings.Repeat("x", 1000)}
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		want.Write(AppendRecord(nil, r))
		want.WriteByte('\n')
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.Bytes(), want.Bytes()) {
		t.Fatal("the stream differs from its records encoded one by one")
	}
	if len(w.sizes) < 6 {
		t.Fatalf("writes %v: want a ramp of at least 5 writes, then full buffers", w.sizes)
	}
	limit := 64 << 10
	for i, n := range w.sizes[:5] {
		// A write is flushed by the record that crosses the limit.
		if n < limit || n > limit+2048 {
			t.Fatalf("write %d is %d bytes, want just over %d (writes %v)", i, n, limit, w.sizes)
		}
		limit *= 2
	}
	for i, n := range w.sizes[5 : len(w.sizes)-1] {
		if n < encoderBuffer || n > encoderBuffer+2048 {
			t.Fatalf("write %d is %d bytes, want just over %d (writes %v)", i+5, n, encoderBuffer, w.sizes)
		}
	}
}

// A few small records cost a buffer of their size, and one huge record's
// buffer is not kept once written.
func TestEncoderBufferGrows(t *testing.T) {
	var w bytes.Buffer
	enc := NewEncoder(&w)
	for i := range 3 {
		if err := enc.Encode(&Record{Schema: Version, Kind: KindMessage, ID: fmt.Sprint(i), Text: "hello"}); err != nil {
			t.Fatal(err)
		}
	}
	if c := cap(enc.buf); c > 4<<10 {
		t.Errorf("three small records hold a buffer of %d bytes", c)
	}
	if err := enc.Encode(&Record{Schema: Version, Kind: KindMessage, ID: "big", Text: strings.Repeat("y", 5<<20)}); err != nil {
		t.Fatal(err)
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	if c := cap(enc.buf); c > 2*encoderBuffer {
		t.Errorf("a 5 MB record's buffer (%d bytes) is kept", c)
	}
	if n := bytes.Count(w.Bytes(), []byte("\n")); n != 4 {
		t.Errorf("%d lines written, want 4", n)
	}
}

func TestAppendTime(t *testing.T) {
	for _, tm := range []time.Time{time.Date(2026, 2, 10, 21, 11, 56, 846999999, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 31, 23, 59, 59, 0, time.FixedZone("x", 3600))} {
		if got, want := string(AppendTime(nil, tm)), tm.UTC().Format("2006-01-02T15:04:05.000Z07:00"); got != want {
			t.Fatalf("AppendTime %s, want %s", got, want)
		}
	}
}
