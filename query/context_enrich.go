package query

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/pos-lake/pos/transform/enrich"
)

// Shares of a pack's budget that one session's decisions and errors may
// take at most: what does not fit is chosen by rank (see decisionsText).
const (
	decisionsShare = 5
	errorsShare    = 6
	recordsShare   = 10
	tasksShare     = 12
	// decisionAfterMax bounds the sentence printed after a decision.
	decisionAfterMax = 300
)

// enrichmentItems are what enrichment found in a session, as the smart
// pack carries it: the decisions stated (confidence 0.5 or more, once
// each, with the sentence that follows each in its message — what was
// done about it, or why —, the most certain and newest while they fit in
// maxDecisions tokens, in time order, priority 4), the files the tools changed
// (priority 4) and the files they only read (priority 6, after the later
// prompts). Each is one item of one line per entry, so a session's
// working set costs a few tokens per file.
func (d *DB) enrichmentItems(ctx context.Context, ref SessionRef, messages string, until time.Time, maxDecisions int) ([]ContextItem, error) {
	var items []ContextItem
	rows, err := d.db.QueryContext(ctx, `WITH d AS (
  SELECT ts, id, text, confidence, message_id FROM decisions
  WHERE platform = $1 AND session_id = $2 AND confidence >= 0.5 AND ts < $3
), m AS (
  SELECT id, any_value(text) AS text FROM `+messages+`
  WHERE platform = $1 AND session_id = $2 AND ts < $3 AND id IN (SELECT message_id FROM d)
  GROUP BY id
)
SELECT d.ts, d.text, d.confidence, coalesce(m.text, '') FROM d LEFT JOIN m ON m.id = d.message_id ORDER BY d.ts, d.id`,
		ref.Platform, ref.SessionID, until)
	if err != nil {
		return nil, sqlErr(err)
	}
	var found []foundDecision
	if err := eachRow(rows, func() error {
		var f foundDecision
		var ts sql.NullTime
		var message string
		if err := rows.Scan(&ts, &f.text, &f.conf, &message); err != nil {
			return err
		}
		f.ts = utc(ts)
		f.after = enrich.After(message, f.text, decisionAfterMax)
		found = append(found, f)
		return nil
	}); err != nil {
		return nil, err
	}
	text, more := decisionsTexts(found, maxDecisions)
	if text != "" {
		items = append(items, ContextItem{Kind: "decisions", Priority: 4, Title: "Decisions (confidence)", Text: text})
	}
	for _, t := range more {
		items = append(items, ContextItem{Kind: "decisions", Priority: overflowPriority, Title: "more", Text: t})
	}
	rows, err = d.db.QueryContext(ctx, `SELECT path, list_sort(list(DISTINCT action)), bool_or(action IN ('edit', 'write', 'delete')) AS changed
FROM file_refs WHERE platform = ? AND session_id = ? AND ts < ? AND action IN ('edit', 'write', 'delete', 'read', 'reference')
GROUP BY path ORDER BY min(ts), path`, ref.Platform, ref.SessionID, until)
	if err != nil {
		return nil, sqlErr(err)
	}
	var changed, read strings.Builder
	if err := eachRow(rows, func() error {
		var path string
		var actions []string
		var isChanged bool
		if err := rows.Scan(&path, (*stringList)(&actions), &isChanged); err != nil {
			return err
		}
		if isChanged {
			fmt.Fprintf(&changed, "- %s (%s)\n", path, strings.Join(actions, ", "))
		} else {
			fmt.Fprintf(&read, "- %s\n", path)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if changed.Len() > 0 {
		items = append(items, ContextItem{Kind: "files_changed", Priority: 4, Title: "Files changed", Text: changed.String()})
	}
	if read.Len() > 0 {
		items = append(items, ContextItem{Kind: "files_read", Priority: 6, Title: "Files read", Text: read.String()})
	}
	return items, nil
}
