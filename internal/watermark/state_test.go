package watermark

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/pos-lake/pos/schema"
)

// The state file is written by the record encoder and read by sonic:
// encoding/json reads back the same watermarks, and so does LoadState.
func TestStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	marks := []*schema.Checkpoint{
		{Platform: "claude_code", Path: "/h/.claude/projects/p/a.jsonl", Size: 100, Resume: 40, Seen: 120,
			Mtime: time.Date(2026, 11, 24, 18, 5, 42, 826123456, time.UTC), Inode: 5398970, Head: "5dc218b81b26d56f", Lines: 3,
			Context: map[string]string{"session": "s-1", "project": "p \"quoted\" \u2028 é", "cwd": `C:\dir`}},
		{Platform: "codex", Path: "/h/.codex/sessions/ü ñ\t.jsonl", Size: 7},
		{Platform: "push", Path: "", Size: 0, Resume: 0, Seen: 0},
	}
	s := NewState()
	for _, c := range marks {
		s.Put(c)
	}
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	var viaStd []*schema.Checkpoint
	if err := json.Unmarshal(b, &viaStd); err != nil {
		t.Fatalf("encoding/json cannot read the state file: %v\n%s", err, b)
	}
	got, err := LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != len(marks) || len(viaStd) != len(marks) {
		t.Fatalf("%d and %d watermarks back, want %d", got.Len(), len(viaStd), len(marks))
	}
	byKey := map[string]*schema.Checkpoint{}
	for _, c := range viaStd {
		byKey[c.Platform+c.Path] = c
	}
	for _, want := range marks {
		for name, c := range map[string]*schema.Checkpoint{"LoadState": got.Get(want.Platform, want.Path), "encoding/json": byKey[want.Platform+want.Path]} {
			if !reflect.DeepEqual(c, want) && !(c != nil && c.Mtime.Equal(want.Mtime) && eqButMtime(c, want)) {
				t.Errorf("%s: %+v, want %+v", name, c, want)
			}
		}
	}
}

func eqButMtime(a, b *schema.Checkpoint) bool {
	x, y := *a, *b
	x.Mtime, y.Mtime = time.Time{}, time.Time{}
	return reflect.DeepEqual(x, y)
}

// Any state file either fails to load with an error or loads, saves and
// loads again to the same watermarks.
func FuzzState(f *testing.F) {
	f.Add([]byte(`[{"platform":"claude_code","path":"/h/a.jsonl","size":10,"resume":5,"seen":10,"mtime":"2026-01-02T03:04:05.123456789Z","inode":7,"head":"ab","lines":1,"context":{"session":"s"}}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{"platform":"x","path":"\u00e9\ud800","size":-1}]`))
	f.Add([]byte(`{"not":"a list"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, StateFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := LoadState(dir)
		if err != nil {
			return
		}
		out := t.TempDir()
		if err := s.Save(out); err != nil {
			t.Fatal(err)
		}
		again, err := LoadState(out)
		if err != nil {
			t.Fatalf("a saved state does not load: %v", err)
		}
		if again.Len() != s.Len() {
			t.Fatalf("%d watermarks, then %d", s.Len(), again.Len())
		}
		for k, c := range s.marks {
			d := again.marks[k]
			if d == nil {
				// The key came from a path or platform the file held as
				// invalid UTF-8, which saving makes valid: it is the same
				// watermark under the cleaned-up key.
				continue
			}
			if !eqButMtime(c, d) || !c.Mtime.Equal(d.Mtime) {
				t.Fatalf("%+v, then %+v", c, d)
			}
		}
	})
}

// TestStateFileKeepsNoLocation: the state and lake a checkpoint record
// carries (where its watermarks are committed) are not kept in the state
// file: a lake moved elsewhere keeps its watermarks.
func TestStateFileKeepsNoLocation(t *testing.T) {
	dir := t.TempDir()
	marks := NewState()
	c := &schema.Checkpoint{Platform: "p", Path: "/f", Size: 3, Seen: 3, State: "/st", Lake: "/lake"}
	marks.Put(c)
	if c.State != "/st" || c.Lake != "/lake" {
		t.Fatal("Put changed the record's checkpoint")
	}
	for range 2 { // the state file, then the journal
		if err := MergeState(dir, marks); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{StateFile, JournalFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(`"state"`)) || bytes.Contains(b, []byte(`"lake"`)) {
			t.Errorf("%s keeps a location: %s", f, b)
		}
	}
	s, err := LoadState(dir)
	if err != nil || s.Get("p", "/f") == nil || s.Get("p", "/f").Size != 3 {
		t.Fatalf("loaded %v %v", s, err)
	}
}

// With KeepParsed (a resident pos-sync), a state file with the same bytes
// is not parsed again, yet each load gets watermarks of its own to change,
// and a file with other bytes is read anew.
func TestKeepParsed(t *testing.T) {
	KeepParsed()
	t.Cleanup(func() {
		parsed.Lock()
		parsed.on, parsed.files = false, nil
		parsed.Unlock()
	})
	dir := t.TempDir()
	s := NewState()
	s.Put(&schema.Checkpoint{Platform: "claude_code", Path: "/h/a.jsonl", Size: 10, Context: map[string]string{"session": "s1"}})
	s.Put(&schema.Checkpoint{Platform: "claude_code", Path: "/h/b.jsonl", Size: 20})
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	first, err := LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(parsed.files); n != 1 {
		t.Fatalf("%d state files kept, want 1", n)
	}
	a := first.Get("claude_code", "/h/a.jsonl")
	a.Size, a.Context["session"] = 99, "changed"
	again, err := LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c := again.Get("claude_code", "/h/a.jsonl"); c == nil || c.Size != 10 || c.Context["session"] != "s1" {
		t.Fatalf("a second load sees the first's changes: %+v", c)
	}
	if again.Len() != 2 {
		t.Fatalf("second load: %d watermarks, want 2", again.Len())
	}
	// The very same file (inode, size, time) is not even read again.
	reads := stateReads.Load()
	if _, err := LoadState(dir); err != nil || stateReads.Load() != reads {
		t.Fatalf("an unchanged state file was read again (%v)", err)
	}
	// A file saved again with the same size and time is another file.
	fi, _ := os.Stat(filepath.Join(dir, StateFile))
	s.Put(&schema.Checkpoint{Platform: "claude_code", Path: "/h/b.jsonl", Size: 21})
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(filepath.Join(dir, StateFile)); fi2.Size() != fi.Size() {
		t.Fatalf("sizes %d, %d: the test wants the same size", fi.Size(), fi2.Size())
	}
	os.Chtimes(filepath.Join(dir, StateFile), fi.ModTime(), fi.ModTime())
	if st, err := LoadState(dir); err != nil || st.Get("claude_code", "/h/b.jsonl").Size != 21 {
		t.Fatalf("a state file replaced with one of the same size and time: %v", err)
	}
	// Other bytes (a journal folded in): read anew.
	s.Put(&schema.Checkpoint{Platform: "claude_code", Path: "/h/a.jsonl", Size: 11, Context: map[string]string{"session": "s1"}})
	s.Put(&schema.Checkpoint{Platform: "codex", Path: "/h/c.jsonl", Size: 5})
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	third, err := LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c := third.Get("claude_code", "/h/a.jsonl"); c == nil || c.Size != 11 || third.Len() != 3 {
		t.Fatalf("after the state file changed: %+v, %d watermarks; want size 11, 3", c, third.Len())
	}
	// A damaged file is still an error naming it, not the last good one.
	os.WriteFile(filepath.Join(dir, StateFile), []byte("[{\"platform\":"), 0o600)
	if _, err := LoadState(dir); err == nil || !bytes.Contains([]byte(err.Error()), []byte(StateFile)) {
		t.Errorf("a damaged state file: %v, want an error naming it", err)
	}
}
