package watermark

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/schema"
)

func marksOf(cs ...*schema.Checkpoint) *State {
	s := NewState()
	for _, c := range cs {
		s.Put(c)
	}
	return s
}

func mark(path string, size int64) *schema.Checkpoint {
	return &schema.Checkpoint{Platform: "claude_code", Path: path, Size: size, Resume: size, Seen: size, Lines: size / 10}
}

// sizes reads dir's state back as path -> size.
func sizes(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	s, err := LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, c := range s.marks {
		out[c.Path] = c.Size
	}
	return out
}

// A commit to a state that has a file appends to the journal; a load reads
// the file, then the journal, the later line winning; once the journal
// outgrows a quarter of the file (and journalMin), both are folded into a
// new file and the journal is gone.
func TestStateJournal(t *testing.T) {
	dir := t.TempDir()
	var first []*schema.Checkpoint
	for i := range 2000 {
		first = append(first, mark(fmt.Sprintf("/h/p/%04d.jsonl", i), 100))
	}
	if err := MergeState(dir, marksOf(first...)); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, StateFile)
	journal := filepath.Join(dir, JournalFile)
	if _, err := os.Stat(journal); err == nil {
		t.Fatal("the first commit wrote a journal, not the state file")
	}
	before, _ := os.ReadFile(base)

	if err := MergeState(dir, marksOf(mark("/h/p/0001.jsonl", 200), mark("/h/p/new.jsonl", 5))); err != nil {
		t.Fatal(err)
	}
	if err := MergeState(dir, marksOf(mark("/h/p/0001.jsonl", 300))); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(base); string(after) != string(before) {
		t.Fatal("a small commit rewrote the state file")
	}
	got := sizes(t, dir)
	if len(got) != 2001 || got["/h/p/0001.jsonl"] != 300 || got["/h/p/new.jsonl"] != 5 || got["/h/p/0002.jsonl"] != 100 {
		t.Fatalf("%d marks; 0001: %d, new: %d, 0002: %d", len(got), got["/h/p/0001.jsonl"], got["/h/p/new.jsonl"], got["/h/p/0002.jsonl"])
	}

	// Commits until the journal is folded.
	for round := 0; ; round++ {
		if round > 200 {
			t.Fatal("the journal was never folded into the state file")
		}
		var batch []*schema.Checkpoint
		for i := range 50 {
			batch = append(batch, mark(fmt.Sprintf("/h/p/%04d.jsonl", (round*50+i)%2000), int64(1000+round)))
		}
		if err := MergeState(dir, marksOf(batch...)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(journal); err != nil {
			after, _ := os.ReadFile(base)
			if string(after) == string(before) {
				t.Fatal("the journal is gone but the state file is the old one")
			}
			want := int64(1000 + round)
			if got := sizes(t, dir); got[fmt.Sprintf("/h/p/%04d.jsonl", (round*50)%2000)] != want || len(got) != 2001 {
				t.Fatalf("after folding: %d marks, want the last round's size %d", len(got), want)
			}
			break
		}
		if fi, _ := os.Stat(journal); fi.Size() > max(int64(len(before))/4, journalMin) {
			t.Fatalf("journal of %d bytes for a state file of %d", fi.Size(), len(before))
		}
	}
}

// A journal line cut short (its run stopped while appending) is not a
// commit; a damaged complete line is an error naming the file and line.
func TestStateJournalDamage(t *testing.T) {
	dir := t.TempDir()
	if err := MergeState(dir, marksOf(mark("/a", 1))); err != nil {
		t.Fatal(err)
	}
	if err := MergeState(dir, marksOf(mark("/b", 2))); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(dir, JournalFile)
	f, err := os.OpenFile(journal, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"platform":"claude_code","path":"/c","si`)
	f.Close()
	if got := sizes(t, dir); len(got) != 2 || got["/b"] != 2 {
		t.Fatalf("with a cut last line: %v", got)
	}
	// The next commit cuts the partial line off and starts its own.
	if err := MergeState(dir, marksOf(mark("/d", 4))); err != nil {
		t.Fatal(err)
	}
	if got := sizes(t, dir); len(got) != 3 || got["/d"] != 4 || got["/c"] != 0 {
		t.Fatalf("a commit after a cut line: %v", got)
	}
	// A complete line that is not a watermark: an error naming the line.
	f, _ = os.OpenFile(journal, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("{\"platform\": 7}\n")
	f.Close()
	if _, err := LoadState(dir); err == nil || !strings.Contains(err.Error(), JournalFile+":3:") {
		t.Fatalf("a damaged line: %v", err)
	}
}

// Any journal, damaged or cut anywhere: LoadState does not panic, and it
// either reads it or names the journal's line; a commit after it appends a
// line that the next LoadState reads back, unless the damage is in a
// complete line before it.
func FuzzJournal(f *testing.F) {
	f.Add([]byte(`{"platform":"claude_code","path":"/a","size":1,"resume":1,"seen":1}` + "\n"))
	f.Add([]byte(`{"platform":"claude_code","path":"/a","si`))
	f.Add([]byte("\n\n{\"platform\": 7}\n"))
	f.Add([]byte(`{"platform":"x","path":"/b","context":{"tail":"a:b,c"}}` + "\n" + `[1]`))
	f.Fuzz(func(t *testing.T, journal []byte) {
		dir := t.TempDir()
		if err := MergeState(dir, marksOf(mark("/base", 1))); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, JournalFile), journal, 0o600); err != nil {
			t.Fatal(err)
		}
		_, loadErr := LoadState(dir)
		if loadErr != nil && !strings.Contains(loadErr.Error(), JournalFile+":") {
			t.Fatalf("an error that names no journal line: %v", loadErr)
		}
		if err := MergeState(dir, marksOf(mark("/fuzzed-commit", 9))); err != nil {
			if loadErr == nil {
				t.Fatalf("a commit after a readable journal: %v", err)
			}
			return
		}
		s, err := LoadState(dir)
		if loadErr == nil && err != nil {
			t.Fatalf("a readable journal, then a commit: %v", err)
		}
		if err == nil && s.Get("claude_code", "/fuzzed-commit") == nil {
			t.Fatal("the commit is not read back")
		}
	})
}
