package scrub

import (
	"strings"
	"testing"

	"github.com/pos-lake/pos/schema"
)

// Every record pos-scrub writes says it passed pos-scrub and how: a
// record in which nothing was found is written as read with the mark as
// its last member; a changed one is encoded with it; a record scrubbed
// again keeps the stronger mark and is then written as read; --off redacts
// nothing and says so.
func TestRecordsAreMarked(t *testing.T) {
	plain := `{"schema":"pos/1","kind":"raw",  "raw":{"n":1},"id":"r1"}`
	nested := `{"schema":"pos/1","kind":"raw","raw":{"scrub":"x"},"id":"r2"}`
	secret := `{"schema":"pos/1","kind":"message","id":"m1","text":"key ` + ghp + `"}`
	other := `{"kind":"future" }`
	in := plain + "\n" + secret + "\n" + other + "\n" + nested + "\n"
	marks := func(out string) []string {
		var got []string
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			var r schema.Record
			if err := schema.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%v: %s", err, l)
			}
			got = append(got, r.ScrubMark())
		}
		return got
	}
	for _, tc := range []struct {
		opt  Options
		mark string
	}{{Options{}, schema.ScrubSecrets}, {Options{PII: true}, schema.ScrubPII}, {Options{Off: true}, schema.ScrubOff}} {
		s := newScrubber(t, tc.opt)
		out := scrubLines(t, s, in)
		lines := strings.Split(out, "\n")
		if got := marks(out); strings.Join(got, ",") != strings.Repeat(tc.mark+",", 3)+tc.mark {
			t.Errorf("%+v: marks %v", tc.opt, got)
		}
		// A record with nothing to redact: as read, the mark spliced in.
		if want := strings.TrimSuffix(plain, "}") + `,"scrub":"` + tc.mark + `"}`; lines[0] != want {
			t.Errorf("%+v: %s, want %s", tc.opt, lines[0], want)
		}
		if want := `{"kind":"future" ,"scrub":"` + tc.mark + `"}`; lines[2] != want {
			t.Errorf("%+v: %s, want %s", tc.opt, lines[2], want)
		}
		// A member named scrub inside the raw record is not the mark.
		if !strings.Contains(lines[3], `"raw":{"scrub":"x"}`) {
			t.Errorf("%+v: %s", tc.opt, lines[3])
		}
		if tc.opt.Off != strings.Contains(lines[1], ghp) {
			t.Errorf("%+v: %s", tc.opt, lines[1])
		}
		// Scrubbed again: a fixed point.
		if again := scrubLines(t, s, out); again != out {
			t.Errorf("%+v: not a fixed point:\n%s\n%s", tc.opt, out, again)
		}
	}
	// Scrubbed with --pii, then without: the stronger mark stays, and the
	// line is written as read.
	pii := scrubLines(t, newScrubber(t, Options{PII: true}), in)
	if again := scrubLines(t, newScrubber(t, Options{}), pii); again != pii {
		t.Errorf("pii then secrets:\n%s\n%s", pii, again)
	}
	// Scrubbed with --off, then for real: the mark is raised.
	off := scrubLines(t, newScrubber(t, Options{Off: true}), in)
	if got := marks(scrubLines(t, newScrubber(t, Options{}), off)); strings.Join(got, ",") != "secrets,secrets,secrets,secrets" {
		t.Errorf("off then secrets: %v", got)
	}
	// Scrubber.Record marks too.
	var r schema.Record
	schema.Unmarshal([]byte(plain), &r)
	if _, err := newScrubber(t, Options{}).Record(&r); err != nil || r.ScrubMark() != schema.ScrubSecrets {
		t.Errorf("Record: %q, %v", r.ScrubMark(), err)
	}
}
