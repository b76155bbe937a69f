package rollup

import "fmt"

// SessionsSQL is the sessions view's query: it keeps the latest metadata
// of each session from its rollups, meta (titles by preference: the name
// the user gave it, the platform's own, the latest summary label, the first
// prompt), and counts everything else from its messages and exchanges, so
// sessions loaded in several incremental runs add up. The counts come from
// session parts (see SessionPartsSQL): msgParts and exParts are sources of
// the parts of the messages and of the exchanges, which the query combines
// by session with the same rules that made them.
func SessionsSQL(msgParts, exParts, meta string) string {
	return "WITH " + fmt.Sprintf(sessionsMeta, meta) + `, m AS (
  SELECT platform, session_id,
    ` + sessionCombineSelect(sessionMessageRules) + `
  FROM ` + msgParts + `
  GROUP BY ALL
), e AS (
  SELECT platform, session_id,
    ` + sessionCombineSelect(sessionExchangeRules) + `
  FROM ` + exParts + `
  GROUP BY ALL
)
` + sessionsSelect
}

// The parts of the sessions view's query: the metadata of each session
// from the session rollups (%[1]s), and the select that joins it to the
// counts combined from the parts (m, of the messages, and e, of the
// exchanges).
const (
	sessionsMeta = `meta AS (
  SELECT platform, session_id,
    arg_max(title, ingested_at) FILTER (WHERE title_source = 'user') AS user_title,
    arg_max(title, ingested_at) FILTER (WHERE title_source = 'platform') AS platform_title,
    arg_min(title, coalesce(first_ts, ts)) FILTER (WHERE title_source = 'prompt') AS prompt_title,
    max(slug) AS slug, max(plan_id) AS plan_id,
    arg_max(cwd, ingested_at) AS cwd, arg_max(git_branch, ingested_at) AS git_branch,
    arg_min(project, coalesce(first_ts, ts)) AS project,
    arg_max(meta, ingested_at) AS meta, arg_max(completeness, ingested_at) AS completeness,
    max(ingested_at) AS ingested_at,
    min(coalesce(first_ts, ts)) AS meta_first_ts, max(coalesce(last_ts, ts)) AS meta_last_ts,
    flatten(list(labels ORDER BY ingested_at)) AS all_labels,
    flatten(list(pull_requests ORDER BY ingested_at)) AS all_prs
  FROM %[1]s
  GROUP BY ALL
)`
	sessionsSelect = `SELECT
  platform, session_id,
  coalesce(meta.user_title, meta.platform_title, meta.all_labels[-1], meta.prompt_title) AS title,
  meta.slug, coalesce(m.first_ts, meta.meta_first_ts) AS first_ts, coalesce(m.last_ts, meta.meta_last_ts) AS last_ts,
  coalesce(m.message_count, 0) AS message_count, coalesce(m.user_count, 0) AS user_count,
  coalesce(m.assistant_count, 0) AS assistant_count, coalesce(m.tool_count, 0) AS tool_count,
  coalesce(e.exchange_count, 0) AS exchange_count,
  coalesce(m.compactions, 0) AS compactions, coalesce(length(m.agents), 0) AS subagents,
  coalesce(m.input_tokens, 0) AS input_tokens, coalesce(m.output_tokens, 0) AS output_tokens,
  coalesce(m.cache_creation_tokens, 0) AS cache_creation_tokens, coalesce(m.cache_read_tokens, 0) AS cache_read_tokens,
  CASE WHEN len(m.models) > 0 THEN list_sort(m.models) END AS models,
  list_filter(meta.all_labels, (x, i) -> list_position(meta.all_labels, x) = i) AS labels, meta.plan_id,
  list_filter(meta.all_prs, (x, i) -> list_position(meta.all_prs, x) = i) AS pull_requests,
  coalesce(meta.project, m.msg_project) AS project, meta.cwd, meta.git_branch, m.user, m.machine,
  meta.completeness, meta.meta, meta.ingested_at,
  CAST(coalesce(m.first_ts, meta.meta_first_ts) AS DATE) AS date
FROM m FULL JOIN meta USING (platform, session_id) LEFT JOIN e USING (platform, session_id)`
)

// SessionPartsSQL is the sessions view's counts in parts: a row per
// platform, date partition and session of the messages (message_count set)
// and one of the exchanges (exchange_count set) matching where, a
// condition on the hive columns. Each row is exact for its partition, and
// SessionsFromPartsSQL combines any set of them into what the view gives,
// so the parts of unchanged partitions can be kept between queries.
func SessionPartsSQL(where string) string {
	return MessagePartsSQL(where) + `
UNION ALL BY NAME
` + ExchangePartsSQL(where)
}

// MessagePartsSQL is SessionPartsSQL's rows of the messages.
func MessagePartsSQL(where string) string {
	return `SELECT platform, date, session_id,
  ` + sessionPartsSelect(sessionMessageRules) + `,
  CAST(NULL AS BIGINT) AS exchange_count
FROM messages
WHERE ` + where + `
GROUP BY platform, date, session_id`
}

// ExchangePartsSQL is SessionPartsSQL's rows of the exchanges.
func ExchangePartsSQL(where string) string {
	return `SELECT platform, date, session_id, ` + sessionPartsSelect(sessionExchangeRules) + `
FROM exchange_rows
WHERE ` + where + `
GROUP BY platform, date, session_id`
}

// SessionMetaRowsSQL selects the session rollups' columns the sessions
// view reads, with the hive columns, for the partitions matching where.
func SessionMetaRowsSQL(where string) string {
	return `SELECT platform, date, session_id, title, title_source, ingested_at, first_ts, ts, last_ts, slug, plan_id,
  cwd, git_branch, project, meta, completeness, labels, pull_requests
FROM session_rows
WHERE ` + where
}

// SessionsFromPartsSQL is the sessions view's query over session parts
// (SessionPartsSQL's rows, from the source parts) and session rollup rows
// (SessionMetaRowsSQL's, from the source meta).
func SessionsFromPartsSQL(parts, meta string) string {
	return SessionsSQL("(SELECT * FROM "+parts+" WHERE message_count IS NOT NULL)",
		"(SELECT * FROM "+parts+" WHERE exchange_count IS NOT NULL)", meta)
}
