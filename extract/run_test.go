package extract_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pos-lake/pos/extract"
	_ "github.com/pos-lake/pos/extract/all"
	"github.com/pos-lake/pos/schema"
)

func TestParsePlatforms(t *testing.T) {
	for _, tc := range []struct {
		specs []string
		want  string // platforms, comma-separated, or the error
	}{
		{[]string{"claude"}, "claude_code"},
		{[]string{"codex, gemini", "aider"}, "codex,gemini,aider"},
		{[]string{"all"}, strings.Join(extract.PlatformNames(), ",")},
		{[]string{"vim"}, `unknown platform "vim" (known: ` + strings.Join(extract.PlatformNames(), ", ") + `, all)`},
	} {
		got, err := extract.ParsePlatforms(tc.specs)
		var names []string
		for _, a := range got {
			names = append(names, a.Platform())
		}
		s := strings.Join(names, ",")
		if err != nil {
			s = err.Error()
		}
		if s != tc.want {
			t.Errorf("%q: %s, want %s", tc.specs, s, tc.want)
		}
	}
}

// A file-level skip (no line, no key) is passed on once; line-level ones
// every time.
func TestOnceEach(t *testing.T) {
	n := 0
	skip := extract.OnceEach(func(*schema.BadInput) error { n++; return nil })
	file := &schema.BadInput{Path: "/h/p.jsonl", Err: errors.New("not a regular file")}
	line := &schema.BadInput{Path: "/h/a.jsonl", Line: 2, Err: errors.New("invalid JSON")}
	for range 3 {
		skip(file)
		skip(line)
	}
	if n != 4 {
		t.Errorf("%d skips passed on, want 4", n)
	}
}

func TestWriteCapabilities(t *testing.T) {
	chosen, _ := extract.ParsePlatforms([]string{"claude"})
	var md, js bytes.Buffer
	if err := extract.WriteCapabilities(&md, chosen, "markdown"); err != nil || !strings.Contains(md.String(), "claude_code") {
		t.Errorf("markdown: %v\n%s", err, md.String())
	}
	if err := extract.WriteCapabilities(&js, chosen, "json"); err != nil || !strings.HasPrefix(js.String(), "[\n  {\n    \"platform\": \"claude_code\",") {
		t.Errorf("json: %v\n%s", err, js.String())
	}
	err := extract.WriteCapabilities(&js, chosen, "xml")
	if !errors.Is(err, extract.ErrFormat) || err.Error() != `"xml" is not markdown or json` {
		t.Errorf("xml: %v", err)
	}
}

// Extra roots: platform=path entries, aliases resolved, ~/ under home,
// each root once; a bad entry is an error naming it.
func TestParseRoots(t *testing.T) {
	got, err := extract.ParseRoots("aider=~/src/app:claude=/mnt/l/.claude::aider=/home/me/src/app:aider=/x/", ':', "/home/me")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"aider": {"/home/me/src/app", "/x"}, "claude_code": {"/mnt/l/.claude"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	for _, bad := range []string{"/just/a/path", "vim=/x", "aider="} {
		if _, err := extract.ParseRoots(bad, ':', "/home/me"); err == nil || !strings.Contains(err.Error(), strconv.Quote(bad)) {
			t.Errorf("%q: %v, want an error naming it", bad, err)
		}
	}
}

// FuzzParseRoots: what ParseRoots accepts, written back as entries, reads
// the same.
func FuzzParseRoots(f *testing.F) {
	f.Add("aider=~/src/app:claude=/mnt/l/.claude")
	f.Add("codex=/a=b:gemini= /x ")
	f.Fuzz(func(t *testing.T, s string) {
		roots, err := extract.ParseRoots(s, ':', "/home/me")
		if err != nil {
			return
		}
		var entries []string
		for p, dirs := range roots {
			for _, d := range dirs {
				entries = append(entries, p+"="+d)
			}
		}
		again, err := extract.ParseRoots(strings.Join(entries, ":"), ':', "/home/me")
		if err != nil || !reflect.DeepEqual(roots, again) {
			t.Fatalf("%q: %v, then %v (%v)", s, roots, again, err)
		}
	})
}

// A run reads each platform's extra roots after its defaults; --list
// shows them under a header, a place that does not exist as not found.
func TestExtraRoots(t *testing.T) {
	home := t.TempDir()
	extra := filepath.Join(t.TempDir(), "laptop", ".claude")
	session := filepath.Join(extra, "projects", "-home-dev-x", "11111111-1111-4111-8111-111111111111.jsonl")
	if err := os.MkdirAll(filepath.Dir(session), 0o755); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"user","uuid":"u1","sessionId":"11111111-1111-4111-8111-111111111111","cwd":"/home/dev/x","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"hi"}}` + "\n"
	if err := os.WriteFile(session, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	chosen, _ := extract.ParsePlatforms([]string{"claude"})
	env := func(string) string { return "" }
	opt := extract.RunOptions{Adapters: chosen, ExtraRoots: map[string][]string{"claude_code": {extra, filepath.Join(home, "gone")}},
		Options: extract.Options{Home: home, Env: env}}
	var notes []string
	opt.Note = func(m string) { notes = append(notes, m) }
	var out bytes.Buffer
	if err := extract.Run(context.Background(), nopCloser{&out}, opt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"path":"`+session+`"`) {
		t.Errorf("the extra root's session was not read:\n%s", out.String())
	}
	if len(notes) != 2 || !strings.HasPrefix(notes[0], "claude_code: no history found") ||
		notes[1] != "claude_code: extra root "+filepath.Join(home, "gone")+" (POS_ROOTS) not found" {
		t.Errorf("notes: %q", notes)
	}
	var list bytes.Buffer
	if err := extract.List(&list, chosen, opt); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(list.String(), "\n"), "\n")
	if lines[0] != "platform\tlocation\tfiles" {
		t.Errorf("header %q", lines[0])
	}
	for _, want := range []string{"claude_code\t" + extra + "\t1", "claude_code\t" + filepath.Join(home, "gone") + "\tnot found",
		"claude_code\t" + filepath.Join(home, ".claude", "projects") + "\tnot found"} {
		if !slices.Contains(lines, want) {
			t.Errorf("--list lacks %q:\n%s", want, list.String())
		}
	}
	// Roots given replace the defaults and the extra roots.
	opt.Roots = []string{filepath.Join(home, "elsewhere")}
	list.Reset()
	if err := extract.List(&list, chosen, opt); err != nil || strings.Contains(list.String(), extra) {
		t.Errorf("--root and extra roots: %v\n%s", err, list.String())
	}
}

type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }
