package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/llmcfg"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

func strategyFlag() cli.Flag {
	return &cli.StringFlag{Name: "strategy", Value: query.StrategyExtractive,
		Usage: "extractive (local), abstractive, rolling, map-reduce, hierarchical or auto"}
}

func summarizeCmd() *cli.Command {
	return command(&cli.Command{
		Name:      "summarize",
		Usage:     "summarize a session, locally or with an LLM; summaries are kept in the lake",
		UsageText: "pos-query summarize [SESSION] [--strategy extractive|abstractive|rolling|map-reduce|hierarchical|auto] [OPTIONS]",
		Description: `Summarizes a session (an id or a unique prefix; default: the most recently
active one of --platform and --project).

Strategies:
   extractive    local, no model (the default): a line of facts (size, span,
                 tools and files used most), the latest chapter labels, and
                 the most informative sentences of the prompts, answers,
                 subagent reports and compaction summaries, in order
   abstractive   one LLM request over the whole session (the first and the
                 latest exchanges when it does not fit one request)
   rolling       the first chunk summarized, then each next chunk folded into
                 the summary so far, in order
   map-reduce    every chunk summarized at once (--concurrency requests in
                 flight), then the part summaries combined
   hierarchical  every level: the chunks' summaries, the session summary made
                 from them, and a two- or three-sentence abstract
   auto          extractive without an LLM; with one, abstractive when the
                 session fits one request, rolling up to 4 chunks,
                 map-reduce beyond

A chunk is a run of whole exchanges within --chunk-tokens (an exchange larger
than a chunk is shortened in its middle). The LLM strategies talk to any
OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp server, LM
Studio): --llm-base-url, --llm-model and --llm-key, or $POS_LLM_BASE_URL,
$POS_LLM_MODEL and $POS_LLM_API_KEY (or $OPENAI_API_KEY). Nothing leaves the
machine with the default strategy.

Summaries are stored in the lake (LAKE/indexed/summaries, view summaries),
keyed by the session, its last message, the strategy, the model and the
options that shape the text: the same call on an unchanged session reuses the
stored summary; once the session has grown, a new one is made. --refresh
makes a new one anyway; --no-store keeps a new one out of the lake.

Markdown by default; --format json for programs.

EXAMPLES:
   pos-query summarize                                   the latest session, extractive
   pos-query summarize 4d5611e5 --strategy hierarchical --llm-base-url http://localhost:11434/v1 --llm-model llama3.1
   POS_LLM_MODEL=gpt-4o-mini pos-query summarize --strategy auto --format json`,
		Flags: append([]cli.Flag{cmdio.LakeFlag(), platformFlag(), projectFlag(), strategyFlag(),
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "markdown (default) or json"},
			&cli.IntFlag{Name: "chunk-tokens", Value: query.DefaultChunkTokens, Usage: "the most session text in one LLM request, in tokens"},
			&cli.IntFlag{Name: "words", Value: query.DefaultSummaryWords, Usage: "the length asked of an LLM summary (chunk summaries: half)"},
			&cli.IntFlag{Name: "sentences", Value: query.DefaultSentences, Usage: "extractive: how many sentences to pick"},
			&cli.BoolFlag{Name: "refresh", Usage: "make a new summary even if the lake holds one for the session as it is"},
			&cli.BoolFlag{Name: "no-store", Usage: "do not store a new summary in the lake"},
		}, llmcfg.Flags()...),
		Action: runSummarize,
	})
}

func runSummarize(c *cli.Context) error {
	format := c.String("format")
	switch format {
	case "", "markdown", "md":
		format = ""
	case "json":
	default:
		return cmdio.UsageError{Err: fmt.Errorf("--format: a summary is markdown or json"), Cmd: "summarize"}
	}
	if c.NArg() > 1 {
		return cmdio.UsageError{Err: fmt.Errorf("give at most one SESSION (got %d arguments)", c.NArg()), Cmd: "summarize"}
	}
	c.Set("format", "")
	e, err := setup(c, true)
	if err != nil {
		return err
	}
	defer e.db.Close()
	s, err := e.db.Summarize(c.Context, query.SummarizeOptions{
		Session: c.Args().First(), Platform: e.platform, Project: c.String("project"),
		Strategy: c.String("strategy"), LLM: llmcfg.Options(c),
		ChunkTokens: c.Int("chunk-tokens"), Words: c.Int("words"), Sentences: c.Int("sentences"),
		Refresh: c.Bool("refresh"), NoStore: c.Bool("no-store"),
	})
	if err != nil {
		return libErr(err)
	}
	if format == "json" {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(c.App.Writer, "%s\n", b)
		return err
	}
	_, err = io.WriteString(c.App.Writer, s.Markdown())
	return err
}

// recentSummary makes the short summary recent --summarize shows above the
// turns.
func recentSummary(c *cli.Context, e *env, ref query.SessionRef) (*query.Summary, error) {
	s, err := e.db.Summarize(c.Context, query.SummarizeOptions{
		Session: ref.SessionID, Platform: ref.Platform,
		Strategy: c.String("strategy"), LLM: llmcfg.Options(c),
		Sentences: 5, Words: 120,
	})
	return s, libErr(err)
}

// printRecentSummary writes the summary above the turns: as a text block
// before a table, as {"summary": …, "turns": […]} in json, as a first
// {"summary": …} line in ndjson; a csv file stays one table, so the summary
// goes to stderr.
func printRecentSummary(e *env, s *query.Summary, turns *query.Table, printTurns func() error) error {
	w := e.c.App.Writer
	head := "Summary (" + s.Strategy
	if s.Model != "" {
		head += ", " + s.Model
	}
	if s.Reused {
		head += ", stored"
	}
	head += "):\n" + strings.TrimSpace(s.Text) + "\n"
	switch e.format {
	case query.FormatTable:
		if _, err := io.WriteString(w, head+"\n"); err != nil {
			return err
		}
	case query.FormatCSV:
		fmt.Fprintf(e.c.App.ErrWriter, "%s", head)
	case query.FormatNDJSON:
		b, err := json.Marshal(map[string]any{"summary": s})
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	case query.FormatJSON:
		var buf bytes.Buffer
		tw := query.NewWriter(&buf, query.FormatJSON, query.WriterOptions{})
		if err := turns.Write(tw); err != nil {
			return err
		}
		if err := tw.Close(); err != nil {
			return err
		}
		b, err := json.Marshal(struct {
			Summary *query.Summary  `json:"summary"`
			Turns   json.RawMessage `json:"turns"`
		}{s, bytes.TrimSpace(buf.Bytes())})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	return printTurns()
}
