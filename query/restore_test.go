package query_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract/codex"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
)

// TestRestoreCorpus restores every JSONL session of the corpus (Claude
// Code and Codex CLI) from the raw layer of a lake built by the real
// pipeline, and compares each file with its original: the same bytes, but
// inside the markers pos-scrub put where it found secrets.
func TestRestoreCorpus(t *testing.T) {
	dir := corpus.Dir(t)
	claude, cdx := filepath.Join(dir, "claude"), filepath.Join(dir, "codex")
	lake := filepath.Join(t.TempDir(), "lake")
	p := querytest.Pipeline{User: "dev", Machine: "box", Now: func() time.Time { return querytest.Now },
		Key: []byte("querytest key of 32 bytes or more"), More: []querytest.Source{{Adapter: codex.Adapter{}, Root: cdx}}}
	if err := p.Run(context.Background(), claude, lake); err != nil {
		t.Fatal(err)
	}
	db, err := query.Open(context.Background(), lake, query.LazyViews())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := filepath.Join(t.TempDir(), "out")
	var notes []query.RestoreNote
	res, err := db.Restore(context.Background(), query.RestoreOptions{Before: time.Now(), Dir: out,
		Note: func(n query.RestoreNote) { notes = append(notes, n) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) > 0 {
		t.Errorf("notes on files the raw layer holds whole: %v", notes)
	}
	var want []string
	for _, root := range []string{claude, cdx} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
				want = append(want, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	redacted := 0
	for _, f := range res.Files {
		got = append(got, f.Source)
		orig, err := os.ReadFile(f.Source)
		if err != nil {
			t.Fatal(err)
		}
		back, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(orig, back) {
			continue
		}
		n, err := sameButMarkers(orig, back)
		if err != nil {
			t.Errorf("%s restored as %s: %v", f.Source, f.Path, err)
		}
		redacted += n
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("restored\n%s\nwant every JSONL file of the corpus:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if redacted == 0 {
		t.Error("no restored line holds a redaction marker: the comparison of redacted lines went untested")
	}
	t.Logf("%d files restored, %d lines differing only inside redaction markers", len(res.Files), redacted)

	// Claude Code's folders: the corpus's manifest names the folder each
	// spotter session was in; their cwds were anonymised upstream
	// (/home/marco became /home/USER, the worktrees folder
	// spotter-worktrees).
	manifest, err := os.ReadFile(filepath.Join(dir, "MANIFEST.md"))
	if err != nil {
		t.Skip("no MANIFEST.md:", err)
	}
	origin := regexp.MustCompile("`(claude/[^`]+\\.jsonl)`[^\n]*originally ~/\\.claude/projects/([^/ ]+)/")
	checked := 0
	for _, m := range origin.FindAllStringSubmatch(string(manifest), -1) {
		for _, f := range res.Files {
			if f.Source != filepath.Join(dir, m[1]) {
				continue
			}
			folder := filepath.Base(filepath.Dir(f.Path))
			if g := strings.Replace(folder, "-home-USER-", "-home-marco-", 1); g != m[2] {
				t.Errorf("%s restored in projects/%s; Claude Code had it in projects/%s", m[1], folder, m[2])
			}
			if filepath.Base(f.Path) != f.SessionID+".jsonl" {
				t.Errorf("%s restored as %s, want %s.jsonl", m[1], f.Path, f.SessionID)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Error("no restored file's folder was checked against the manifest")
	}
}

// redactionMarker is pos-scrub's redaction marker.
var redactionMarker = regexp.MustCompile(`\[REDACTED:[a-z0-9-]+:[0-9a-f]{8}\]`)

// sameButMarkers checks that restored differs from orig only inside
// redaction markers: line for line, each restored line is its original
// with some non-empty stretches replaced by markers. It returns how many
// lines differ.
func sameButMarkers(orig, restored []byte) (int, error) {
	ol, rl := bytes.Split(orig, []byte("\n")), bytes.Split(restored, []byte("\n"))
	if len(ol) != len(rl) {
		return 0, fmt.Errorf("%d lines, want %d", len(rl)-1, len(ol)-1)
	}
	n := 0
	for i := range ol {
		if bytes.Equal(ol[i], rl[i]) {
			continue
		}
		locs := redactionMarker.FindAllIndex(rl[i], -1)
		if len(locs) == 0 {
			return n, fmt.Errorf("line %d differs and holds no redaction marker", i+1)
		}
		// The original must read as the restored line's text between the
		// markers, in order, each marker standing for at least one byte.
		var re strings.Builder
		re.WriteString(`\A(?s)`)
		at := 0
		for _, l := range locs {
			re.WriteString(regexp.QuoteMeta(string(rl[i][at:l[0]])))
			re.WriteString(`.+?`)
			at = l[1]
		}
		re.WriteString(regexp.QuoteMeta(string(rl[i][at:])))
		re.WriteString(`\z`)
		if !regexp.MustCompile(re.String()).Match(ol[i]) {
			return n, fmt.Errorf("line %d differs outside its redaction markers", i+1)
		}
		n++
	}
	return n, nil
}

// TestSameButMarkers holds the comparison of redacted lines to what it
// must refuse.
func TestSameButMarkers(t *testing.T) {
	m := "[REDACTED:secret:0a1b2c3d]"
	for _, c := range []struct {
		orig, restored string
		ok             bool
	}{
		{`{"a":"x"}` + "\n", `{"a":"x"}` + "\n", true},
		{`{"k":"hunter2hunter2"}` + "\n", `{"k":"` + m + `"}` + "\n", true},
		{`{"k":"a s1 b s2"}` + "\n", `{"k":"a ` + m + ` b ` + m + `"}` + "\n", true},
		{`{"k":"hunter2"}` + "\n", `{"K":"` + m + `"}` + "\n", false},        // a change outside the marker
		{`{"k":"hunter2"}` + "\n", `{"k":"` + m + `" }` + "\n", false},       // one after it
		{`{"k":""}` + "\n", `{"k":"` + m + `"}` + "\n", false},               // a marker standing for nothing
		{`{"k":"x"}` + "\n", `{"k":"y"}` + "\n", false},                      // no marker
		{`{"k":"x"}` + "\n", `{"k":"x"}` + "\n" + `{"k":"x"}` + "\n", false}, // a line more
		{`{"k":"x"}` + "\n" + `{}` + "\n", `{"k":"x"}` + "\n", false},        // a line fewer
	} {
		_, err := sameButMarkers([]byte(c.orig), []byte(c.restored))
		if (err == nil) != c.ok {
			t.Errorf("%q vs %q: %v, want ok=%v", c.orig, c.restored, err, c.ok)
		}
	}
}

// TestRestoreReportsMissing restores a transcript holding what the raw
// layer cannot: a line that is not JSON, a blank line, a carriage return,
// a byte order mark. Each is named; the rest is restored in order; an
// existing file is replaced only with Force.
func TestRestoreReportsMissing(t *testing.T) {
	tmp := t.TempDir()
	root := filepath.Join(tmp, "claude", "projects", "-home-dev-x")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	line := func(uuid, text string) string {
		return `{"type":"user","uuid":"` + uuid + `","sessionId":"s-1","cwd":"/home/dev/x_y","timestamp":"2026-03-01T10:00:0` +
			uuid[len(uuid)-1:] + `Z","message":{"role":"user","content":"` + text + `"}}`
	}
	orig := "\xEF\xBB\xBF" + line("u1", "one") + "\n" + line("u2", "two") + "\r\n" + "not json\n" + "\n" + line("u3", "three") + "\n"
	if err := os.WriteFile(filepath.Join(root, "s-1.jsonl"), []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	lake := filepath.Join(tmp, "lake")
	p := querytest.Pipeline{User: "dev", Machine: "box", Now: func() time.Time { return querytest.Now },
		Key: []byte("querytest key of 32 bytes or more"), SkipBad: true}
	if err := p.Run(context.Background(), filepath.Join(tmp, "claude"), lake); err != nil {
		t.Fatal(err)
	}
	db, err := query.Open(context.Background(), lake, query.LazyViews())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := filepath.Join(tmp, "out")
	restore := func(force bool) (*query.RestoreResult, []string) {
		var notes []string
		res, err := db.Restore(context.Background(), query.RestoreOptions{Session: "s-1", Dir: out, Force: force,
			Note: func(n query.RestoreNote) {
				if n.Missing {
					notes = append(notes, strings.TrimPrefix(n.String(), n.Source))
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		return res, notes
	}
	res, notes := restore(false)
	if len(res.Files) != 1 || res.Files[0].Exists {
		t.Fatalf("files %+v, want one written", res.Files)
	}
	f := res.Files[0]
	if want := filepath.Join(out, "projects", "-home-dev-x-y", "s-1.jsonl"); f.Path != want {
		t.Errorf("restored as %s, want %s", f.Path, want)
	}
	got, _ := os.ReadFile(f.Path)
	if want := line("u1", "one") + "\n" + line("u2", "two") + "\n" + line("u3", "three") + "\n"; string(got) != want {
		t.Errorf("restored\n%s\nwant\n%s", got, want)
	}
	wantNotes := []string{
		":1: 3 bytes of the line are not in the raw layer (a byte order mark, blanks or a carriage return): left out",
		":3: lines 3-4 are not in the raw layer (not JSON, or blank, when read): left out",
	}
	if !slices.Equal(notes, wantNotes) || f.Missing != 2 {
		t.Errorf("notes (%d missing):\n%s\nwant\n%s", f.Missing, strings.Join(notes, "\n"), strings.Join(wantNotes, "\n"))
	}

	// An existing file is left as it is, then replaced with Force.
	if err := os.WriteFile(f.Path, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, _ := restore(false); !res.Files[0].Exists {
		t.Error("an existing file was not reported as such")
	}
	if b, _ := os.ReadFile(f.Path); string(b) != "mine\n" {
		t.Errorf("an existing file was replaced without Force: %q", b)
	}
	if res, _ := restore(true); res.Files[0].Exists {
		t.Error("Force did not replace the file")
	}
	if b, _ := os.ReadFile(f.Path); !bytes.Equal(b, got) {
		t.Errorf("Force wrote %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(out, ".pos-restore-*")); len(left) > 0 {
		t.Errorf("temporary folders left: %v", left)
	}
}

// TestClaudeProjectDir holds the folder names to those Claude Code's own
// function (cwd.replace(/[^a-zA-Z0-9]/g, "-"), cut at 200 with a hash)
// gives, computed with node.
func TestClaudeProjectDir(t *testing.T) {
	long := "/home/dev/" + strings.Repeat("very-long-segment/", 12) + "end"
	for _, c := range []struct{ cwd, want string }{
		{"/home/marco/projects/spotter-worktrees/spotter-gqc", "-home-marco-projects-spotter-worktrees-spotter-gqc"},
		{"/home/u/my_project.v2", "-home-u-my-project-v2"},
		{"/tmp/café 😀/x", "-tmp-caf-----x"}, // é one UTF-16 unit, 😀 two
		{long, "-home-dev-very-long-segment-very-long-segment-very-long-segment-very-long-segment-very-long-segment-very-long-segment-very-long-segment-very-long-segment-very-long-segment-very-long-segment-very-long--6mxec8"},
		{"/" + strings.Repeat("😀", 120), strings.Repeat("-", 200) + "-fp2zqh"},
	} {
		if got := query.ClaudeProjectDir(c.cwd); got != c.want {
			t.Errorf("ClaudeProjectDir(%q) = %q, want %q", c.cwd, got, c.want)
		}
	}
}
