package query

import (
	"context"
	"fmt"

	"github.com/pos-lake/pos/load/rollup"
)

// RecordedPlatform is the platform whose sessions record their own cost:
// Cursor's composer data keeps usageData's costInCents, which
// pos-extract sums into the session's meta as cost_cents.
const RecordedPlatform = "cursor"

// recordedCost is a session's own recorded cost and the tokens and
// messages of its assistant messages in the whole lake, over which the
// cost is spread.
type recordedCost struct {
	usd              float64
	tokens, messages int64
}

// recordedCosts reads, for the sessions of RecordedPlatform that record a
// cost, that cost and their assistant messages' tokens.
func (d *DB) recordedCosts(ctx context.Context) (map[string]recordedCost, error) {
	if err := d.need(ctx, "sessions", "messages"); err != nil {
		return nil, err
	}
	rows, err := d.db.QueryContext(ctx, `
SELECT s.session_id, s.cents, coalesce(m.tokens, 0), coalesce(m.messages, 0)
FROM (
  SELECT session_id, max(TRY_CAST(json_extract_string(meta, '$.cost_cents') AS DOUBLE)) AS cents
  FROM sessions WHERE platform = '`+RecordedPlatform+`' GROUP BY 1
) s
LEFT JOIN (
  SELECT session_id, CAST(sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0) + coalesce(cache_creation_tokens, 0) + coalesce(cache_read_tokens, 0)) AS BIGINT) AS tokens,
    count(*) AS messages
  FROM messages WHERE platform = '`+RecordedPlatform+`' AND role = 'assistant' AND coalesce(model, '') <> '<synthetic>' GROUP BY 1
) m USING (session_id)
WHERE s.cents IS NOT NULL AND s.cents >= 0`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]recordedCost{}
	for rows.Next() {
		var id string
		var c recordedCost
		if err := rows.Scan(&id, &c.usd, &c.tokens, &c.messages); err != nil {
			return nil, err
		}
		c.usd /= 100
		out[id] = c
	}
	return out, rows.Err()
}

// recordedShare is the part of its session's recorded cost a row of
// unpriced messages bears: the session's cost spread over its messages
// by tokens (by messages when they have none).
func recordedShare(c recordedCost, r *rollup.RollupRow) float64 {
	if c.tokens > 0 {
		return c.usd * float64(r.Input+r.Output+r.CacheCreation+r.CacheRead) / float64(c.tokens)
	}
	if c.messages > 0 {
		return c.usd * float64(r.Messages) / float64(c.messages)
	}
	return 0
}

// recordedNote says how many messages were priced by their session's
// recorded cost.
func recordedNote(n int64) string {
	return fmt.Sprintf("%d %s messages without a price bear their session's own recorded cost (Cursor's cost_cents), spread by tokens; it is in cost, in no cost component", n, RecordedPlatform)
}
