package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/schema"
)

func TestRawLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"b"}`, `{"a":"b"}`},
		{`{"a":"héllo wörld, long enough to take the word path"}`, `{"a":"héllo wörld, long enough to take the word path"}`},
		// Controls inside strings are escaped; tabs and newlines between
		// tokens are JSON whitespace and stay.
		{"{\"a\":\"x\x01y\ttab\"}", `{"a":"x\u0001y\u0009tab"}`},
		{"{\"a\":\t\"b\"}", "{\"a\":\t\"b\"}"},
		{"{\"a\":\"escaped \\\" quote \x1f then\"}", `{"a":"escaped \" quote \u001f then"}`},
		{"{\"k\x02\":1}", `{"k\u0002":1}`},
		// A backslash that starts no escape is escaped; the control after
		// it too.
		{"{\"a\":\"\\\x05\"}", `{"a":"\\\u0005"}`},
		{`{"a":"\0 \x41 \u12 \u00e9 \n"}`, `{"a":"\\0 \\x41 \\u12 \u00e9 \n"}`},
		// Invalid UTF-8 becomes U+FFFD, with the controls after it escaped.
		{"{\"a\":\"\xff\x03\"}", "{\"a\":\"\uFFFD\\u0003\"}"},
		{strings.Repeat("x", 20) + "\xc3", strings.Repeat("x", 20) + "\uFFFD"},
	} {
		got := RawLine([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("RawLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.HasPrefix(tc.want, "{") && !json.Valid(got) {
			t.Errorf("RawLine(%q) = %q: not JSON", tc.in, got)
		}
	}
	// A copy, never the input.
	in := []byte(`{"a":"b"}`)
	if out := RawLine(in); &out[0] == &in[0] {
		t.Error("RawLine returned its input")
	}
}

func TestScanRaw(t *testing.T) {
	for i := 0; i < 40; i++ {
		for _, c := range []byte{0x00, 0x1f, 0x20, 0x7f} {
			b := bytes.Repeat([]byte("a"), 40)
			b[i] = c
			ctrl, valid := scanRaw(b)
			if ctrl != (c < 0x20) || !valid {
				t.Errorf("byte %#x at %d: ctrl %v valid %v", c, i, ctrl, valid)
			}
		}
	}
}

func BenchmarkRawLine(b *testing.B) {
	line := []byte(`{"parentUuid":"a9c947c3-4a49-4e4e-9930-31c31427f51d","isSidechain":false,"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("Some text with “quotes” and ascii ", 60) + `"}]},"uuid":"1033b2c3-c60e-4f81-80a6-78ee22747f38"}`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		RawLine(line)
	}
}

// readAll runs ReadLines over a file's bytes with an adapter that takes
// every JSON object but those with a member "refuse", and returns what it
// was handed.
type readResult struct {
	lines, rawOnly []Line
	raws           map[int64]string // by line number
	skips, warns   []string
	read           LinesRead
}

func readAll(t testing.TB, data []byte) readResult {
	res := readResult{raws: map[int64]string{}}
	opt := &Options{
		Stats:  &Stats{},
		OnSkip: func(b *schema.BadInput) error { res.skips = append(res.skips, b.Error()); return nil },
		OnWarn: func(b *schema.BadInput) error { res.warns = append(res.warns, b.Error()); return nil },
	}
	var err error
	res.read, err = opt.ReadLines(context.Background(), schema.NewLineReader(bytes.NewReader(data)), "f.jsonl", false, LineFuncs{
		Parse: func(raw []byte) error {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				return err
			}
			if _, ok := m["refuse"]; ok {
				return errors.New("no record of this format\nsecond line")
			}
			return nil
		},
		Line: func(raw []byte, ln Line) error {
			res.lines = append(res.lines, ln)
			res.raws[ln.Num] = string(raw)
			return nil
		},
		RawOnly: func(raw []byte, ln Line) error {
			res.rawOnly = append(res.rawOnly, ln)
			res.raws[ln.Num] = string(raw)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for n, raw := range res.raws {
		if strings.ContainsAny(raw, "\n\r") || !json.Valid([]byte(raw)) || jsontext.LoneSurrogate([]byte(raw)) || jsontext.Deeper([]byte(raw), schema.MaxNesting) {
			t.Fatalf("line %d handed on as %.80q: not one line of strict JSON", n, raw)
		}
	}
	return res
}

func TestReadLinesKeepsWhatIsJSON(t *testing.T) {
	deep := `{"type":"x","data":` + strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000) + "}"
	file := strings.Join([]string{
		"\xEF\xBB\xBF{\"n\":1}",                  // 1: a byte order mark
		"{\"n\":2}\r",                            // 2: CRLF
		`{"n":3,"p":"hello \ud800 world"}`,       // 3: lone surrogates
		`{"n":4,"p":"\ud800\u0041","\udc00k":5}`, // 4: in a key too
		deep,                                     // 5: 10,000 levels
		`[1,2]`, `42`, `"s"`, `null`, `true`,     // 6-10: not objects
		`{"refuse":1}`,                     // 11: valid JSON Parse refuses
		`{"n":12,`,                         // 12: truncated
		"\x00\x01garbage\xff",              // 13: not JSON
		"   ",                              // 14: blank
		"{\"n\":15,\"s\":\"a\x00b\xffc\"}", // 15: NUL and invalid UTF-8 in a string
		`{"n":16}`,                         // 16
		`{"n":17,"half":`,                  // 17: still being written
	}, "\n")
	res := readAll(t, []byte(file))

	if got := res.raws[1]; got != `{"n":1}` {
		t.Errorf("line 1 = %q", got)
	}
	if got := res.raws[2]; got != `{"n":2}` {
		t.Errorf("line 2 = %q", got)
	}
	if got := res.raws[3]; got != `{"n":3,"p":"hello \ufffd world"}` {
		t.Errorf("line 3 = %q", got)
	}
	if got := res.raws[4]; got != `{"n":4,"p":"\ufffd\u0041","\ufffdk":5}` {
		t.Errorf("line 4 = %q", got)
	}
	var text string
	if err := json.Unmarshal([]byte(res.raws[5]), &text); err != nil || text != deep {
		t.Errorf("line 5 is not kept as a string of its text: %v", err)
	}
	for n, want := range map[int64]string{6: `[1,2]`, 7: `42`, 8: `"s"`, 9: `null`, 10: `true`, 11: `{"refuse":1}`, 16: `{"n":16}`} {
		if res.raws[n] != want {
			t.Errorf("line %d = %q, want %q", n, res.raws[n], want)
		}
	}
	if got := res.raws[15]; got != "{\"n\":15,\"s\":\"a\\u0000b\uFFFDc\"}" {
		t.Errorf("line 15 = %q", got)
	}
	for _, n := range []int64{12, 13, 14, 17} {
		if raw, ok := res.raws[n]; ok {
			t.Errorf("line %d handed on: %q", n, raw)
		}
	}
	// Kept raw only: named; not JSON: named; repaired: warned; the line
	// being written: left for the next run.
	wantSkips := []string{
		"f.jsonl:5: nested deeper than 255 levels: kept in the raw layer as one JSON string",
		"f.jsonl:6: an array, not an object: kept in the raw layer only",
		"f.jsonl:7: a number, not an object: kept in the raw layer only",
		"f.jsonl:8: a string, not an object: kept in the raw layer only",
		"f.jsonl:9: null, not an object: kept in the raw layer only",
		"f.jsonl:10: a boolean, not an object: kept in the raw layer only",
		"f.jsonl:11: no record of this format: kept in the raw layer only",
		"f.jsonl:12: invalid JSON: unexpected end of JSON input",
		"f.jsonl:13: invalid JSON: invalid character '\\x00' looking for beginning of value",
	}
	if strings.Join(res.skips, "\n") != strings.Join(wantSkips, "\n") {
		t.Errorf("skips:\n%s\nwant:\n%s", strings.Join(res.skips, "\n"), strings.Join(wantSkips, "\n"))
	}
	wantWarns := []string{
		`f.jsonl:3: kept with repairs: lone surrogate escapes became \ufffd`,
		`f.jsonl:4: kept with repairs: lone surrogate escapes became \ufffd`,
		`f.jsonl:15: kept with repairs: invalid UTF-8 became U+FFFD; control characters became \u00XX escapes`,
	}
	if strings.Join(res.warns, "\n") != strings.Join(wantWarns, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(res.warns, "\n"), strings.Join(wantWarns, "\n"))
	}
	for _, ln := range res.lines {
		if want := map[int64]schema.Repairs{3: schema.RepairSurrogate, 4: schema.RepairSurrogate, 15: schema.RepairUTF8 | schema.RepairControl}[ln.Num]; ln.Repairs != want {
			t.Errorf("line %d repairs %v, want %v", ln.Num, ln.Repairs, want)
		}
	}
	if len(res.rawOnly) != 7 || res.rawOnly[0].Num != 5 || res.rawOnly[0].Altered() != "text" {
		t.Errorf("raw only: %+v", res.rawOnly)
	}
	// The half-written last line is where the next run starts.
	if off := int64(strings.LastIndex(file, "\n") + 1); res.read.Consumed != off || res.read.Lines != 16 {
		t.Errorf("consumed %d bytes, %d lines; want %d, 16", res.read.Consumed, res.read.Lines, off)
	}
}

// FuzzReadLines: whatever a file holds, every line ReadLines hands on is
// one line of strict JSON (readAll checks), and every complete line is
// handed on, named, or blank.
func FuzzReadLines(f *testing.F) {
	f.Add([]byte("{\"a\":\"\\ud800\"}\n[1]\n{\"refuse\":1}\n\xEF\xBB\xBF{}\r\n{\"b\":"))
	f.Add([]byte("{\"a\":\"x\x01\\q\xff\"}\n" + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res := readAll(t, data)
		complete := bytes.Count(data, []byte("\n"))
		blank := 0
		for i, l := range bytes.Split(data, []byte("\n"))[:complete] {
			if i == 0 {
				l = bytes.TrimPrefix(l, utf8BOM)
			}
			if len(bytes.Trim(l, " \t\r")) == 0 {
				blank++
			}
		}
		var handed int
		for n := range res.raws {
			if n <= int64(complete) {
				handed++
			}
		}
		// A line both handed on and named (kept raw only) counts once.
		named := len(res.skips) - len(res.rawOnly)
		if handed+named+blank != complete {
			t.Fatalf("%d complete lines: %d handed on, %d named, %d blank", complete, handed, named, blank)
		}
	})
}
