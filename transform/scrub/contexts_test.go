package scrub

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pos-lake/pos/transform/scrub/scrubtest"
)

// TestKindsInContexts plants every credential kind of the generated set
// (scrubtest.Kinds: published formats with their checksums) in every
// context it is written in — .env and shell lines, JSON, YAML, TOML,
// Python, JavaScript and Go settings, Authorization headers, URLs,
// command lines, sentences ending in punctuation — in records of every
// platform, and measures recall: a snippet counts as found when no run of
// 20 characters of its credential's random part survives in its record.
func TestKindsInContexts(t *testing.T) {
	seed := uint64(plantSeed)
	if v := os.Getenv("SCRUB_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	snips := scrubtest.Snippets(seed)
	set, err := scrubtest.PlantSnippets("testdata/secrets/templates.ndjson", snips, 2)
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	for _, inst := range set {
		in.Write(inst.Line)
		in.WriteByte('\n')
	}
	var out bytes.Buffer
	if _, err := Scrub(context.Background(), &in, &out, Options{Key: testKey}); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != len(set) {
		t.Fatalf("%d records in, %d out", len(set), len(lines))
	}
	kinds := map[string]bool{}
	missedBy := map[string]int{}
	var missed []string
	for i, inst := range set {
		kind, _, _ := strings.Cut(inst.Type, "/")
		kinds[kind] = true
		if left := inst.RunSurvivors(lines[i]); len(left) > 0 {
			missedBy[inst.Type]++
			if len(missed) < 40 {
				missed = append(missed, fmt.Sprintf("%s in %s/%s: %q", inst.Type, inst.Platform, inst.Slot, inst.Snippet))
			}
		}
	}
	n := len(set)
	found := n
	for _, k := range missedBy {
		found -= k
	}
	recall := float64(found) / float64(n)
	t.Logf("%d kinds, %d snippets, %d records: recall %.2f%% (%d missed)", len(kinds), len(snips), n, 100*recall, n-found)
	for _, k := range slices.Sorted(mapsKeys(missedBy)) {
		t.Logf("  missed %-50s %d", k, missedBy[k])
	}
	for _, m := range missed {
		t.Log("  ", m)
	}
	if len(kinds) < 60 {
		t.Errorf("%d credential kinds, want at least 60", len(kinds))
	}
	if found != n {
		t.Errorf("recall %.2f%%: %d of %d planted credentials survive in part", 100*recall, n-found, n)
	}
}
