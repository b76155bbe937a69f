package teamlake

import (
	"fmt"
	"reflect"
	"testing"
)

// Files are sent in groups of up to the bound, in their order; a file
// larger than the bound is a group of its own.
func TestFileGroups(t *testing.T) {
	sizes := []int64{10, 20, 5, 40, 1, 1, 100, 3}
	var paths, keys []string
	for i, n := range sizes {
		paths = append(paths, fmt.Sprint("f", i))
		keys = append(keys, fmt.Sprintf("indexed/t/platform=a b/date=d/f%d.parquet %d", i, n))
	}
	var got [][]string
	for _, g := range fileGroups(paths, keys, 40) {
		if len(g.paths) != len(g.keys) {
			t.Fatalf("group %v: %d keys", g.paths, len(g.keys))
		}
		got = append(got, g.paths)
	}
	want := [][]string{{"f0", "f1", "f2"}, {"f3"}, {"f4", "f5"}, {"f6"}, {"f7"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups %v, want %v", got, want)
	}
	if g := fileGroups(nil, nil, 40); len(g) != 0 {
		t.Errorf("no files: %v", g)
	}
}
