// Package damage writes a damaged home: the session histories of Claude
// Code, Codex and Gemini CLI (JSONL) and Cline (a task folder's JSON
// files) with valid lines beside every kind of damage a real disk holds —
// truncated lines, random bytes, invalid UTF-8, NUL and control bytes,
// invalid escapes, lone surrogates, nesting 10,000 levels deep, JSON that
// is no object, bad timestamps, token counts that are strings or below
// zero, a byte order mark, CRLF line ends, a 20 MB line, duplicate lines,
// empty, blank-only and binary files, a symbolic-link loop, a directory
// and a FIFO named like a history, and a live session whose last line is
// half written. It records what the lake must hold for each line, so that
// a test can check a pipeline's result line by line.
//
// The valid lines are the real ones of the corpus (../shared/corpus) when
// it is there, else lines of the same shapes; the output depends on the
// seed alone.
package damage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Expect says what the lake must hold for a native line or element, and
// whether a diagnostic must name it.
type Expect int

const (
	// Valid: a raw row holding Raw byte for byte; not named.
	Valid Expect = iota
	// Warned: a raw row holding Raw byte for byte; named (a field of it
	// could not be read: a time that is no time, a count that is no
	// count).
	Warned
	// Repaired: a raw row of strict JSON whose source_altered names
	// Altered; named.
	Repaired
	// RawOnly: a raw row holding Raw (JSON that is not an object, so no
	// message); named.
	RawOnly
	// AsText: a raw row holding one JSON string whose value is Raw (a line
	// nested too deeply to keep as JSON); named.
	AsText
	// Skipped: no raw row (not JSON); named.
	Skipped
	// Entry: a directory entry that is no readable history (a link loop,
	// a directory, a FIFO); named as path: reason, and the run goes on.
	Entry
)

var expectNames = [...]string{"valid", "warned", "repaired", "raw only", "as text", "skipped", "entry"}

func (e Expect) String() string { return expectNames[e] }

// Line is one native line (or JSON element, or directory entry) of the
// home.
type Line struct {
	Platform string
	Path     string
	Num      int64  // 1-based line of a JSONL file; 0 otherwise
	Key      string // an element of a JSON file: its source key (ui_messages.json[3])
	What     string // the damage; "" for a valid line
	Expect   Expect
	Raw      string // what the raw layer holds (see Expect)
	Altered  string // Repaired: a repair source_altered names
}

// Where is how a diagnostic names the line: path:line, path:key, or the
// path of an entry.
func (l Line) Where() string {
	switch {
	case l.Num > 0:
		return l.Path + ":" + strconv.FormatInt(l.Num, 10)
	case l.Key != "":
		return l.Path + ":" + l.Key
	}
	return l.Path
}

// Options configure Write.
type Options struct {
	Seed int64
	// Corpus is the corpus directory (../shared/corpus); "" or a missing
	// directory: lines of the same shapes are made up.
	Corpus string
	// BigLine is the size of the one huge line (20 MB when 0).
	BigLine int
	// NoEntries leaves out the directory entries that are no history
	// (link loop, directory, FIFO).
	NoEntries bool
}

// Home is a damaged home Write made.
type Home struct {
	Dir   string
	Lines []Line
	// Live is the last line of a live session, half written: not in the
	// lake until Complete writes its end.
	Live     Line
	liveRest []byte

	rng    *rand.Rand
	corpus string
	seq    int
}

// Write makes a damaged home in dir.
func Write(dir string, opt Options) (*Home, error) {
	if opt.BigLine == 0 {
		opt.BigLine = 20 << 20
	}
	h := &Home{Dir: dir, rng: rand.New(rand.NewPCG(uint64(opt.Seed), 30)), corpus: opt.Corpus}
	if h.corpus != "" {
		if _, err := os.Stat(h.corpus); err != nil {
			h.corpus = ""
		}
	}
	for _, f := range []func(Options) error{h.claude, h.codex, h.gemini, h.cline} {
		if err := f(opt); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Complete writes the end of the live session's last line, as the agent
// does when it finishes writing it.
func (h *Home) Complete() error {
	f, err := os.OpenFile(h.Live.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(h.liveRest); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Damaged is the lines a diagnostic must name.
func (h *Home) Damaged() []Line {
	var out []Line
	for _, l := range h.Lines {
		if l.Expect != Valid {
			out = append(out, l)
		}
	}
	return out
}

// jsonl builds a JSONL file line by line.
type jsonl struct {
	h        *Home
	platform string
	path     string
	buf      bytes.Buffer
	n        int64
}

func (h *Home) file(platform, path string) *jsonl {
	return &jsonl{h: h, platform: platform, path: path}
}

// add writes a line (eol "\n" or "\r\n") and records what it must become.
func (f *jsonl) add(text string, exp Expect, what, raw, altered, eol string) {
	f.buf.WriteString(text)
	f.buf.WriteString(eol)
	f.n++
	f.h.Lines = append(f.h.Lines, Line{Platform: f.platform, Path: f.path, Num: f.n, What: what, Expect: exp, Raw: raw, Altered: altered})
}

// valid adds a valid line, kept byte for byte.
func (f *jsonl) valid(text string) { f.add(text, Valid, "", text, "", "\n") }

// blank adds a line with nothing but blanks: no record, no diagnostic.
func (f *jsonl) blank(text string) {
	f.buf.WriteString(text + "\n")
	f.n++
}

func (f *jsonl) write() error {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(f.path, f.buf.Bytes(), 0o644)
}

// carrier makes a valid line of a platform that holds text in a string
// (the marker is replaced by the text as it is, escapes and bad bytes
// included), at time ts.
type carrier func(text, ts string) string

const marker = "\x00MARK\x00"

// put puts raw bytes where the carrier's marker is.
func put(c carrier, text, ts string) string {
	return strings.Replace(c(marker, ts), jsonString(marker), `"`+text+`"`, 1)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// damage adds the line-level damage every JSONL platform gets, each line
// in the platform's own shape: c carries a text, usage makes a line with
// token counts (a number's text each), badTS is a valid line with a time
// that is no time.
func (h *Home) damage(f *jsonl, c carrier, usage func(in, out string) string, badTS string) {
	ts := "2026-02-10T21:30:00.000Z"
	valid := c("a valid prompt between damaged lines", ts)
	type step func()
	steps := []step{
		func() { // a line cut in the middle, then a newline
			f.add(valid[:len(valid)/2], Skipped, "truncated", "", "", "\n")
		},
		func() {
			f.add(string(h.random(60+h.rng.IntN(140))), Skipped, "random bytes", "", "", "\n")
		},
		func() {
			// Bytes that are no UTF-8, a surrogate encoded in UTF-8 (CESU-8)
			// and a cut sequence.
			f.add(put(c, "bad \xff\xfe utf-8 \xed\xa0\x80 \xc3", ts), Repaired, "invalid UTF-8", "", "utf8", "\n")
		},
		func() { // valid, if unusual: kept byte for byte, not named
			line := `{"odd":[1e999,-0,0.5E-3],"emoji":"\ud83d\ude00","nul":"\u0000","slash":"\/",` + valid[1:]
			f.valid(line)
		},
		func() { l := usage(`1e30`, `12`); f.add(l, Warned, "token count out of range", l, "", "\n") },
		func() { f.add(put(c, "a NUL \x00 byte", ts), Repaired, "NUL byte in a string", "", "control", "\n") },
		func() {
			f.add(put(c, "bell \x07 escape \x1b[2J", ts), Repaired, "control characters", "", "control", "\n")
		},
		func() { f.add(put(c, `C:\path\qux \0`, ts), Repaired, "invalid escape", "", "escape", "\n") },
		func() {
			f.add(put(c, `hello \ud800 world`, ts), Repaired, "lone high surrogate", "", "surrogate", "\n")
		},
		func() {
			f.add(put(c, `\ud800\u0041 not a pair`, ts), Repaired, "high surrogate, no low one", "", "surrogate", "\n")
		},
		func() { f.add(put(c, `low \udc00 alone`, ts), Repaired, "lone low surrogate", "", "surrogate", "\n") },
		func() {
			f.add(put(c, `ends with \ud83d`, ts), Repaired, "surrogate at the end of a string", "", "surrogate", "\n")
		},
		func() {
			line := `{"\ud800key":1,` + valid[1:]
			f.add(line, Repaired, "lone surrogate in a key", "", "surrogate", "\n")
		},
		func() {
			deep := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
			line := `{"nested":` + deep + "," + valid[1:]
			f.add(line, AsText, "nested 10,000 levels", line, "", "\n")
		},
		func() { f.add(`[1,2,3]`, RawOnly, "an array", `[1,2,3]`, "", "\n") },
		func() { f.add(`42`, RawOnly, "a number", `42`, "", "\n") },
		func() { f.add(`"just a string"`, RawOnly, "a string", `"just a string"`, "", "\n") },
		func() { f.add(`null`, RawOnly, "null", `null`, "", "\n") },
		func() { f.add(`true`, RawOnly, "true", `true`, "", "\n") },
		func() { f.add(badTS, Warned, "bad timestamp", badTS, "", "\n") },
		func() { l := usage(`"1200"`, `"34"`); f.add(l, Warned, "token counts as strings", l, "", "\n") },
		func() { l := usage(`-1200`, `-34`); f.add(l, Warned, "negative token counts", l, "", "\n") },
		func() { f.add(valid+" "+valid, Skipped, "two values on a line", "", "", "\n") },
		func() { f.add(valid+"\x00", Skipped, "a NUL byte after the value", "", "", "\n") },
		func() { // the same line twice: two raw rows
			f.valid(valid)
			f.valid(valid)
		},
		func() { f.add(valid, Valid, "", valid, "", "\r\n") },
		func() { f.blank(" \t ") },
	}
	h.rng.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
	for _, s := range steps {
		s()
	}
}

// random is n random bytes without a newline, never JSON: the first is a
// byte no JSON text starts with (PNG's 0x89).
func (h *Home) random(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(h.rng.IntN(256))
		if b[i] == '\n' {
			b[i] = 0
		}
	}
	b[0] = 0x89
	return b
}

// corpusLines returns the lines of corpus files (relative paths), or nil
// without a corpus.
func (h *Home) corpusLines(rels ...string) []string {
	if h.corpus == "" {
		return nil
	}
	var out []string
	for _, rel := range rels {
		b, err := os.ReadFile(filepath.Join(h.corpus, rel))
		if err != nil {
			return nil
		}
		for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
			out = append(out, l)
		}
	}
	return out
}

func (h *Home) uuid() string {
	h.seq++
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", h.rng.Uint32(), h.rng.IntN(1<<16), h.seq, h.rng.IntN(1<<12), h.rng.Uint64()&(1<<48-1))
}

// entries adds what is no history file but is named like one: a link to
// itself, a directory and a FIFO.
func (h *Home) entries(platform, dir, prefix string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	loop := filepath.Join(dir, prefix+"loop.jsonl")
	if err := os.Symlink(filepath.Base(loop), loop); err != nil {
		return err
	}
	sub := filepath.Join(dir, prefix+"dir.jsonl")
	if err := os.Mkdir(sub, 0o755); err != nil {
		return err
	}
	fifo := filepath.Join(dir, prefix+"fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		return err
	}
	for _, p := range []struct{ path, what string }{{loop, "symbolic-link loop"}, {sub, "directory"}, {fifo, "FIFO"}} {
		h.Lines = append(h.Lines, Line{Platform: platform, Path: p.path, What: p.what, Expect: Entry})
	}
	return nil
}
