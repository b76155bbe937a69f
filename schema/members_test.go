package schema

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/jsontext"
)

// memberCases are records of every kind and nested type, with the forms a
// stream may hold: escapes, surrogates, nulls, unknown members, other time
// zones.
var memberCases = []string{
	`{"schema":"pos/1","kind":"message","id":"m1","platform":"claude_code","session_id":"s","parent_id":"p","ts":"2025-01-02T03:04:05.123456789+02:00","ts_precision":"exact","role":"assistant","content_type":"text","native_type":"assistant","native_id":"n","request_id":"r","title":"t","text":"line\nnext \"q\" \\ \/ \t \u00e9 \ud83d\ude00 \ud800 x","thinking":"hm","tools":[{"name":"Bash","call_id":"c1","input":{"command":"ls -la","n":[1,2.5e3,null,true]},"output":"out","is_error":true},{"name":"Read"}],"model":"claude","usage":{"input":1,"output":2,"cache_creation":3,"cache_read":4,"cache_creation_1h":5},"agent":{"id":"a","type":"Explore","sidechain":true},"cwd":"/w","git_branch":"main","project":"/p","user":"u","machine":"m","files":["a.go","b.go"],"tags":["x"],"completeness":"full","source":{"path":"/f.jsonl","line":3,"key":"k","offset":120,"mtime":"2025-01-02T03:04:05Z","replay":true},"adapter":{"name":"claude_code","version":"1"},"ingested_at":"2025-01-02T03:04:06Z","meta":{"a":"\u00e9"}}`,
	`{"schema":"pos/1","kind":"raw","id":"r1","platform":"codex","raw":{"type":"x","payload":{"s":"a\u0000b","deep":[[{}],[]]}},"source":{"path":"/g","offset":0}}`,
	`{"schema":"pos/1","kind":"exchange","id":"e","exchange":{"number":2,"ts_end":"2025-01-02T03:04:05Z","prompt":"p","response":"r","message_count":3,"tool_count":1,"tools":["Bash"],"models":["m"],"prompt_id":"pi","last_id":"li","commits":["abc"]}}`,
	`{"schema":"pos/1","kind":"session","id":"s","session":{"slug":"sl","title_source":"label","first_ts":"2025-01-02T03:04:05Z","last_ts":"2025-01-03T03:04:05-05:00","message_count":9,"user_count":2,"assistant_count":7,"tool_count":3,"exchange_count":2,"models":[{"model":"m","messages":7,"input":1,"output":2,"cache_creation":3,"cache_read":4}],"labels":["l1","l2"],"plan_id":"pl","compactions":1,"subagents":2}}`,
	`{"schema":"pos/1","kind":"chunk","id":"c","chunk":{"index":1,"model":"hash","dim":3,"embedding":[0.5,-1,2e-3]}}`,
	`{"schema":"pos/1","kind":"checkpoint","checkpoint":{"platform":"claude_code","path":"/f","size":10,"resume":5,"seen":12,"mtime":"2025-01-02T03:04:05.5Z","inode":18446744073709551615,"head":"abcd","lines":2,"context":{"session":"s","slug":""},"state":"/st","lake":"/lake"}}`,
	`{"schema":"pos/1","kind":"decision","decision":{"confidence":0.85,"status":"decision","patterns":["lets_use"],"exchange_id":"e","message_id":"m","context":"c"}}`,
	`{"schema":"pos/1","kind":"file_ref","file_ref":{"path":"a.go","action":"edit","tool":"Edit","exchange_id":"e","message_id":"m"}}`,
	`{"kind":"message","text":null,"usage":null,"tools":[],"files":null,"ts":""}`,
	` { "kind" : "message" , "id" : "spaced" , "source" : { "path" : "p" , "line" : 1 } } `,
	`{"kind":"message","future":{"a":1},"usage":{"input":1,"later":[1,2]},"source":{"path":"p","new":"x"},"zz":"\u00e9"}`,
	`{"schema":"pos/1","kind":"message","id":"dup","id":"last","text":"\u20ac\\n"}`,
	"{\"kind\":\"message\",\"text\":\"bad \xff utf8\",\"raw\":{\"s\":\"\xfe\"}}",
	`{"schema":"pos/1","kind":"message","id":"adv","role":"assistant","model":"s","usage":{"input":1,"output":2,"cache_creation":0,"cache_read":0},"advisor":[{"model":"claude-opus-4-6","input":7000,"output":700,"cache_creation":1000,"cache_read":2000,"cache_creation_1h":1000},{"model":"m2","messages":1,"input":1,"output":0,"cache_creation":0,"cache_read":0}]}`,
	`{"kind":"message","advisor":null}`,
	`{"kind":"message","advisor":[null,{"model":"x","later":1}]}`,
}

// decodingLines returns memberCases and every line of the golden streams.
func decodingLines(t testing.TB) [][]byte {
	var lines [][]byte
	for _, c := range memberCases {
		lines = append(lines, []byte(c))
	}
	golden, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "*.golden.ndjson"))
	if len(golden) == 0 {
		t.Fatal("no golden streams in ../testdata")
	}
	for _, name := range golden {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if len(bytes.TrimSpace(sc.Bytes())) > 0 {
				lines = append(lines, append([]byte(nil), sc.Bytes()...))
			}
		}
	}
	return lines
}

// checkPathsAgree fails when sonic's decoder accepts a line that the
// member-by-member decoder rejects or decodes otherwise.
func checkPathsAgree(t *testing.T, line []byte) (accepted bool) {
	t.Helper()
	var viaSonic, viaMembers Record
	if !unmarshalWhole(testFast, line, &viaSonic) {
		return false
	}
	if err := unmarshalMembers(testFast, line, &viaMembers); err != nil {
		t.Fatalf("sonic decodes %s\nbut the member decoder says: %v", line, err)
	}
	a, b := AppendRecord(nil, &viaSonic), AppendRecord(nil, &viaMembers)
	if !bytes.Equal(a, b) {
		t.Fatalf("the decoders disagree on %s\nsonic:   %s\nmembers: %s", line, a, b)
	}
	if !viaSonic.TS.Equal(viaMembers.TS) || viaSonic.TS.Location() != viaMembers.TS.Location() {
		t.Fatalf("times differ on %s: %v / %v", line, viaSonic.TS, viaMembers.TS)
	}
	return true
}

func TestDecodersAgree(t *testing.T) {
	lines := decodingLines(t)
	sonicDeclined := 0
	for _, l := range lines {
		if !checkPathsAgree(t, l) {
			sonicDeclined++
			// What sonic declines, the member decoder must still take
			// when it is a record (unknown members, invalid UTF-8).
			var r Record
			if err := unmarshalMembers(testFast, l, &r); err != nil {
				t.Errorf("neither decoder takes %s: %v", l, err)
			}
		}
	}
	if sonicDeclined == 0 || sonicDeclined == len(lines) {
		t.Fatalf("sonic declined %d of %d lines: the cases do not exercise both paths", sonicDeclined, len(lines))
	}
	t.Logf("%d lines, %d only through the member decoder", len(lines), sonicDeclined)
}

func TestMemberDecoderValues(t *testing.T) {
	var r Record
	if err := unmarshalMembers(testFast, []byte(memberCases[0]), &r); err != nil {
		t.Fatal(err)
	}
	if want := "line\nnext \"q\" \\ / \t é 😀 \uFFFD x"; r.Text != want {
		t.Errorf("text %q, want %q", r.Text, want)
	}
	if r.TS.Location().String() != "UTC" || r.TS.Hour() != 1 || r.TS.Nanosecond() != 123456789 {
		t.Errorf("ts %v: want UTC 01:04:05.123456789", r.TS)
	}
	if r.Usage == nil || *r.Usage != (Usage{1, 2, 3, 4, 5}) {
		t.Errorf("usage %+v", r.Usage)
	}
	if len(r.Tools) != 2 || r.Tools[0].Name != "Bash" || !r.Tools[0].IsError || string(r.Tools[0].Input) != `{"command":"ls -la","n":[1,2.5e3,null,true]}` {
		t.Errorf("tools %+v", r.Tools)
	}
	if r.Source == nil || r.Source.Offset != 120 || !r.Source.Replay || r.Agent == nil || !r.Agent.Sidechain {
		t.Errorf("source %+v agent %+v", r.Source, r.Agent)
	}
	var c Record
	if err := unmarshalMembers(testFast, []byte(memberCases[5]), &c); err != nil {
		t.Fatal(err)
	}
	if c.Checkpoint == nil || c.Checkpoint.Inode != 1<<64-1 || c.Checkpoint.Context["session"] != "s" || len(c.Checkpoint.Context) != 2 ||
		c.Checkpoint.State != "/st" || c.Checkpoint.Lake != "/lake" {
		t.Errorf("checkpoint %+v", c.Checkpoint)
	}
	var u Record
	if err := unmarshalMembers(testFast, []byte(memberCases[10]), &u); err != nil {
		t.Fatal(err)
	}
	if len(u.Extra) != 2 || u.Extra[0].Key != "future" || u.Usage.Input != 1 || u.Source.Path != "p" {
		t.Errorf("unknown members: %+v", u)
	}
}

func TestMemberDecoderRejects(t *testing.T) {
	for _, bad := range []string{
		`{"kind":"message","text":"a\x"}`,
		`{"kind":"message","text":"\u12"}`,
		`{"kind":"message","usage":{"input":1.5}}`,
		`{"kind":"message","usage":{"input":01}}`,
		`{"kind":"message","usage":{"input":"1"}}`,
		`{"kind":"message","source":{"line":+1}}`,
		`{"kind":"message","agent":{"sidechain":1}}`,
		`{"kind":"message","ts":"yesterday"}`,
		`{"kind":"message","ts":"0000-01-01T00:00:00+01:00"}`,
		`{"kind":"message","source":{"path":"p","mtime":"9999-12-31T23:00:00-02:00"}}`,
		`{"kind":"message","raw":{"a":}}`,
		`{"kind":"message","future":[1,}`,
		`{"kind":"message","usage":{"later":nul}}`,
		`{"kind":"message"} x`,
		`{"kind":"message",}`,
		`{"id":"no kind"}`,
		`{"kind":"message","schema":"other/1"}`,
		`["kind"]`,
		`{"kind":"message","tools":[{"name":"a"},]}`,
	} {
		var r Record
		if err := unmarshalMembers(testFast, []byte(bad), &r); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// A Fast sends its first jsontext.BulkAfter bytes of records to the member
// decoder, then decodes with sonic, which decodes the same.
func TestUnmarshalBudget(t *testing.T) {
	if testFast == nil {
		t.Skip("no sonic on this platform")
	}
	calls := 0
	f := &jsontext.Fast{Skip: testFast.Skip, Valid: testFast.Valid, UnmarshalNested: testFast.UnmarshalNested,
		Unmarshal: func(data []byte, v any) error { calls++; return testFast.Unmarshal(data, v) }}
	line := []byte(memberCases[0])
	var first []byte
	n := 0
	for ; calls == 0; n++ {
		var r Record
		if err := UnmarshalWith(f, line, &r); err != nil || r.Text == "" {
			t.Fatal(err)
		}
		if n == 0 {
			first = AppendRecord(nil, &r)
		} else if calls > 0 && !bytes.Equal(first, AppendRecord(nil, &r)) {
			t.Fatalf("sonic's decode differs:\n%s\n%s", first, AppendRecord(nil, &r))
		}
	}
	if want := (jsontext.BulkAfter+len(line)-1)/len(line) + 1; n != want {
		t.Fatalf("sonic decoded line %d, want %d", n, want)
	}
}

// FuzzDecoders: whatever sonic decodes, the member decoder decodes the same.
func FuzzDecoders(f *testing.F) {
	for _, l := range decodingLines(f) {
		if len(l) < 4096 {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPathsAgree(t, data)
		checkWithoutFast(t, data)
		var r Record
		if unmarshalMembers(testFast, data, &r) == nil {
			var back Record
			if err := unmarshalMembers(testFast, AppendRecord(nil, &r), &back); err != nil {
				t.Fatalf("re-decoding %s: %v", AppendRecord(nil, &r), err)
			}
		}
	})
}

// checkWithoutFast fails when the member decoder decodes a line otherwise
// with Fast (sonic's skipper, validator and nested decoder, as the stream
// filters run) than without it (Go alone, as the lake's readers run).
func checkWithoutFast(t *testing.T, line []byte) {
	t.Helper()
	var with, without Record
	errWith := unmarshalMembers(testFast, line, &with)
	errWithout := unmarshalMembers(nil, line, &without)
	if (errWith == nil) != (errWithout == nil) {
		t.Fatalf("%q: with sonic: %v; without: %v", line, errWith, errWithout)
	}
	if a, b := AppendRecord(nil, &with), AppendRecord(nil, &without); errWith == nil && !bytes.Equal(a, b) {
		t.Fatalf("%q decodes otherwise without sonic\nwith:    %s\nwithout: %s", line, a, b)
	}
}

// A backslash that starts no JSON escape ("\0") makes a value invalid,
// whichever decoder reads it: sonic takes it in the values it keeps
// undecoded (raw, meta, a tool's input, an unknown member), so the record
// goes to the member decoder, which says what is wrong.
func TestBadEscapes(t *testing.T) {
	for _, l := range []string{
		`{"schema":"pos/1","kind":"raw","raw":{"s":"\0"}}`,
		`{"schema":"pos/1","kind":"message","meta":{"s":"\x"}}`,
		`{"schema":"pos/1","kind":"message","tools":[{"name":"a","input":{"s":"\q"}}]}`,
		`{"schema":"pos/1","kind":"message","future":{"s":"\u12"}}`,
		`{"schema":"pos/1","kind":"message","text":"\0"}`,
	} {
		var r Record
		if unmarshalWhole(testFast, []byte(l), &r) {
			t.Errorf("sonic's path takes %s", l)
		}
		if err := UnmarshalWith(testFast, []byte(l), &r); err == nil {
			t.Errorf("Unmarshal takes %s", l)
		} else if !strings.Contains(err.Error(), "escape") {
			t.Errorf("%s: %v does not say the escape is wrong", l, err)
		}
		checkWithoutFast(t, []byte(l))
	}
	for _, good := range []string{`"\"\\\/\b\f\n\r\t\u00e9\uD83D"`, `{"a\\":["\\\\"]}`, `1`} {
		if !jsontext.ValidEscapes([]byte(good)) {
			t.Errorf("ValidEscapes refuses %s", good)
		}
	}
}

func TestWithoutFast(t *testing.T) {
	if testFast == nil {
		t.Fatal("the tests run without sonic plugged in: see fast_ext_test.go")
	}
	lines := decodingLines(t)
	for _, c := range []string{
		// Control characters inside strings, as some native lines hold
		// them raw: taken, as sonic takes them.
		"{\"kind\":\"raw\",\"raw\":{\"s\":\"a\x00b\x01\x1f\",\"t\":\"\x80\"}}",
		"{\"kind\":\"raw\",\"raw\":{\"s\":1,\t\"t\":[\r\n]}}",
		// Between tokens: refused, with or without, but for JSON's own
		// white space.
		"{\"kind\":\"0\",\"\":{\"\":\x1b0}}",
		"{\"kind\":\"raw\",\"raw\":[1,\x012]}",
		"{\"kind\":\"raw\",\"raw\":{\"s\":\"a\\\x01\"}}",
		// In a nested object decoded whole (a chunk): kept, with or without.
		"{\"kind\":\"chunk\",\"chunk\":{\"model\":\"m\x01\\\"\x1f\",\"\x1b\":[],\"index\":2}}",
		"{\"kind\":\"message\",\"future\":\"x\x02y\",\"text\":\"t\"}",
		// Not JSON, with or without.
		`{"kind":"raw","raw":{"s":}}`,
		`{"kind":"raw","raw":{"s":"a"]}`,
		`{"kind":"message","future":[1,}`,
		`{"kind":"message","future":tru}`,
		`{"kind":"chunk","chunk":{"embedding":[1,"x"]}}`,
	} {
		lines = append(lines, []byte(c))
	}
	for _, l := range lines {
		checkWithoutFast(t, l)
	}
}

func TestUnmarshalCheckpoints(t *testing.T) {
	c := &Checkpoint{Platform: "claude_code", Path: "/a \"b\".jsonl", Size: 10, Resume: 4, Seen: 12, Inode: 7, Head: "h", Lines: 2,
		Context: map[string]string{"session": "s"}}
	b := append([]byte("[\n"), AppendCheckpoint(nil, c)...)
	b = append(b, ",null\n]\n"...)
	list, err := UnmarshalCheckpoints(b)
	if err != nil || len(list) != 1 || list[0].Path != c.Path || list[0].Context["session"] != "s" || list[0].Inode != 7 {
		t.Fatalf("%s -> %+v, %v", b, list, err)
	}
	if list, err := UnmarshalCheckpoints([]byte("null")); err != nil || len(list) != 0 {
		t.Fatalf("null: %v %v", list, err)
	}
	for _, bad := range []string{"", "{}", "[{}] x", `[{"size":"1"}]`, "[1]"} {
		if _, err := UnmarshalCheckpoints([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
