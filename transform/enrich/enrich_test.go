package enrich

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/schema"
)

func tool(name, input string) schema.Tool {
	return schema.Tool{Name: name, Input: json.RawMessage(input)}
}

func TestFileRefsAcrossPlatforms(t *testing.T) {
	m := &schema.Record{ID: "m", Cwd: "/home/dev/app", Tools: []schema.Tool{
		tool("Read", `{"file_path":"/home/dev/app/main.go"}`),                                   // Claude Code
		tool("Edit", `{"file_path":"/home/dev/app/main.go","old_string":"a","new_string":"b"}`), // Claude Code
		tool("MultiEdit", `{"file_path":"/home/dev/app/x.go","edits":[{"old_string":"a"}]}`),
		tool("Glob", `{"pattern":"**/*.go","path":"/home/dev/app"}`),
		tool("NotebookEdit", `{"notebook_path":"/home/dev/app/n.ipynb"}`),
		tool("read_file", `{"path":"src/app.ts"}`),         // Cline, relative to cwd
		tool("write_to_file", `{"path":"src/new.ts"}`),     // Cline
		tool("replace_in_file", `{"path":"src/app.ts"}`),   // Cline
		tool("edit_file", `{"target_file":"lib/util.py"}`), // Cursor
		tool("apply_patch", `"*** Begin Patch\n*** Update File: a/b.rs\n@@\n*** Add File: c.rs\n*** Delete File: d.rs\n*** End Patch"`),
		tool("Bash", `{"command":"go test ./..."}`),
	}, Files: []string{"README.md"}}
	var got []string
	for _, f := range FileRefs(testFast, m) {
		got = append(got, f.Action+" "+f.Path)
	}
	want := []string{
		"read /home/dev/app/main.go", "edit /home/dev/app/main.go", "edit /home/dev/app/x.go", "search /home/dev/app",
		"edit /home/dev/app/n.ipynb", "read /home/dev/app/src/app.ts", "write /home/dev/app/src/new.ts",
		"edit /home/dev/app/src/app.ts", "edit /home/dev/app/lib/util.py",
		"edit /home/dev/app/a/b.rs", "write /home/dev/app/c.rs", "delete /home/dev/app/d.rs",
		"reference /home/dev/app/README.md",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A relative path under a Windows working directory joins in Windows
// style, so it is the same path as the absolute name of the same file.
func TestFileRefsWindowsCwd(t *testing.T) {
	m := &schema.Record{ID: "m", Cwd: `C:\Users\dev\proj\`, Tools: []schema.Tool{
		tool("read_file", `{"path":"src/main.go"}`),
		tool("write_to_file", `{"path":"C:\\Users\\dev\\proj\\src\\main.go"}`),
		tool("read_file", `{"path":".\\README.md"}`),
		tool("search_files", `{"path":"."}`),
		tool("read_file", `{"path":"..\\other\\x.txt"}`),
	}}
	var got []string
	for _, f := range FileRefs(testFast, m) {
		got = append(got, f.Action+" "+f.Path)
	}
	want := []string{`read C:\Users\dev\proj\src\main.go`, `write C:\Users\dev\proj\src\main.go`, `read C:\Users\dev\proj\README.md`,
		`search C:\Users\dev\proj`, `read C:\Users\dev\other\x.txt`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCommits(t *testing.T) {
	out := "[main 3f2a9c1] Fix the redirect\n 1 file changed\n" +
		"commit 0123456789abcdef0123456789abcdef01234567\nAuthor: x\n" +
		"To github.com:a/b.git\n   1a2b3c4..5d6e7f8  main -> main\n[feature/x (root-commit) abcdef0] init\n"
	got := Commits(out)
	want := []string{"3f2a9c1", "0123456789abcdef0123456789abcdef01234567", "5d6e7f8", "abcdef0"} // in the order git printed them
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
	if c := Commits("[1, 2] and a -> b"); c != nil {
		t.Fatalf("false commits %v", c)
	}
}

func TestTags(t *testing.T) {
	got := Tags(DefaultTagRules, "The go test run fails with a panic; fix the bug in the handler.", []string{"/x/main.go", "/x/Dockerfile"})
	want := []string{"golang", "docker", "debugging"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
	if got := Tags(DefaultTagRules, "a test", nil); len(got) != 0 {
		t.Fatalf("one weak word tagged: %v", got)
	}
}

func TestDecisions(t *testing.T) {
	text := "I looked at the options.\nLet's use DuckDB for the lake because it reads Parquet. Remember this: never write partial files!\n" +
		"```\nlet's use x // in code, ignored\n```\nThe architecture will maybe change.\nOk."
	got := Decisions(DefaultPatterns, text)
	if len(got) != 3 {
		t.Fatalf("%d found: %+v", len(got), got)
	}
	if got[0].Status != "decision" || got[0].Confidence != 0.9 || got[0].Patterns[0] != "lets_use" || !strings.HasPrefix(got[0].Text, "Let's use DuckDB") {
		t.Fatalf("first: %+v", got[0])
	}
	if got[1].Confidence != 1 || got[1].Patterns[0] != "remember_this" {
		t.Fatalf("second: %+v", got[1])
	}
	if got[2].Status != "candidate" || got[2].Confidence != 0.7 {
		t.Fatalf("third: %+v", got[2])
	}
	if Decisions(DefaultPatterns, "Nothing to see here. Just code.") != nil {
		t.Fatal("false decision")
	}
}

func BenchmarkDecisionsNoKeyword(b *testing.B) {
	text := strings.Repeat("Reading the file and running the tests now. ", 2000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Decisions(DefaultPatterns, text)
	}
}

// plainDecisions is Decisions with the prefilter it had before the keyword
// matcher: a strings.Contains per keyword over the lowered sentence.
func plainDecisions(text string) []Found {
	maybe := func(p *Pattern, lower string) bool {
		for _, k := range p.Keywords {
			if strings.Contains(lower, k) {
				return true
			}
		}
		return false
	}
	var out []Found
	res := make([]*regexp.Regexp, len(DefaultPatterns))
	for i, p := range DefaultPatterns {
		res[i] = regexp.MustCompile(p.Expr)
	}
	for _, s := range sentences(text) {
		ls := strings.ToLower(s)
		var f Found
		best := 0.0
		for i := range DefaultPatterns {
			p := &DefaultPatterns[i]
			if !maybe(p, ls) || !res[i].MatchString(s) {
				continue
			}
			best = max(best, p.Weight)
			f.Patterns = append(f.Patterns, p.Name)
		}
		if len(f.Patterns) == 0 {
			continue
		}
		f.Confidence = float64(int(min(1, best+0.05*float64(len(f.Patterns)-1))*100+0.5)) / 100
		if f.Confidence < CandidateAt {
			continue
		}
		f.Status = "candidate"
		if f.Confidence >= DecisionAt {
			f.Status = "decision"
		}
		f.Text = s
		out = append(out, f)
	}
	return out
}

// withoutSource clears what plainDecisions does not make.
func withoutSource(fs []Found) []Found {
	for i := range fs {
		fs[i].Source = ""
	}
	return fs
}

// FuzzDecisions holds Decisions to plainDecisions on any text.
func FuzzDecisions(f *testing.F) {
	for _, s := range []string{"Let's use DuckDB. Remember this!", "We DECIDED to go with X rather than Y.", "LET’S pick one\n```\nlet's use x\n```", "İ will use ſ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := Decisions(DefaultPatterns, text)
		for i := range got {
			// The sentence is the first of what its record carries,
			// cut the way a stage after pos-scrub cuts it.
			if s := excerpt.Sentence(got[i].Source, 1<<30); s != got[i].Text {
				t.Fatalf("%q: sentence %q, cut from its source %q: %q", text, got[i].Text, got[i].Source, s)
			}
			// What follows it, as a pack prints it: one line, cut, and
			// from the text after the sentence.
			for _, n := range []int{8, 300} {
				if a := After(text, excerpt.Sentence(got[i].Text, n), n); len(a) > n || strings.Contains(a, "\n") ||
					a != "" && !strings.Contains(text, strings.TrimSuffix(a, excerpt.Ellipsis)) {
					t.Fatalf("%q: after %q (%d bytes): %q", text, got[i].Text, n, a)
				}
			}
			got[i].Source = ""
		}
		if want := plainDecisions(text); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", text, got, want)
		}
	})
}

// TestDecisionsPrefilter holds the one-pass keyword prefilter to the plain
// one it replaced (a strings.Contains per keyword over the lowered text),
// on texts made of the patterns' words in any case, Unicode included.
func TestDecisionsPrefilter(t *testing.T) {
	words := []string{"Let's", "LET’S", "lets", "use", "go with", "decided", "to", "The approach", "is", "choosing",
		"over", "We'll", "going", "with", "architecture", "should", "pattern for this", "don't", "DO NOT", "because",
		"avoid", "this broke", "remember THAT", "note for the future", "our decision was", "prefers", "instead of",
		"rather than", "I will use", "é", "İ", "ſ", "\u212a", "x", ".", "\n", "```", " "}
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		var b strings.Builder
		for range 1 + r.IntN(30) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		text := b.String()
		if got, want := withoutSource(Decisions(DefaultPatterns, text)), plainDecisions(text); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", text, got, want)
		}
	}
	other := []Pattern{{"ship_it", `(?i)\bship it\b`, 0.9, []string{"Ship It"}}}
	if got := Decisions(other, "OK. We SHIP IT today."); len(got) != 1 || got[0].Patterns[0] != "ship_it" {
		t.Fatalf("a list of one's own: %+v", got)
	}
}
