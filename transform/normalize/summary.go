package normalize

import "fmt"

// Add adds the counts of s to t: the totals of a run over several inputs.
func (t *Stats) Add(s Stats) {
	t.In += s.In
	t.Out += s.Out
	t.Skipped += s.Skipped
	t.Messages += s.Messages
	t.Merged += s.Merged
	t.Replays += s.Replays
	t.Context += s.Context
	t.Advisor += s.Advisor
	t.Raw += s.Raw
	t.Exchanges += s.Exchanges
	t.Sessions += s.Sessions
	t.Documents += s.Documents
	t.FileRefs += s.FileRefs
	t.Decisions += s.Decisions
}

// Summary says what a run read and wrote, on one line, for a person
// (pos-normalize prints it on stderr).
func (t Stats) Summary() string {
	advisor := ""
	if t.Advisor > 0 {
		advisor = fmt.Sprintf(", %d advisor calls", t.Advisor)
	}
	return fmt.Sprintf("%d records in, %d out: %d messages (%d lines merged, %d replays dropped, %d context lines of earlier runs%s), %d exchanges, %d sessions, %d documents, %d file refs, %d decisions, %d raw",
		t.In, t.Out, t.Messages, t.Merged, t.Replays, t.Context, advisor, t.Exchanges, t.Sessions, t.Documents,
		t.FileRefs, t.Decisions, t.Raw)
}
