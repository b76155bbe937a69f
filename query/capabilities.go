package query

import (
	"context"
	"database/sql"
	"math"

	"github.com/pos-lake/pos/extract/platform"
	"github.com/pos-lake/pos/extract/platforms"
)

// PlatformCapabilities sets what a platform's adapter declares (yes,
// partial, no) beside what the lake actually holds for it (counts, and
// shares in percent).
type PlatformCapabilities struct {
	Platform     string   `json:"platform"`
	Exchanges    string   `json:"exchanges"`
	Timestamps   string   `json:"timestamps"`
	Tokens       string   `json:"tokens"`
	Cost         string   `json:"cost"`
	Models       string   `json:"models"`
	ToolCalls    string   `json:"tool_calls"`
	FileContext  string   `json:"file_context"`
	Subagents    string   `json:"subagents"`
	Incremental  string   `json:"incremental"`
	Search       string   `json:"semantic_search"`
	Completeness string   `json:"completeness"`
	Limitations  []string `json:"limitations"`
	Messages     int64    `json:"messages"`          // messages in the lake
	Sessions     int64    `json:"sessions"`          // sessions in the lake
	ExchangeRows int64    `json:"exchange_count"`    // exchanges in the lake
	ExactTimes   float64  `json:"exact_ts_pct"`      // % of messages with an exact timestamp
	WithTokens   float64  `json:"with_tokens_pct"`   // % of assistant messages with token counts
	WithModel    float64  `json:"with_model_pct"`    // % of assistant messages with a model
	FullSessions float64  `json:"full_sessions_pct"` // % of sessions whose records are complete
}

func declared(c platform.Capabilities) PlatformCapabilities {
	return PlatformCapabilities{
		Platform: c.Platform, Exchanges: string(c.Exchanges), Timestamps: string(c.Timestamps),
		Tokens: string(c.Tokens), Cost: string(c.Cost), Models: string(c.Models), ToolCalls: string(c.ToolCalls),
		FileContext: string(c.FileContext), Subagents: string(c.Subagents), Incremental: string(c.Incremental),
		Search: string(c.SemanticSearch()), Completeness: c.Completeness, Limitations: c.Limitations,
	}
}

func pct(f float64) float64 { return math.Round(f*1000) / 10 }

// Capabilities returns, for every platform pos reads and every platform
// found in the lake, the declared capabilities and the lake's figures.
func (d *DB) Capabilities(ctx context.Context) ([]PlatformCapabilities, error) {
	if err := d.need(ctx, "messages", "exchange_rows"); err != nil {
		return nil, err
	}
	actual := map[string]*PlatformCapabilities{}
	var order []string
	for _, c := range platforms.Capabilities() {
		p := new(PlatformCapabilities)
		*p = declared(c)
		actual[c.Platform] = p
		order = append(order, c.Platform)
	}
	rows, err := d.querySessions(ctx, func(from string) (string, []any) {
		return `
WITH m AS (
  SELECT platform, count(*) AS messages, count(DISTINCT session_id) AS sessions,
    avg(CASE WHEN ts_precision = 'exact' THEN 1.0 ELSE 0.0 END) AS exact_ts,
    coalesce(avg(CASE WHEN input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens > 0 THEN 1.0 ELSE 0.0 END)
      FILTER (WHERE role = 'assistant'), 0) AS with_tokens,
    coalesce(avg(CASE WHEN model IS NOT NULL AND model <> '' THEN 1.0 ELSE 0.0 END) FILTER (WHERE role = 'assistant'), 0) AS with_model
  FROM messages GROUP BY platform
), e AS (
  SELECT platform, count(*) AS exchanges FROM exchange_rows GROUP BY platform
), s AS (
  SELECT platform, avg(CASE WHEN completeness = 'full' THEN 1.0 ELSE 0.0 END) AS full_sessions FROM ` + from + ` GROUP BY platform
)
SELECT platform, m.messages, m.sessions, coalesce(e.exchanges, 0), m.exact_ts, m.with_tokens, m.with_model, coalesce(s.full_sessions, 0)
FROM m LEFT JOIN e USING (platform) LEFT JOIN s USING (platform)
ORDER BY platform`, nil
	})
	if err != nil {
		return nil, sqlErr(err)
	}
	defer rows.Close()
	for rows.Next() {
		var platform string
		var exact, tokens, model float64
		var full sql.NullFloat64
		var msgs, sess, ex int64
		if err := rows.Scan(&platform, &msgs, &sess, &ex, &exact, &tokens, &model, &full); err != nil {
			return nil, sqlErr(err)
		}
		p, ok := actual[platform]
		if !ok {
			p = &PlatformCapabilities{Platform: platform}
			actual[platform] = p
			order = append(order, platform)
		}
		p.Messages, p.Sessions, p.ExchangeRows = msgs, sess, ex
		p.ExactTimes, p.WithTokens, p.WithModel, p.FullSessions = pct(exact), pct(tokens), pct(model), pct(full.Float64)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlErr(err)
	}
	out := make([]PlatformCapabilities, 0, len(order))
	for _, name := range order {
		out = append(out, *actual[name])
	}
	return out, nil
}
