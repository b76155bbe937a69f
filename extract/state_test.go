package extract

import (
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
