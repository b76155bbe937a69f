package excerpt

import (
	"strings"

	"github.com/pos-lake/pos/schema"
)

// The sizes the lake keeps of texts cut from longer ones, in bytes.
const (
	PromptTitleMax = 120 // a session's title made from its first prompt
	TitleMax       = 200 // any other title: the platform's, the user's, a plan's
	ContextMax     = 200 // a decision's context: the first line of the prompt it answered
	DecisionMax    = 600 // a decision's sentence
)

// SourceMax bounds the lines a derived field carries after its first line
// (Source): enough for a private key block that starts on that line.
const SourceMax = 16 << 10

// Source returns what a field made from text carries until a stage after
// pos-scrub cuts it (Finish): text from its first non-blank line, that line
// whole, and the lines after it while the whole fits in SourceMax bytes.
//
// Cutting before pos-scrub would hand the scrubber the first characters of
// a secret that runs past the cut, which no rule recognises (and a secret
// that a rule still finds, cut, gets another marker than the whole one
// gets). Carried whole, the first line is scrubbed as it is in its source:
// the lines after it let a secret that starts on it and runs on (a private
// key block) be found whole, and given the marker it gets in the source.
func Source(text string) string {
	text = strings.TrimLeft(text, " \t\r\n")
	i := strings.IndexByte(text, '\n')
	if i < 0 {
		return strings.TrimRight(text, " \t\r")
	}
	end := i
	for end < len(text) {
		j := strings.IndexByte(text[end+1:], '\n')
		next := len(text)
		if j >= 0 {
			next = end + 1 + j
		}
		if next > SourceMax {
			break
		}
		end = next
	}
	return strings.TrimRight(text[:end], " \t\r\n")
}

// ContextSource is Source for a field that many records may carry (the
// context of each decision of an exchange): "" when the first line alone is
// longer than SourceMax.
func ContextSource(text string) string {
	text = strings.TrimLeft(text, " \t\r\n")
	head := text[:min(len(text), SourceMax+1)]
	if strings.IndexByte(head, '\n') < 0 && len(text) > SourceMax {
		return ""
	}
	return Source(text)
}

// SourceOf returns what a field made from text[start:end] (a sentence)
// carries until a stage after pos-scrub cuts it: text from start, through
// end, and on to the last line end within SourceMax bytes past end (or
// SourceMax bytes past it, if no line ends there).
func SourceOf(text string, start, end int) string {
	s, end := text[start:], end-start
	limit := end + SourceMax
	if limit >= len(s) {
		return strings.TrimRight(s, " \t\r\n")
	}
	if i := strings.LastIndexByte(s[end:limit], '\n'); i >= 0 {
		return strings.TrimRight(s[:end+i], " \t\r")
	}
	return s[:Back(s, limit)]
}

// Sentence returns the first sentence of s, cut to at most n bytes as Line
// cuts: up to the first '.', '!' or '?' before a space or the end of the
// first line, or that line whole (the rule pos-normalize finds decisions
// by).
func Sentence(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	for i := 0; i < len(s); i++ {
		if k := MarkerLen(s[i:]); k > 0 {
			i += k - 1
			continue
		}
		if c := s[i]; (c == '.' || c == '!' || c == '?') && (i+1 == len(s) || s[i+1] == ' ') {
			s = s[:i+1]
			break
		}
	}
	return Line(s, n)
}

// titleMax returns the size the lake keeps of rec's title.
func titleMax(rec *schema.Record) int {
	switch rec.Kind {
	case schema.KindSession:
		if rec.Session != nil && rec.Session.TitleSource == schema.TitlePrompt {
			return PromptTitleMax
		}
	case schema.KindDocument, schema.KindChunk:
		// A subagent's report is titled "<agent type>: <its prompt>".
		if rec.ContentType == schema.ContentSubagentSummary && rec.Agent != nil && rec.Agent.Type != "" {
			return len(rec.Agent.Type) + len(": ") + PromptTitleMax
		}
	}
	return TitleMax
}

// Title returns the title the lake keeps for rec: its first line, cut to
// the size of its kind.
func Title(rec *schema.Record) string { return Line(rec.Title, titleMax(rec)) }

// Finish makes the fields of rec that the lake keeps cut: the title of a
// session, document or chunk (its first line, PromptTitleMax or TitleMax
// bytes), a decision's sentence (its first, DecisionMax) and context (ContextMax). It
// reports whether anything changed, and then clears rec.Line.
//
// pos-normalize and the extractors leave these fields whole (Source); the
// stages after pos-scrub (pos-embed, pos-load) call Finish, so a field is
// cut from redacted text and never splits a marker. Without pos-scrub in
// the pipe the lake gets the same fields. Finish is idempotent.
func Finish(rec *schema.Record) bool {
	changed := false
	set := func(p *string, v string) {
		if *p != v {
			*p, changed = v, true
		}
	}
	switch rec.Kind {
	case schema.KindSession, schema.KindDocument, schema.KindChunk:
		set(&rec.Title, Title(rec))
	case schema.KindDecision:
		set(&rec.Text, Sentence(rec.Text, DecisionMax))
		if rec.Decision != nil {
			if c := Line(rec.Decision.Context, ContextMax); c != rec.Decision.Context {
				d := *rec.Decision
				d.Context = c
				rec.Decision, changed = &d, true
			}
		}
	}
	if changed {
		rec.Line = nil
	}
	return changed
}
