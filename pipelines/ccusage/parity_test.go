// Package ccusage_test runs the ccusage parity check (parity.sh) when npm
// and the shared corpus are available.
package ccusage_test

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/internal/corpus"
)

// TestParity installs ccusage 20.0.24 from the npm registry (once, into the
// user's cache), runs it and pos on every Claude folder of the corpus and on
// the probe fixture, and requires equal tokens per day and model, costs
// within 0.5 %, and every difference explained by the lines that cause it;
// on the corpus, in UTC and in America/Los_Angeles and Asia/Tokyo.
func TestParity(t *testing.T) {
	if os.Getenv("CCUSAGE_BIN") == "" {
		if _, err := exec.LookPath("npm"); err != nil {
			t.Skip("skipped: npm is not installed, so ccusage cannot be installed (apt-get install npm, or set CCUSAGE_BIN)")
		}
	}
	corpus.Platform(t, claudecode.Name) // the parity check needs the real Claude folders
	abs := corpus.Path()
	cmd := exec.Command("bash", "parity.sh")
	cmd.Env = append(os.Environ(), "POS_CORPUS="+abs)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
		t.Skipf("skipped: ccusage could not be installed from the npm registry:\n%s", errb.String())
	}
	report := out.String()
	t.Log("\n" + report[strings.LastIndex(report, "\nccusage "):])
	if err != nil {
		t.Fatalf("parity.sh: %v\n%s\n%s", err, report, errb.String())
	}
	for _, folder := range []string{"claude/dkimuson", "claude/gabriel", "claude/spotter", "testdata/probe"} {
		if !strings.Contains(report, "ok   ") || !strings.Contains(report, folder+":") {
			t.Errorf("no result for %s", folder)
		}
	}
	// The whole corpus in a zone far west and one far east of UTC: the
	// same tokens and costs per day and model as ccusage's --timezone,
	// with rows on other days than in UTC (so a zone ignored would fail).
	for _, zone := range []string{"America/Los_Angeles", "Asia/Tokyo"} {
		re := regexp.MustCompile(`(?m)^ok   \S*/claude in ` + regexp.QuoteMeta(zone) + `: [0-9]+ day×model rows: ([0-9]+) equal, 0 differ by explained lines, 0 unexplained; .*; ([0-9]+) moved from their UTC day$`)
		m := re.FindStringSubmatch(report)
		if m == nil {
			t.Errorf("no passing result for the corpus in %s", zone)
			continue
		}
		if m[2] == "0" {
			t.Errorf("the corpus in %s: no day×model row moved from its UTC day, so the zone is not tested", zone)
		}
	}
	// The probe pins how ccusage 20.0.24 counts: each documented
	// difference shows up, explained by its line.
	for _, want := range []string{
		"pos keeps p1/b.jsonl:2; ccusage keeps p1/b.jsonl:1",
		"pos dates by p1/c.jsonl:1 (2025-01-03T23:59:59Z); ccusage by p1/c.jsonl:2 (2025-01-04T00:00:01Z)",
		`version "dev" is not semver`,
		"empty model",
		"p1/f.jsonl:1; p1/f.jsonl:2",
		"p1/j.jsonl:1; p1/j.jsonl:3",
		"p1/p1.jsonl:1; p2/p2.jsonl:1",
		"agent_progress",
		"p1/z.jsonl:1",
		"1 requests above 200k prompt tokens, e.g. p1/d.jsonl:1",
		"pipelines/ccusage/testdata/probe: 29 day×model rows: 19 equal, 10 differ by explained lines, 0 unexplained",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the probe's report lacks %q", want)
		}
	}
	// A progress copy of a subagent without a transcript counts alike.
	if strings.Contains(report, "p1/q.jsonl") {
		t.Errorf("p1/q.jsonl (a progress copy, no transcript) counted differently:\n%s", report)
	}
}
