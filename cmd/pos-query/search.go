package main

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/embedcfg"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/schema"
	"github.com/urfave/cli/v2"
)

func searchCmd() *cli.Command {
	return command(&cli.Command{
		Name:      "search",
		Usage:     "find the exchanges, reports, summaries and plans that match a query",
		UsageText: `pos-query search "TEXT" [--mode hybrid|vector|lexical] [-k 10] [--group-by session] [OPTIONS]`,
		Description: `Searches the chunks pos-embed added to the lake. hybrid (the default)
averages two scores, each scaled to 0-1: vector similarity (the query
embedded with the lake's model; below the model's minimum similarity, 0.255
for pos-hash-v3, a chunk is no vector match) and BM25 over the lake's
lexical index (scaled by the query's best). A prompt's chunks
count as the exchange it opens, and each result is a different exchange,
report, compaction summary, label or plan, with its score, time, session
title and a snippet with the query's words in bold (between ** where the
output is not a terminal or NO_COLOR is set). On a terminal each result is
a block: a line with its score, time, type, session id and title, then
the snippet, wrapped.

Chunks of the same or nearly the same text (a prompt repeated across
sessions, the same failing build in several exchanges) are one result,
which says how many others it stands for ("+2 similar"; duplicates and
similar in JSON). A hit shows the prompt of its exchange, and where a tool
of the exchange failed, the failure's lines and what came after it until a
command passed: the edits, the command ("fixed by"; error and fix in JSON).

--group-by session ranks sessions by how much of them matches: topic search
across sessions, each session with its best hits (--per-session, 3).

hybrid and lexical searches expand the query (--no-expand: not): the words
that weigh most in the first pass's best results join it with a lower
weight (pseudo-relevance feedback), and so do the WordNet synonyms of its
English words where WordNet is installed (/usr/share/wordnet, Debian's
wordnet-base). A query with a "phrase" or a prefix* is not expanded.

A lake embedded with an OpenAI-compatible model embeds the query at the
endpoint its chunks were embedded through (recorded in the lake; --base-url
or $POS_EMBED_BASE_URL names another), with the key named for it (--api-key
or $POS_EMBED_API_KEY; $OPENAI_API_KEY goes to OpenAI's own API only). When
the endpoint fails (unreachable, timeout, 5xx after a short retry), the
search answers with lexical results and a warning on stderr; --mode lexical
needs no endpoint.

Content types (--type): exchange, user_prompt, summary_label,
compact_summary, subagent_summary, plan (or prompt, label, summary, report),
and what agents did: command (shell commands they ran), tool_output,
tool_error (a tool's result that failed: flagged so, a non-zero exit, a
stack trace, a compiler error, a failing test). A hit of a tool's result
names the tool and shows its lines that hold the query's words.

EXAMPLES:
   pos-query search "parquet row group size" --since 30d
   pos-query search "why did the hook fail" --type exchange,subagent_summary -k 5
   pos-query search "has no upstream branch" --type tool_error
   pos-query search "opentelemetry" --group-by session --format json`,
		Flags: append([]cli.Flag{cmdio.LakeFlag(), formatFlag(), widthFlag(), sinceFlag(), untilFlag(),
			platformFlag(), projectFlag(),
			&cli.StringFlag{Name: "session", Aliases: []string{"s"}, Usage: "only this session (an id or a unique prefix)"},
			&cli.StringFlag{Name: "type", Aliases: []string{"t"}, Usage: "only these content types, comma-separated"},
			&cli.StringFlag{Name: "user", Usage: "only this user's records"},
			&cli.StringFlag{Name: "machine", Usage: "only this machine's records"},
			&cli.IntFlag{Name: "k", Aliases: []string{"n", "limit"}, Value: 10, Usage: "how many results"},
			&cli.StringFlag{Name: "mode", Aliases: []string{"m"}, Value: query.SearchHybrid, Usage: "hybrid, vector or lexical"},
			&cli.StringFlag{Name: "group-by", Usage: "session: rank sessions instead of single results"},
			&cli.IntFlag{Name: "per-session", Value: 3, Usage: "with --group-by session: the best hits shown of each session"},
			&cli.Float64Flag{Name: "min-similarity", Usage: "the least cosine similarity a vector match needs (default: the lake model's own, 0.255 for pos-hash-v3; -1: none)"},
			&cli.BoolFlag{Name: "no-expand", Usage: "search the query's own words only: no expansion by the best results' words and WordNet synonyms"},
			&cli.Float64Flag{Name: "bm25-k1", Usage: "BM25's term frequency saturation, > 0 (default: " + query.BM25Defaults + ")"},
			&cli.Float64Flag{Name: "bm25-b", Usage: "BM25's length normalization, in [0, 1] (default: " + query.BM25Defaults + ")"},
			&cli.IntFlag{Name: embedcfg.DimensionsFlag, Usage: "the dimensions the lake's OpenAI-compatible model was asked for, if any"},
		}, embedcfg.QueryEndpointFlags()...),
		Action: runSearch,
	})
}

func runSearch(c *cli.Context) error {
	text := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
	if text == "" {
		return cmdio.UsageError{Err: fmt.Errorf("no query given"), Cmd: "search"}
	}
	var types []string
	if s := c.String("type"); s != "" {
		var err error
		if types, err = query.ParseSearchTypes(s); err != nil {
			return cmdio.UsageError{Err: fmt.Errorf("--type: %w", err), Cmd: "search"}
		}
	}
	if k := c.Int("k"); k <= 0 {
		return cmdio.UsageError{Err: fmt.Errorf("-k must be at least 1"), Cmd: "search"}
	}
	// Unset is 0, the lake model's own minimum; a negative value is none.
	k1, b := c.Float64("bm25-k1"), c.Float64("bm25-b")
	if c.IsSet("bm25-k1") && k1 <= 0 || c.IsSet("bm25-b") && (b < 0 || b > 1) {
		return cmdio.UsageError{Err: fmt.Errorf("--bm25-k1 must be > 0 and --bm25-b in [0, 1] (got %g, %g)", k1, b), Cmd: "search"}
	}
	if c.IsSet("bm25-b") && b == 0 {
		b = -1 // none
	}
	minSim := c.Float64("min-similarity")
	if c.IsSet("min-similarity") && (minSim == 0 || minSim > 1) {
		return cmdio.UsageError{Err: fmt.Errorf("--min-similarity must be in (0, 1], or negative for none (got %g)", minSim), Cmd: "search"}
	}
	if c.Int("per-session") <= 0 {
		return cmdio.UsageError{Err: fmt.Errorf("--per-session must be at least 1"), Cmd: "search"}
	}
	if g := c.String("group-by"); g != "" && g != "session" {
		return cmdio.UsageError{Err: fmt.Errorf("--group-by: only session is known (got %q)", g), Cmd: "search"}
	}
	e, err := setup(c, true)
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
	opt := query.SearchOptions{
		Query: text, Mode: c.String("mode"), K: c.Int("k"), GroupBy: c.String("group-by"), PerSession: c.Int("per-session"),
		Platform: e.platform, Project: c.String("project"), Session: session, Types: types,
		User: c.String("user"), Machine: c.String("machine"), Since: e.since, Until: e.until,
		MinSimilarity: minSim,
		BM25K1:        k1,
		BM25B:         b,
		NoExpand:      c.Bool("no-expand"),
	}
	if opt.Mode != query.SearchLexical {
		if opt.Embed, err = queryEmbedder(c, e.db.Lake()); err != nil {
			return err
		}
	}
	res, err := e.db.Search(c.Context, opt)
	if err != nil {
		return libErr(err)
	}
	searchWarning(c, res)
	if opt.GroupBy == "session" {
		if len(res.Sessions) == 0 {
			e.note("no match for %q", text)
		}
		if e.format == query.FormatTable {
			blocks := make([]hitBlock, len(res.Sessions))
			for i, h := range res.Sessions {
				blocks[i] = hitBlock{head: []string{score(h.Score), plural(h.Hits, "hit"), relTime(h.LastTS, e.now), h.SessionID},
					title: h.Title}
				// Its best hits, each a line of its own after "- ".
				for _, b := range h.Best {
					blocks[i].texts = append(blocks[i].texts, para{prefix: hitIndent + "- ", s: b.ContentType + ": " + b.Snippet, max: 2})
					blocks[i].texts = append(blocks[i].texts, storyParas(b, hitIndent+"  ")...)
				}
			}
			return e.blocks(blocks)
		}
		return e.print(query.TableOf(res.Sessions), nil)
	}
	if len(res.Hits) == 0 {
		e.note("no match for %q", text)
	}
	if e.format == query.FormatTable {
		blocks := make([]hitBlock, len(res.Hits))
		for i, h := range res.Hits {
			blocks[i] = hitBlock{head: []string{score(h.Score), relTime(h.TS, e.now), h.ContentType, h.SessionID},
				title: h.Title, texts: []para{{s: h.Snippet}}}
			if h.Tool != "" || len(h.Lines) > 0 {
				// A tool's chunk: which tool, and its lines that match,
				// each on a line of its own after "> ".
				blocks[i].head[2] += " (" + cmp.Or(h.Tool, "tool") + ")"
				if len(h.Lines) > 0 {
					blocks[i].texts = nil
					for _, l := range h.Lines {
						blocks[i].texts = append(blocks[i].texts, para{prefix: hitIndent + "> ", s: l, max: 2})
					}
				}
			}
			if h.Duplicates > 0 {
				blocks[i].head = append(blocks[i].head, "+"+strconv.Itoa(h.Duplicates)+" similar")
			}
			blocks[i].texts = append(blocks[i].texts, storyParas(h, hitIndent)...)
		}
		return e.blocks(blocks)
	}
	return e.print(query.TableOf(res.Hits), nil)
}

// storyParas are the lines of a hit's story: its exchange's prompt (unless
// the hit is the prompt), and when a tool failed, the failure and what
// fixed it.
func storyParas(h query.SearchHit, indent string) []para {
	var out []para
	if h.Prompt != "" && h.ContentType != schema.ContentUserPrompt {
		out = append(out, para{prefix: indent + "prompt: ", s: h.Prompt, max: 1})
	}
	if f := h.Error; f != nil {
		what := cmp.Or(f.Tool, "tool")
		if f.Command != "" {
			what += ": " + f.Command
		}
		out = append(out, para{prefix: indent + "failed: ", s: what, max: 1})
		for _, l := range f.Lines {
			out = append(out, para{prefix: indent + "  ! ", s: l, max: 1})
		}
		var steps []string
		for _, s := range h.Fix {
			switch {
			case s.Command != "":
				steps = append(steps, cmp.Or(s.Tool, "shell")+": "+s.Command)
			case len(s.Files) > 0:
				steps = append(steps, cmp.Or(s.Tool, "edit")+" "+strings.Join(s.Files, ", "))
			}
		}
		if len(steps) > 0 {
			out = append(out, para{prefix: indent + "fixed by: ", s: strings.Join(steps, "; "), max: 2})
		}
	}
	return out
}

// plural is "1 hit", "3 hits".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// queryEmbedder embeds queries with the lake's model: the hash provider
// locally, an OpenAI-compatible model at the endpoint the lake's chunks
// were embedded through (or the one the flags name). A lake without
// vectors gets none (Search says what to do).
func queryEmbedder(c *cli.Context, lake string) (query.Embedder, error) {
	return embedcfg.QueryEmbedder(c.Context, lake, embedcfg.ReadEndpoint(c))
}

// searchWarning says on stderr, whatever the format, why a search
// answered with lexical results only.
func searchWarning(c *cli.Context, res *query.SearchResult) {
	if res.Warning != "" {
		fmt.Fprintf(c.App.ErrWriter, "%s: warning: %s\n", c.App.Name, res.Warning)
	}
}
