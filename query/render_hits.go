package query

import (
	"cmp"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/pos-lake/pos/internal/english"
	"github.com/pos-lake/pos/schema"
)

// Turn blocks show this many lines of a prompt and of a response; json
// has them whole.
const promptLines, responseLines = 4, 6

// TurnBlocks are turns as a terminal shows them: a line with the turn's
// number (and agent), time, model, output tokens and tools, then the prompt
// ("> "), the response, and with tools a line per tool call.
func TurnBlocks(turns []Turn, tools bool, now time.Time) []Block {
	blocks := make([]Block, len(turns))
	for i, t := range turns {
		n := "#" + strconv.FormatInt(t.ExchangeNumber, 10)
		if t.AgentID != "" {
			n = t.AgentID + " " + n
		}
		b := Block{Head: []string{n, relTime(t.TS, now), t.Model, humanize.Comma(t.Output) + " out"}}
		if !tools {
			b.Title = strings.Join(t.Tools, ", ")
		}
		b.Texts = append(b.Texts, Para{Prefix: "  > ", S: t.Prompt, Max: promptLines})
		if t.Response != "" {
			b.Texts = append(b.Texts, Para{Prefix: "    ", S: t.Response, Max: responseLines})
		}
		if tools {
			for _, tc := range t.ToolCalls {
				b.Texts = append(b.Texts, Para{Prefix: "    · ", S: tc.String(), Max: 1})
			}
		}
		blocks[i] = b
	}
	return blocks
}

// SessionHitBlocks are the sessions of a search grouped by session: a line
// with the score, the number of hits, the time and the session id, then the
// session's best hits, each a line of its own after "- ", with its story.
func SessionHitBlocks(sessions []SessionHit, now time.Time) []Block {
	blocks := make([]Block, len(sessions))
	for i, h := range sessions {
		blocks[i] = Block{Head: []string{score(h.Score), english.Plural(h.Hits, "hit"), relTime(h.LastTS, now), h.SessionID},
			Title: h.Title}
		for _, b := range h.Best {
			blocks[i].Texts = append(blocks[i].Texts, Para{Prefix: hitIndent + "- ", S: b.ContentType + ": " + b.Snippet, Max: 2})
			blocks[i].Texts = append(blocks[i].Texts, storyParas(b, hitIndent+"  ")...)
		}
	}
	return blocks
}

// HitBlocks are search hits as a terminal shows them: a line with the
// score, time, type and session id (and how many similar hits it stands
// for), then the snippet, or a tool's lines that match, and the story.
func HitBlocks(hits []SearchHit, now time.Time) []Block {
	blocks := make([]Block, len(hits))
	for i, h := range hits {
		blocks[i] = Block{Head: []string{score(h.Score), relTime(h.TS, now), h.ContentType, h.SessionID},
			Title: h.Title, Texts: []Para{{S: h.Snippet}}}
		if h.Tool != "" || len(h.Lines) > 0 {
			// A tool's chunk: which tool, and its lines that match,
			// each on a line of its own after "> ".
			blocks[i].Head[2] += " (" + cmp.Or(h.Tool, "tool") + ")"
			if len(h.Lines) > 0 {
				blocks[i].Texts = nil
				for _, l := range h.Lines {
					blocks[i].Texts = append(blocks[i].Texts, Para{Prefix: hitIndent + "> ", S: l, Max: 2})
				}
			}
		}
		if h.Duplicates > 0 {
			blocks[i].Head = append(blocks[i].Head, "+"+strconv.Itoa(h.Duplicates)+" similar")
		}
		blocks[i].Texts = append(blocks[i].Texts, storyParas(h, hitIndent)...)
	}
	return blocks
}

// storyParas are the lines of a hit's story: its exchange's prompt (unless
// the hit is the prompt), and when a tool failed, the failure and what
// fixed it.
func storyParas(h SearchHit, indent string) []Para {
	var out []Para
	if h.Prompt != "" && h.ContentType != schema.ContentUserPrompt {
		out = append(out, Para{Prefix: indent + "prompt: ", S: h.Prompt, Max: 1})
	}
	if f := h.Error; f != nil {
		what := cmp.Or(f.Tool, "tool")
		if f.Command != "" {
			what += ": " + f.Command
		}
		out = append(out, Para{Prefix: indent + "failed: ", S: what, Max: 1})
		for _, l := range f.Lines {
			out = append(out, Para{Prefix: indent + "  ! ", S: l, Max: 1})
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
			out = append(out, Para{Prefix: indent + "fixed by: ", S: strings.Join(steps, "; "), Max: 2})
		}
	}
	return out
}

// relTime is a time as tables show it: the date and time in now's zone
// and how long ago it was ("2025-03-04 14:05 (3 days ago)").
func relTime(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(now.Location()).Format("2006-01-02 15:04") + " (" + humanize.RelTime(t, now, "ago", "from now") + ")"
}

// score is a score as tables show it, to two decimals.
func score(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }
