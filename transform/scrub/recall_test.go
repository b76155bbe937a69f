package scrub

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/scrub/scrubtest"
)

const plantSeed = 20260211

var testKey = []byte("pos-scrub test key, 32 bytes or more")

// scrubPlanted scrubs the records of set as one stream and returns the
// scrubbed records, a line each in the order of set, and the run's report.
func scrubPlanted(t *testing.T, set []scrubtest.Instance) ([][]byte, Report) {
	t.Helper()
	var in bytes.Buffer
	for _, inst := range set {
		in.Write(inst.Line)
		in.WriteByte('\n')
	}
	var out bytes.Buffer
	rep, err := Scrub(context.Background(), &in, &out, Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != len(set) {
		t.Fatalf("%d records in, %d out", len(set), len(lines))
	}
	return lines, rep
}

// TestRecall plants every credential type of the labelled set in realistic
// records of every platform and measures how many pos-scrub redacts: an
// instance counts as found when none of its secrets survives in any form
// (as is, JSON-escaped once or twice, base64) anywhere in its record.
func TestRecall(t *testing.T) {
	seed := uint64(plantSeed)
	if v := os.Getenv("SCRUB_SEED"); v != "" {
		fmt.Sscan(v, &seed) // another draw of the same set
	}
	set, err := scrubtest.Plant("testdata/secrets/templates.ndjson", seed)
	if err != nil {
		t.Fatal(err)
	}
	lines, rep := scrubPlanted(t, set)
	type tally struct{ n, found int }
	byType := map[string]*tally{}
	byPlatform := map[string]*tally{}
	bySlot := map[string]*tally{}
	var missed []string
	shown := 0
	for i, inst := range set {
		var rec schema.Record
		if err := schema.Unmarshal(lines[i], &rec); err != nil {
			t.Fatalf("%s %s/%s: output is not a record: %v", inst.Type, inst.Platform, inst.Slot, err)
		}
		for _, m := range []map[string]*tally{byType, byPlatform, bySlot} {
			_ = m
		}
		for k, m := range map[string]map[string]*tally{inst.Type: byType, inst.Platform: byPlatform, inst.Slot: bySlot} {
			if m[k] == nil {
				m[k] = &tally{}
			}
			m[k].n++
		}
		if left := inst.Survivors(lines[i]); len(left) > 0 {
			missed = append(missed, fmt.Sprintf("%s in %s/%s", inst.Type, inst.Platform, inst.Slot))
			if show := os.Getenv("SCRUB_SHOW"); show != "" && strings.Contains(inst.Type, show) && shown < 6 {
				shown++
				t.Logf("MISSED %s %s/%s left %q snippet %q", inst.Type, inst.Platform, inst.Slot, left, inst.Snippet)
				if os.Getenv("SCRUB_SHOW_LINES") != "" {
					t.Logf("  in:  %s\n  out: %s", inst.Line, lines[i])
				}
			}
			continue
		}
		byType[inst.Type].found++
		byPlatform[inst.Platform].found++
		bySlot[inst.Slot].found++
	}
	total, found := 0, 0
	var b strings.Builder
	fmt.Fprintf(&b, "%-28s %6s %6s %8s\n", "type", "n", "found", "recall")
	for _, name := range scrubtest.Types() {
		tl := byType[name]
		if tl == nil {
			t.Errorf("type %s was not planted", name)
			continue
		}
		total += tl.n
		found += tl.found
		fmt.Fprintf(&b, "%-28s %6d %6d %7.1f%%\n", name, tl.n, tl.found, 100*float64(tl.found)/float64(tl.n))
	}
	for _, m := range []map[string]*tally{byPlatform, bySlot} {
		for _, k := range slices.Sorted(mapsKeys(m)) {
			fmt.Fprintf(&b, "  %-26s %6d %6d %7.1f%%\n", k, m[k].n, m[k].found, 100*float64(m[k].found)/float64(m[k].n))
		}
	}
	recall := float64(found) / float64(total)
	fmt.Fprintf(&b, "%-28s %6d %6d %7.2f%%   (%d types, %d redactions in %d records)\n", "overall", total, found, 100*recall,
		len(byType), rep.Redactions, rep.Changed)
	t.Log("\n" + b.String())
	if len(missed) > 0 {
		t.Logf("missed (%d): %s", len(missed), strings.Join(missed[:min(len(missed), 60)], "; "))
	}
	if len(byType) < 40 {
		t.Errorf("%d credential types, want at least 40", len(byType))
	}
	if recall < 0.99 {
		t.Errorf("recall %.2f%%, want at least 99%%", 100*recall)
	}
	for name, tl := range byType {
		if r := float64(tl.found) / float64(tl.n); r < 0.95 {
			t.Errorf("%s: recall %.1f%%, want at least 95%% per type", name, 100*r)
		}
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
