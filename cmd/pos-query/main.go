// Command pos-query looks things up in the pos lake: the sessions, the last
// turns of a session, a timeline of exchanges, token statistics, and
// arbitrary SQL over the lake's views.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/embedcfg"
	"github.com/pos-lake/pos/cmd/internal/llmcfg"
	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/internal/termsafe"
	"github.com/pos-lake/pos/pricing"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

func main() {
	cmdio.FirstGCPercent = 400 // most lookups end before a collection would pay off
	os.Exit(cmdio.Main(newApp()))
}

const exitCodes = `EXIT CODES:
   0    success
   1    failure: no lake, a SQL error, an I/O error (the message is DuckDB's, on one line)
   2    usage error: bad flags or arguments, a session id that matches no session or several
   130  interrupted (Ctrl-C, SIGTERM)
   141  stdout closed by the reader (e.g. "| head"): output ended quietly`

const formats = `OUTPUT:
   --format table   aligned columns cut to the terminal width, relative times
                    ("3 days ago"), numbers with thousands separators
   --format json    one JSON array of objects
   --format ndjson  one JSON object per line
   --format csv     a header line, then one line per row
   The default is table when stdout is a terminal and ndjson otherwise. Times
   in json, ndjson and csv are RFC 3339 in UTC.`

func newApp() *cli.App {
	return &cli.App{
		Name:      "pos-query",
		Metadata:  map[string]any{"exitCodes": exitCodes},
		Usage:     "look up sessions, recent turns, timelines and token stats in the pos lake, or run SQL on it",
		UsageText: "pos-query COMMAND [OPTIONS]",
		Description: `Reads the lake that pos-load writes (--lake, or $POS_LAKE) through DuckDB,
in memory; it never changes the lake.

  pos-query sessions --since 7d                 sessions active in the last week
  pos-query search "flaky test timeout"         hybrid search of exchanges, reports, plans
  pos-query recent -n 5                         the last 5 turns of the latest session
  pos-query timeline --since 2d --project api   what happened, in order
  pos-query stats --by day,model --since 30d    tokens per model per day
  pos-query sql 'SELECT count(*) FROM messages'

` + formats,
		Commands: []*cli.Command{sqlCmd(), sessionsCmd(), searchCmd(), recentCmd(), timelineCmd(), statsCmd(), filesCmd(), decisionsCmd(), contextCmd(), summarizeCmd(), capabilitiesCmd(), statusCmd()},
		Action: func(c *cli.Context) error {
			var names []string
			for _, cmd := range c.App.Commands {
				names = append(names, cmd.Name)
			}
			if c.NArg() == 0 {
				return cmdio.Usagef("no command given (%s)", strings.Join(names, ", "))
			}
			return cmdio.Usagef("unknown command %q (%s)", c.Args().First(), strings.Join(names, ", "))
		},
	}
}

// command fills in what every subcommand shares: usage errors that exit 2
// instead of printing help into stdout, and the exit codes in --help.
func command(cmd *cli.Command) *cli.Command {
	cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error {
		return cmdio.UsageError{Err: err, Cmd: c.Command.Name}
	}
	cmd.HideHelpCommand = true
	cmd.CustomHelpTemplate = cli.CommandHelpTemplate + "\n" + exitCodes + "\n"
	cmd.Flags = append(cmd.Flags, rawFlag())
	if action := cmd.Action; action != nil {
		cmd.Action = func(c *cli.Context) error {
			// Text from histories never drives the terminal: control
			// characters are shown as escapes on stdout (unless --raw)
			// and on stderr; the bold of search hits is the program's own.
			out, errw := c.App.Writer, c.App.ErrWriter
			var safe *termsafe.Writer
			if !c.Bool("raw") {
				safe = termsafe.NewWriter(out, boldOn, boldOff)
				c.App.Writer = safe
			}
			safeErr := termsafe.NewWriter(errw)
			c.App.ErrWriter = safeErr
			w := &countingWriter{w: c.App.Writer}
			c.App.Writer = w
			defer func() {
				if safe != nil {
					safe.Flush()
				}
				safeErr.Flush()
				c.App.Writer, c.App.ErrWriter = out, errw
			}()
			err := action(c)
			if w.n == 0 && query.FileVanished(err) {
				// A load compacted a partition between the query's listing
				// of its files and their reading: the files are there
				// again, merged, for the same query.
				err = action(c)
			}
			if ue, ok := err.(cmdio.UsageError); ok && ue.Cmd == "" {
				// The hint points at this command's help.
				ue.Cmd = c.Command.Name
				err = ue
			}
			if err != nil {
				// A message may quote the lake (a session id, a path).
				err = safeError{err}
			}
			return err
		}
	}
	return cmd
}

// safeError is an error whose message is printed with its terminal
// control characters escaped; errors.Is and errors.As see the error within.
type safeError struct{ err error }

func (e safeError) Error() string { return termsafe.String(e.err.Error()) }
func (e safeError) Unwrap() error { return e.err }

// countingWriter counts what a command wrote: a failed command is run again
// only if it wrote nothing.
type countingWriter struct {
	w io.Writer
	n int64
}

// Fd is the descriptor of the writer it counts for, if it has one: the
// output is still known to be a terminal.
func (c *countingWriter) Fd() uintptr {
	if f, ok := c.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// rawFlag turns off the escaping of terminal control characters.
func rawFlag() cli.Flag {
	return &cli.BoolFlag{Name: "raw", Usage: "print text from the histories as stored, terminal control characters included " +
		`(by default they are shown as escapes such as \u001b, whatever the output)`}
}

func formatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Aliases: []string{"f"},
		Usage: "output format: table, json, ndjson or csv (default: table on a terminal, else ndjson)"}
}

func widthFlag() cli.Flag {
	return &cli.IntFlag{Name: "width", Usage: "table width in columns (default: the terminal's, else $COLUMNS, else 120)"}
}

func sinceFlag() cli.Flag {
	return &cli.StringFlag{Name: "since", Usage: "from this time: a duration back from now (36h, 7d, 2w), a date (2026-01-31) or RFC 3339"}
}

func untilFlag() cli.Flag {
	return &cli.StringFlag{Name: "until", Usage: "before this time (same forms as --since)"}
}

func platformFlag() cli.Flag {
	return &cli.StringFlag{Name: "platform", Usage: "only this platform (" + strings.Join(platforms.Names(), ", ") + ")"}
}

func projectFlag() cli.Flag {
	return &cli.StringFlag{Name: "project", Usage: "only projects whose path contains this"}
}

func limitFlag(def int, what string) cli.Flag {
	return &cli.IntFlag{Name: "limit", Value: def, Usage: "at most this many " + what + " (0: all)"}
}

func sqlCmd() *cli.Command {
	return command(&cli.Command{
		Name:      "sql",
		Usage:     "run a SQL query on the lake's views",
		UsageText: "pos-query sql [OPTIONS] QUERY|-",
		Description: `Runs one query on the views raw, messages, exchanges, sessions, documents and
other (their columns: pos-query sql 'DESCRIBE messages'). The query is the
arguments, or stdin when it is "-" or absent. Options go before the query.
Filter on the columns platform and date to read only the files that match.

EXAMPLES:
   pos-query sql "SELECT model, sum(output_tokens) FROM messages WHERE date >= DATE '2026-01-01' GROUP BY ALL"
   echo 'SELECT * FROM sessions LIMIT 3' | pos-query sql --format json -`,
		Flags:  []cli.Flag{cmdio.LakeFlag(), formatFlag(), widthFlag()},
		Action: runSQL,
	})
}

func sessionsCmd() *cli.Command {
	return command(&cli.Command{
		Name:      "sessions",
		Usage:     "list sessions, the most recently active first",
		UsageText: "pos-query sessions [OPTIONS]",
		Description: `Lists sessions with their title, project, times, counts and tokens. --since
and --until keep the sessions active in that window.

EXAMPLES:
   pos-query sessions --since 7d --project api
   pos-query sessions --platform codex --limit 0 --format csv > sessions.csv`,
		Flags: []cli.Flag{cmdio.LakeFlag(), formatFlag(), widthFlag(), sinceFlag(), untilFlag(),
			platformFlag(), projectFlag(), limitFlag(20, "sessions")},
		Action: runSessions,
	})
}

func recentCmd() *cli.Command {
	return command(&cli.Command{
		Name:      "recent",
		Usage:     "show the last turns of a session",
		UsageText: "pos-query recent [--session ID] [-n 10] [OPTIONS]",
		Description: `Shows the last turns (a prompt and everything up to the next prompt) of a
session, oldest first: prompt, response, tools used and tokens. The session
is given by its id or a unique prefix of it; by default it is the most
recently active one (of --platform and --project, if given). Only the main
thread is shown unless --subagents is given.

On a terminal each turn is a block: a line with its number, time, model,
output tokens and tools, then the prompt (its first 4 lines, after "> "),
the response (its first 6) and, with --tools, a line per tool call; json,
ndjson and csv have every text whole.

--summarize adds a short summary of the whole session above the turns
(extractive, local, unless --strategy names an LLM strategy; see pos-query
summarize): a text block before a table, {"summary": …, "turns": […]} in
json, a first {"summary": …} line in ndjson, stderr with csv.

EXAMPLES:
   pos-query recent -n 5
   pos-query recent -n 3 --summarize
   pos-query recent --session 4d5611e5 --tools --format json`,
		Flags: append([]cli.Flag{cmdio.LakeFlag(), formatFlag(), widthFlag(),
			&cli.StringFlag{Name: "session", Aliases: []string{"s"}, Usage: "session id or a unique prefix of one (default: the most recently active)"},
			&cli.IntFlag{Name: "n", Aliases: []string{"limit"}, Value: 10, Usage: "how many turns"},
			&cli.BoolFlag{Name: "tools", Usage: "include each turn's tool calls (input, start of output, errors)"},
			&cli.BoolFlag{Name: "subagents", Usage: "include the turns of the session's subagents"},
			platformFlag(), projectFlag(),
			&cli.BoolFlag{Name: "summarize", Usage: "add a short summary of the session above the turns"},
			strategyFlag()}, llmcfg.Flags()...),
		Action: runRecent,
	})
}

func timelineCmd() *cli.Command {
	return command(&cli.Command{
		Name:      "timeline",
		Usage:     "list session starts and exchanges in time order",
		UsageText: "pos-query timeline [--since TIME] [--until TIME] [OPTIONS]",
		Description: `Lists what happened in a window, oldest first: each session start and each
exchange with its session's title, its number in the session, the first line
of its prompt and its tokens. With a --limit, the latest entries of the
window are kept.

EXAMPLES:
   pos-query timeline --since 2d
   pos-query timeline --since 2026-02-01 --until 2026-02-08 --project api --limit 0`,
		Flags: []cli.Flag{cmdio.LakeFlag(), formatFlag(), widthFlag(), sinceFlag(), untilFlag(),
			platformFlag(), projectFlag(), limitFlag(50, "entries"),
			&cli.StringFlag{Name: "session", Aliases: []string{"s"}, Usage: "only this session (id or unique prefix)"},
			&cli.BoolFlag{Name: "subagents", Usage: "include subagents' exchanges"}},
		Action: runTimeline,
	})
}

func statsCmd() *cli.Command {
	return command(&cli.Command{
		Name:      "stats",
		Usage:     "count assistant messages, sum their tokens and cost, grouped",
		UsageText: "pos-query stats [--by KEY[,KEY...]] [OPTIONS]",
		Description: `Sums input, output, cache-creation and cache-read tokens, counts the
assistant messages (and sessions) and prices them in each group. Keys: ` + strings.Join(query.StatsKeys, ", ") + `.
A week is named by its Monday; days and weeks are UTC. The placeholder
model "<synthetic>" is left out.

Costs (USD: cost, input_cost, output_cost, cache_creation_cost,
cache_read_cost) are computed per message, then summed: cache writes at
their 5-minute or 1-hour rate, long-context tiers per request. Prices come
from the table built into pos (its sources and date: pos-query stats
--prices), overridden or extended by a JSON file of the same form (--pricing
FILE, or $POS_PRICING). A model the table does not know has no price: its
messages count in unpriced_messages and their cost stays empty, never 0.

EXAMPLES:
   pos-query stats --by day,model --since 30d
   pos-query stats --by month,project --format csv
   pos-query stats --by session --pricing my-prices.json`,
		Flags: []cli.Flag{cmdio.LakeFlag(), formatFlag(), widthFlag(), sinceFlag(), untilFlag(),
			platformFlag(), projectFlag(), limitFlag(0, "rows"),
			&cli.StringFlag{Name: "by", Value: "day", Usage: "grouping keys, comma-separated; \"\" for totals"},
			&cli.StringFlag{Name: "pricing", EnvVars: []string{pricing.EnvVar}, Usage: "JSON file of model prices that override or extend the built-in table"},
			&cli.BoolFlag{Name: "prices", Usage: "print the price table in use (USD per million tokens) instead of stats"}},
		Action: runStats,
	})
}

func filesCmd() *cli.Command {
	return command(&cli.Command{
		Name:      "files",
		Usage:     "the sessions whose tools read, wrote, edited or searched a file",
		UsageText: "pos-query files PATH [OPTIONS]",
		Description: `PATH matches any referenced file that contains it: a full path, a suffix
("src/auth.ts") or a name ("auth.ts"). Each session shows how often and how
its tools touched the files (edit 3, read 5) and which files matched.

EXAMPLES:
   pos-query files src/auth.ts
   pos-query files go.mod --since 30d --format json`,
		Flags: []cli.Flag{cmdio.LakeFlag(), formatFlag(), widthFlag(), sinceFlag(), untilFlag(),
			platformFlag(), projectFlag(), limitFlag(20, "sessions")},
		Action: runFiles,
	})
}

func runFiles(c *cli.Context) error {
	if c.NArg() != 1 {
		return cmdio.UsageError{Err: fmt.Errorf("give one PATH (got %d arguments)", c.NArg()), Cmd: "files"}
	}
	e, err := setup(c, true)
	if err != nil {
		return err
	}
	defer e.db.Close()
	fs, err := e.db.Files(c.Context, query.FilesOptions{
		Path: c.Args().First(), Since: e.since, Until: e.until,
		Platform: e.platform, Project: c.String("project"), Limit: c.Int("limit"),
	})
	if err != nil {
		return libErr(err)
	}
	return e.printFit(query.TableOf(fs), []string{"last_ts:last touched|last", "session_id:session", "platform", "actions", "paths", "title"},
		[]string{"platform", "actions"}, "title", "paths")
}

func decisionsCmd() *cli.Command {
	return command(&cli.Command{
		Name:      "decisions",
		Usage:     "decisions stated in the conversations, the most recent first",
		UsageText: "pos-query decisions [--since WHEN] [--min-confidence X] [OPTIONS]",
		Description: `Decisions are sentences that match weighted patterns ("let's use …",
"we decided to …", "remember this …"): confidence 0.8 or more is a decision,
0.5 to 0.8 a candidate (shown with --min-confidence 0.5). Each comes with the
prompt it answered.

EXAMPLES:
   pos-query decisions --since 30d
   pos-query decisions --session 1af7 --min-confidence 0.5`,
		Flags: []cli.Flag{cmdio.LakeFlag(), formatFlag(), widthFlag(), sinceFlag(), untilFlag(),
			platformFlag(), projectFlag(), limitFlag(20, "decisions"),
			&cli.StringFlag{Name: "session", Aliases: []string{"s"}, Usage: "only this session (an id or a unique prefix)"},
			&cli.Float64Flag{Name: "min-confidence", Value: 0.8, Usage: "keep decisions at least this sure (0.5 includes candidates)"}},
		Action: runDecisions,
	})
}

func runDecisions(c *cli.Context) error {
	e, err := setup(c, false)
	if err != nil {
		return err
	}
	defer e.db.Close()
	session := ""
	if id := c.String("session"); id != "" {
		ref, err := e.db.ResolveSession(c.Context, id, e.platform, "")
		if err != nil {
			return libErr(err)
		}
		session = ref.SessionID
	}
	ds, err := e.db.Decisions(c.Context, query.DecisionsOptions{
		Since: e.since, Until: e.until, Platform: e.platform, Project: c.String("project"),
		Session: session, MinConfidence: c.Float64("min-confidence"), Limit: c.Int("limit"),
	})
	if err != nil {
		return libErr(err)
	}
	return e.print(query.TableOf(ds), []string{"ts:when", "confidence", "text:decision", "context:asked", "title"},
		"text", "context", "title")
}

func contextCmd() *cli.Command {
	return command(&cli.Command{
		Name:      "context",
		Usage:     "a token-budgeted context pack from past sessions, for an agent to resume work",
		UsageText: "pos-query context [SESSION... | --query TEXT] [--mode smart|labels|agents|plan|full] [--max-tokens N] [OPTIONS]",
		Description: `Builds a pack of whole texts from the sessions given (ids or unique prefixes;
default: the most recently active session), or from the sessions a search
picks (--query TEXT: the --sessions best sessions by hybrid search, lexical
when the lake has no vectors), within a token budget. Texts are
never cut: what does not fit is left out whole, and when even each session's
essentials do not fit, sessions are left out from the last, with a warning.

Modes:
   smart   plan > subagent reports and compaction summaries > the first three
           prompts > summary labels, decisions and files changed > later
           prompts and the assistant's replies (newest first) > files read
   labels  the summary labels (chapter titles)
   agents  the subagents' final reports
   plan    the plans
   full    whole exchanges, newest first until the budget is used

Each session gets a header with its age, the tokens used and what was left
out, and a staleness notice from 7 days of age (mild), 30 (medium) and 90
(strong). --dry-run lists what would be included. Markdown by default;
--format json for programs.

EXAMPLES:
   pos-query context                             the latest session, 15k tokens
   pos-query context 1af7 5c03 --max-tokens 30000
   pos-query context --query "parquet writer memory" --sessions 2
   pos-query context --mode labels --dry-run`,
		Flags: append([]cli.Flag{cmdio.LakeFlag(), platformFlag(), projectFlag(),
			&cli.StringFlag{Name: "mode", Value: query.ModeSmart, Usage: "smart, labels, agents, plan or full"},
			&cli.IntFlag{Name: "max-tokens", Value: query.DefaultContextTokens, Usage: "the pack's token budget"},
			&cli.StringFlag{Name: "query", Aliases: []string{"q"}, Usage: "pick the sessions by searching for `TEXT`"},
			&cli.IntFlag{Name: "sessions", Value: 3, Usage: "with --query, how many sessions to take"},
			&cli.BoolFlag{Name: "dry-run", Usage: "list what would be included, without the texts"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "markdown (default) or json; with --dry-run, a table format"},
			widthFlag(), untilFlag(),
		}, embedcfg.QueryEndpointFlags()...),
		Action: runContext,
	})
}

func runContext(c *cli.Context) error {
	format := c.String("format")
	if format == "markdown" || format == "md" {
		c.Set("format", "")
		format = ""
	}
	if format != "" && format != "json" && !c.Bool("dry-run") {
		return cmdio.UsageError{Err: fmt.Errorf("--format: a pack is markdown or json"), Cmd: "context"}
	}
	e, err := setup(c, true)
	if err != nil {
		return err
	}
	defer e.db.Close()
	// Each id costs a lookup: repeats are dropped and the count capped
	// before any is resolved.
	var ids []string
	for _, id := range c.Args().Slice() {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) > query.MaxContextSessions {
		return cmdio.UsageError{Err: fmt.Errorf("a pack takes at most %d sessions (got %d)", query.MaxContextSessions, len(ids)), Cmd: "context"}
	}
	text := strings.TrimSpace(c.String("query"))
	switch {
	case text != "" && len(ids) > 0:
		return cmdio.UsageError{Err: fmt.Errorf("give sessions or --query, not both"), Cmd: "context"}
	case len(ids) == 0 && text == "":
		ids = []string{""} // the most recently active session
	}
	platforms := make([]string, len(ids))
	for i := range ids {
		platforms[i] = e.platform
	}
	if text != "" {
		if ids, platforms, err = searchSessions(c, e, text); err != nil {
			return err
		}
	}
	var refs []query.SessionRef
	for i, id := range ids {
		ref, err := e.db.ResolveSession(c.Context, id, platforms[i], c.String("project"))
		if err != nil {
			return libErr(err)
		}
		refs = append(refs, ref)
	}
	pack, err := e.db.Context(c.Context, query.ContextOptions{
		Sessions: refs, Mode: c.String("mode"), MaxTokens: c.Int("max-tokens"), Until: e.until, Now: e.now,
	})
	if err != nil {
		return libErr(err)
	}
	for _, w := range pack.Warnings {
		e.note("%s", w)
	}
	switch {
	case c.Bool("dry-run"):
		return e.print(pack.DryRun(), nil, "title")
	case format == "json":
		b, err := pack.JSON()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(c.App.Writer, "%s\n", b)
		return err
	}
	_, err = io.WriteString(c.App.Writer, pack.Markdown())
	return err
}

// searchSessions returns the ids of the sessions that best match text:
// hybrid search when the lake has vectors, lexical otherwise.
func searchSessions(c *cli.Context, e *env, text string) (ids, platforms []string, err error) {
	n := c.Int("sessions")
	if n < 1 {
		return nil, nil, cmdio.UsageError{Err: fmt.Errorf("--sessions must be at least 1"), Cmd: "context"}
	}
	opt := query.SearchOptions{Query: text, Mode: query.SearchLexical, K: n, GroupBy: "session",
		Platform: e.platform, Project: c.String("project"), Until: e.until}
	emb, err := queryEmbedder(c, e.db.Lake())
	if err != nil {
		return nil, nil, err
	}
	if emb != nil {
		opt.Mode, opt.Embed = query.SearchHybrid, emb
	}
	res, err := e.db.Search(c.Context, opt)
	if err != nil {
		return nil, nil, libErr(err)
	}
	searchWarning(c, res)
	if len(res.Sessions) == 0 {
		return nil, nil, fmt.Errorf("no session matches %q", text)
	}
	for _, s := range res.Sessions {
		ids, platforms = append(ids, s.SessionID), append(platforms, s.Platform)
		e.note("--query picked %s session %s (score %.3f): %s", s.Platform, s.SessionID, s.Score, s.Title)
	}
	return ids, platforms, nil
}

func capabilitiesCmd() *cli.Command {
	return command(&cli.Command{
		Name:      "capabilities",
		Usage:     "what each platform's data supports, beside what the lake holds for it",
		UsageText: "pos-query capabilities [OPTIONS]",
		Description: `For every platform: the capabilities its adapter declares (exchanges,
timestamps, tokens, cost, models, tool calls, file context, subagents,
incremental reads, semantic search; see pos-extract --capabilities for the
limitations), then what this lake holds: messages, sessions, exchanges, the
share of messages with an exact timestamp, of answers with token counts and
with a model, and of sessions whose records are complete.

EXAMPLES:
   pos-query capabilities
   pos-query capabilities --format json`,
		Flags:  []cli.Flag{cmdio.LakeFlag(), formatFlag(), widthFlag()},
		Action: runCapabilities,
	})
}

func runCapabilities(c *cli.Context) error {
	e, err := setup(c, false)
	if err != nil {
		return err
	}
	defer e.db.Close()
	caps, err := e.db.Capabilities(c.Context)
	if err != nil {
		return libErr(err)
	}
	flags := []string{"exchanges", "timestamps", "tokens", "cost", "models", "tool_calls", "file_context", "subagents", "incremental"}
	t := query.TableOf(caps)
	if e.format == query.FormatTable {
		// "part" keeps the nine yes/part/no columns within 80 columns.
		for _, row := range t.Rows {
			for i, col := range t.Columns {
				if v, ok := row[i].(string); ok && v == "partial" && slices.Contains(flags, col.Name) {
					row[i] = "part"
				}
			}
		}
	}
	return e.printFit(t, []string{"platform", "exchanges:exchanges|exch", "timestamps:timestamps|ts", "tokens:tokens|tok", "cost", "models:models|model",
		"tool_calls:tools", "file_context:files", "subagents:subagents|sub", "incremental:incremental|incr", "messages:messages|msgs", "sessions:sessions|sess",
		"exact_ts_pct:exact ts %|ts %", "with_tokens_pct:tokens %|tok %", "with_model_pct:model %|mod %", "full_sessions_pct:full sessions %|full %"},
		[]string{"full_sessions_pct", "with_model_pct", "with_tokens_pct", "exact_ts_pct", "sessions", "messages"},
		flags...)
}

// env is what an action needs: the lake, the window and the output.
type env struct {
	c            *cli.Context
	db           *query.DB
	now          time.Time
	since, until time.Time
	format       query.Format
	platform     string // canonical name, aliases resolved
}

// lazyViews are the commands whose lookups define the views they read.
var lazyViews = map[string]bool{"status": true, "sql": true, "stats": true, "sessions": true, "recent": true, "timeline": true,
	"files": true, "decisions": true, "capabilities": true, "search": true, "context": true, "summarize": true}

// setup parses the shared flags and opens the lake.
func setup(c *cli.Context, args bool) (*env, error) {
	if !args && c.NArg() > 0 {
		return nil, cmdio.Usagef("unexpected argument %q", c.Args().First())
	}
	e := &env{c: c, now: time.Now()}
	var err error
	if e.format, err = outputFormat(c); err != nil {
		return nil, err
	}
	for _, t := range []struct {
		flag string
		dst  *time.Time
	}{{"since", &e.since}, {"until", &e.until}} {
		if *t.dst, err = cmdio.ParseTime(c.String(t.flag), e.now); err != nil {
			return nil, cmdio.Usagef("--%s: %v", t.flag, err)
		}
	}
	if !e.since.IsZero() && !e.until.IsZero() && !e.since.Before(e.until) {
		return nil, cmdio.Usagef("--since must be before --until")
	}
	if p := c.String("platform"); p != "" {
		var ok bool
		if e.platform, ok = platforms.Canonical(p); !ok {
			return nil, cmdio.Usagef("unknown platform %q (known: %s)", p, strings.Join(platforms.Names(), ", "))
		}
	}
	var opts []query.OpenOption
	if lazyViews[c.Command.Name] {
		opts = append(opts, query.LazyViews()) // each lookup defines the views it reads
	}
	if e.db, err = query.Open(c.Context, c.String("lake"), opts...); err != nil {
		return nil, err
	}
	warnScrub(c, e.db)
	return e, nil
}

// stdinIsTerminal reports whether r is a terminal (nobody is piping a query).
func stdinIsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func outputFormat(c *cli.Context) (query.Format, error) {
	s := c.String("format")
	if s == "" {
		if cmdio.IsTerminal(c.App.Writer) {
			return query.FormatTable, nil
		}
		return query.FormatNDJSON, nil
	}
	f, err := query.ParseFormat(s)
	if err != nil {
		return "", cmdio.UsageError{Err: fmt.Errorf("--format: %w", err)}
	}
	return f, nil
}

// width is the table width: --width, the terminal's, $COLUMNS, or 120.
func width(c *cli.Context) int {
	if w := c.Int("width"); w > 0 {
		return w
	}
	if f, ok := c.App.Writer.(interface{ Fd() uintptr }); ok && cmdio.IsTerminal(c.App.Writer) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if w, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && w > 0 {
		return w
	}
	return 120
}

// writer makes the output writer; flexible names the table columns that
// are cut first when the table is too wide.
func (e *env) writer(flexible ...string) *query.Writer { return e.fitWriter(flexible, nil) }

// fitWriter is writer whose table may leave out the optional columns.
func (e *env) fitWriter(flexible, optional []string) *query.Writer {
	return query.NewWriter(e.c.App.Writer, e.format, query.WriterOptions{
		Width:     width(e.c),
		Now:       e.now,
		Flexible:  flexible,
		Optional:  optional,
		FlushEach: e.format != query.FormatTable && cmdio.IsTerminal(e.c.App.Writer),
		Raw:       e.c.Bool("raw"),
	})
}

// print writes t. In a table only the columns in cols are shown (all if
// none), each given as "name" or "name:header"; flexible names the columns
// cut first when the table is too wide.
func (e *env) print(t *query.Table, cols []string, flexible ...string) error {
	return e.printFit(t, cols, nil, flexible...)
}

// printFit is print whose table leaves out the optional columns, in their
// order, while a flexible one would be cut short, and says so on stderr.
func (e *env) printFit(t *query.Table, cols, optional []string, flexible ...string) error {
	flexible, optional = slices.Clone(flexible), slices.Clone(optional)
	if e.format == query.FormatTable && len(cols) > 0 {
		names := make([]string, len(cols))
		headers := map[string]string{}
		for i, c := range cols {
			n, h, ok := strings.Cut(c, ":")
			names[i] = n
			if ok {
				headers[n] = h
			}
		}
		t = t.Select(names...)
		rename := func(list []string, from, to string) {
			for j, f := range list {
				if f == from {
					list[j] = to
				}
			}
		}
		for i, c := range t.Columns {
			if h, ok := headers[c.Name]; ok {
				rename(flexible, c.Name, h)
				rename(optional, c.Name, h)
				t.Columns[i].Name = h
			}
		}
	}
	w := e.fitWriter(flexible, optional)
	if err := t.Write(w); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if d := w.Dropped(); len(d) > 0 {
		names := make([]string, len(d))
		for i, n := range d {
			long, _, _ := strings.Cut(n, "|")
			names[i] = long
		}
		e.note("left out to fit %d columns: %s (--width N or --format csv shows them)", width(e.c), strings.Join(names, ", "))
	}
	return nil
}

// note tells the user something on stderr, in a table's company only:
// other formats are read by programs.
func (e *env) note(format string, args ...any) {
	if e.format == query.FormatTable {
		fmt.Fprintf(e.c.App.ErrWriter, "%s: %s\n", e.c.App.Name, fmt.Sprintf(format, args...))
	}
}

// libErr turns the library's complaints about arguments into usage errors.
func libErr(err error) error {
	var ae *query.ArgError
	if errors.As(err, &ae) {
		return cmdio.UsageError{Err: err}
	}
	return err
}

func runSQL(c *cli.Context) error {
	q := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
	if q == "" || q == "-" {
		if c.NArg() == 0 && stdinIsTerminal(c.App.Reader) {
			return cmdio.Usagef("no query given (pass it as an argument, or \"-\" to read it from stdin)")
		}
		b, err := io.ReadAll(c.App.Reader)
		if err != nil {
			return err
		}
		q = strings.TrimSpace(string(b))
	}
	if q == "" {
		return cmdio.Usagef("the query is empty")
	}
	e, err := setup(c, true)
	if err != nil {
		return err
	}
	defer e.db.Close()
	w := e.writer()
	if err := e.db.ReadStream(c.Context, w, q); err != nil {
		return err
	}
	return w.Close()
}

func runSessions(c *cli.Context) error {
	e, err := setup(c, false)
	if err != nil {
		return err
	}
	defer e.db.Close()
	n := c.Int("limit")
	ss, err := e.db.Sessions(c.Context, query.SessionFilter{
		Platform: e.platform, Project: c.String("project"),
		Since: e.since, Until: e.until, Limit: n,
	})
	if err != nil {
		return libErr(err)
	}
	if err := e.printFit(query.TableOf(ss),
		[]string{"last_ts:last active|last", "session_id:session", "platform", "exchange_count:turns", "output_tokens:out tokens|out", "project", "title"},
		[]string{"platform", "exchange_count", "output_tokens"},
		"title", "project"); err != nil {
		return err
	}
	if n > 0 && len(ss) == n && !c.IsSet("limit") {
		e.note("showing the %d most recently active sessions; --limit 0 shows all", n)
	}
	return nil
}

func runRecent(c *cli.Context) error {
	e, err := setup(c, false)
	if err != nil {
		return err
	}
	defer e.db.Close()
	tools := c.Bool("tools")
	r, err := e.db.Recent(c.Context, query.RecentOptions{
		Session: c.String("session"), N: c.Int("n"),
		Platform: e.platform, Project: c.String("project"),
		IncludeTools: tools, Subagents: c.Bool("subagents"),
	})
	if err != nil {
		return libErr(err)
	}
	s := r.Session
	about := fmt.Sprintf("session %s (%s)", s.SessionID, s.Platform)
	if s.Title != "" {
		about += fmt.Sprintf(" %q", s.Title)
	}
	if s.Project != "" {
		about += " in " + s.Project
	}
	e.note("%s", about)
	cols := []string{"exchange_number:#", "ts:when", "prompt", "response", "tools", "output_tokens:out tokens"}
	if tools {
		cols[4] = "tool_calls:tools"
	}
	for _, t := range r.Turns {
		if t.AgentID != "" {
			cols = append([]string{"agent_id:agent"}, cols...)
			break
		}
	}
	printTurns := func() error {
		if e.format == query.FormatTable {
			return e.blocks(turnBlocks(r.Turns, tools, e.now))
		}
		return e.print(r.Table(), cols, "prompt", "response", "tools", "tool_calls")
	}
	if c.Bool("summarize") {
		sum, err := recentSummary(c, e, s)
		if err != nil {
			return err
		}
		return printRecentSummary(e, sum, r.Table(), printTurns)
	}
	return printTurns()
}

// Turn blocks show this many lines of a prompt and of a response; json
// has them whole.
const promptLines, responseLines = 4, 6

// turnBlocks are turns as a terminal shows them: a line with the turn's
// number (and agent), time, model, output tokens and tools, then the prompt
// ("> "), the response, and with --tools a line per tool call.
func turnBlocks(turns []query.Turn, tools bool, now time.Time) []hitBlock {
	blocks := make([]hitBlock, len(turns))
	for i, t := range turns {
		n := "#" + strconv.FormatInt(t.ExchangeNumber, 10)
		if t.AgentID != "" {
			n = t.AgentID + " " + n
		}
		b := hitBlock{head: []string{n, relTime(t.TS, now), t.Model, humanize.Comma(t.Output) + " out"}}
		if !tools {
			b.title = strings.Join(t.Tools, ", ")
		}
		b.texts = append(b.texts, para{prefix: "  > ", s: t.Prompt, max: promptLines})
		if t.Response != "" {
			b.texts = append(b.texts, para{prefix: "    ", s: t.Response, max: responseLines})
		}
		if tools {
			for _, tc := range t.ToolCalls {
				b.texts = append(b.texts, para{prefix: "    · ", s: tc.String(), max: 1})
			}
		}
		blocks[i] = b
	}
	return blocks
}

func runTimeline(c *cli.Context) error {
	e, err := setup(c, false)
	if err != nil {
		return err
	}
	defer e.db.Close()
	n := c.Int("limit")
	tl, err := e.db.Timeline(c.Context, query.TimelineOptions{
		Since: e.since, Until: e.until,
		Platform: e.platform, Project: c.String("project"), Session: c.String("session"),
		Limit: n, Subagents: c.Bool("subagents"),
	})
	if err != nil {
		return libErr(err)
	}
	if err := e.printFit(query.TableOf(tl),
		[]string{"ts:when", "kind", "session_id:session", "exchange_number:#", "title", "prompt", "input_tokens:in tokens|in", "output_tokens:out tokens|out", "project"},
		[]string{"project", "input_tokens", "output_tokens"},
		"title", "prompt", "project", "session_id"); err != nil {
		return err
	}
	if n > 0 && len(tl) == n && !c.IsSet("limit") {
		e.note("showing the latest %d entries; --limit 0 shows all", n)
	}
	return nil
}

func runStats(c *cli.Context) error {
	by, err := query.ParseBy(c.String("by"))
	if err != nil {
		return cmdio.UsageError{Err: fmt.Errorf("--by: %w", err)}
	}
	prices, err := pricing.Load(c.String("pricing"))
	if err != nil {
		return err
	}
	if c.Bool("prices") {
		return printPrices(c, prices)
	}
	e, err := setup(c, false)
	if err != nil {
		return err
	}
	defer e.db.Close()
	st, err := e.db.Stats(c.Context, query.StatsOptions{
		By: by, Since: e.since, Until: e.until,
		Platform: e.platform, Project: c.String("project"), Limit: c.Int("limit"),
		Prices: prices,
	})
	if err != nil {
		return libErr(err)
	}
	for _, n := range st.Notes {
		if len(st.Unpriced) > 0 && strings.HasPrefix(n, "unknown model") {
			// Whatever the format: a cost left out must not go unnoticed.
			fmt.Fprintf(c.App.ErrWriter, "%s: %s\n", c.App.Name, n)
			continue
		}
		e.note("%s", n)
	}
	// Headers as "long|short": a narrow terminal gets the short ones.
	cols := append(by, "messages:messages|msgs", "sessions:sessions|sess", "input_tokens:in tokens|in", "output_tokens:out tokens|out",
		"cache_creation_tokens:cache write|cache w", "cache_read_tokens:cache read|cache r", "cost:cost $|$")
	if len(st.Unpriced) > 0 {
		cols = append(cols, "unpriced_messages:unpriced")
	}
	t := st.Table()
	if e.format == query.FormatTable {
		// Tables round numbers to cents; a day of a cheap model costs less.
		for i, c := range t.Columns {
			if strings.HasSuffix(c.Name, "cost") {
				t.Columns[i].Type = "DECIMAL(18,4)" // right-aligned, never cut
				for _, row := range t.Rows {
					if v, ok := row[i].(float64); ok {
						row[i] = strconv.FormatFloat(v, 'f', 4, 64)
					}
				}
			}
		}
	}
	// Narrow, the model or project keeps its width before these do.
	optional := []string{"unpriced_messages", "sessions", "messages", "cache_creation_tokens", "cache_read_tokens"}
	return e.printFit(t, cols, optional, "project", "model", "session")
}

// printPrices writes the price table in use.
func printPrices(c *cli.Context, prices *pricing.Table) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	t := &query.Table{}
	for _, n := range []string{"model", "provider", "aliases"} {
		t.Columns = append(t.Columns, query.Column{Name: n, Type: "VARCHAR"})
	}
	for _, n := range []string{"input", "output", "cache_write_5m", "cache_write_1h", "cache_read"} {
		t.Columns = append(t.Columns, query.Column{Name: n, Type: "DOUBLE"})
	}
	t.Columns = append(t.Columns, query.Column{Name: "long_context", Type: "VARCHAR"})
	for _, m := range prices.Models() {
		lc := ""
		if l := m.LongContext; l != nil {
			lc = fmt.Sprintf("above %d: %g/%g/%g/%g/%g", l.Above, l.Input, l.Output, l.CacheWrite5m, l.CacheWrite1h, l.CacheRead)
			if !l.Until.IsZero() {
				lc += " until " + l.Until.Format(time.DateOnly)
			}
		}
		row := []any{m.Name, m.Provider, strings.Join(m.Aliases, " ")}
		for _, v := range []float64{m.Input, m.Output, m.CacheWrite5m, m.CacheWrite1h, m.CacheRead} {
			if format == query.FormatTable {
				row = append(row, strconv.FormatFloat(v, 'g', -1, 64)) // tables round numbers to cents
			} else {
				row = append(row, v)
			}
		}
		t.Rows = append(t.Rows, append(row, lc))
	}
	if format == query.FormatTable {
		fmt.Fprintf(c.App.ErrWriter, "%s: prices of %s (USD per million tokens), overrides %v; sources:\n", c.App.Name, prices.Updated, prices.Files)
		for _, s := range prices.Sources {
			fmt.Fprintf(c.App.ErrWriter, "  - %s\n", s)
		}
	}
	w := query.NewWriter(c.App.Writer, format, query.WriterOptions{Width: c.Int("width")})
	if err := t.Write(w); err != nil {
		return err
	}
	return w.Close()
}
