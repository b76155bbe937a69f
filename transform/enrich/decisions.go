package enrich

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/internal/keyword"
)

// Pattern is a weighted sign that a sentence states a decision.
type Pattern struct {
	Name string
	// Expr is the regular expression (RE2 syntax) a sentence must match,
	// compiled when the first text is read with the pattern: a program
	// that imports the package for its other parts compiles none.
	Expr   string
	Weight float64
	// Keywords are strings the pattern cannot match without one of
	// (ASCII case ignored), at least two bytes long: a cheap test before
	// the regular expression runs.
	Keywords []string
}

// DefaultPatterns are the design notes' patterns and weights, and the
// kinds of decision they left out: fixes that worked and what was wrong,
// options ruled out, users' standing instructions, and the same in the
// other languages people write to agents in.
var DefaultPatterns = []Pattern{
	{"lets_use", `(?i)\blet['’]?s (go with|use|choose|pick|stick with|switch to)\b`, 0.9, []string{"let's", "let’s", "lets "}},
	{"decided_to", `(?i)\bdecided (to|on|that)\b`, 0.9, []string{"decided"}},
	{"approach_is", `(?i)\bthe approach (is|will be)\b`, 0.8, []string{"approach"}},
	{"choosing_over", `(?i)\bchoos(e|ing) \S.{0,80}? over\b`, 0.9, []string{"choos"}},
	{"going_with", `(?i)\b(we|i)('ll| will| are|'re| am|'m) go(ing)? with\b`, 0.8, []string{"go with", "going with"}},
	{"architecture", `(?i)\barchitecture\b.{0,120}\b(should|will)\b`, 0.7, []string{"architecture"}},
	{"pattern_for", `(?i)\bpattern for this\b`, 0.7, []string{"pattern"}},
	{"dont_because", `(?i)\b(don'?t|do not) (do|use)\b.{0,160}\bbecause\b`, 0.8, []string{"don't", "dont", "do not"}},
	{"avoid_because", `(?i)\bavoid\b.{0,160}\bbecause\b`, 0.8, []string{"avoid"}},
	{"failed_approach", `(?i)\bthis (broke|failed)\b`, 0.7, []string{"this broke", "this failed"}},
	{"remember_this", `(?i)\bremember (this|that)\b`, 1.0, []string{"remember th"}},
	{"note_future", `(?i)\bnote for (the )?(future|later)\b`, 1.0, []string{"note for"}},
	{"decision_is", `(?i)\b(the |our )?decision (is|was)\b`, 0.9, []string{"decision"}},
	// Choices stated in passing, as agents write them.
	{"prefer_over", `(?i)\bprefer(s|red|ring)?\b.{1,80}\bover\b`, 0.75, []string{"prefer"}},
	{"instead_of", `(?i)\b(use|using|used|switch(ed)? to|went with|chose|opted for)\b.{1,80}\binstead of\b`, 0.7, []string{"instead of"}},
	{"rather_than", `(?i)\b(use|using|keep|go with)\b.{1,80}\brather than\b`, 0.6, []string{"rather than"}},
	{"will_use", `(?i)\b(i|we)('ll| will| are going to) use\b`, 0.6, []string{"i'll use", "we'll use", "i will use", "we will use", "going to use"}},
	// Fixes that worked, as agents report them, and what they found wrong.
	{"fixed_by", `(?i)\b(fixed|solved|resolved|worked around)\b.{0,60}\b(by|with|using)\b`, 0.8, []string{"fixed", "solved", "resolved", "worked around"}},
	{"the_fix_is", `(?i)\bthe (fix|solution|workaround|answer|right approach|better approach|simplest approach|cleanest approach|simplest fix) (is|was|will be)\b`, 0.85, []string{"fix", "solution", "workaround", "answer", "approach"}},
	{"cause_is", `(?i)\bthe (real |root )?(issue|problem|bug|cause|culprit) (is|was) (that|the|a|an|because)\b`, 0.7, []string{"issue", "problem", "bug", "cause", "culprit"}},
	{"switched_to", `(?i)\b(switch(ed|ing)?|migrat(e|ed|ing)|fall(ing)? back|fell back) (over )?to\b`, 0.7, []string{"switch", "migrat", "fall back", "falling back", "fell back"}},
	{"replace_with", `(?i)\b(replac(e|ed|ing)|rewr(ite|ote|iting))\b.{1,80}\b(with|using|as)\b`, 0.6, []string{"replac", "rewr"}},
	{"need_to_change", `(?i)\b(i|we) (need|have) to (use|rewrite|switch|replace|restructure|convert|move|drop|remove|pin)\b`, 0.6, []string{"need to", "have to"}},
	// Options ruled out.
	{"not_supported", `(?i)\b(doesn'?t|does not|don'?t|do not|won'?t|will not|can'?t|cannot) (support|work|allow|handle)\b`, 0.6, []string{"doesn", "does not", "don", "do not", "won", "will not", "can", "cannot"}},
	{"use_not", `(?i)\buse \S.{0,60}, not\b`, 0.8, []string{"use "}},
	// Instructions and constraints, as users give them: an order that
	// holds beyond the sentence.
	{"always_never", `(?i)^(?:[-*•>]\s+|\d+[.)]\s+)?(please )?(always|never|don'?t ever|do not ever|make sure( to| that)?|be sure to|remember to)\b`, 0.85, []string{"always", "never", "ever", "make sure", "be sure", "remember to"}},
	{"must_always", `(?i)\b(you|we|it|they) (must|should|shall)( always| never| not|n'?t)\b`, 0.8, []string{"must", "should", "shall"}},
	{"from_now_on", `(?i)\b(from now on|going forward|in future|in the future)\b`, 0.8, []string{"from now on", "going forward", "in future", "in the future"}},
	// The same in the other languages users write to agents in. Go's \b
	// knows ASCII letters only, so these are bounded by spaces and
	// punctuation; the keywords leave out a word's first letter, which
	// the prefilter compares in ASCII case only.
	{"ru_decided", `(?i)(решили|решено|решение\s+(такое|—|-|:)|давай(те)?\s+(использ|возьм|остав|перейд|сдела)|будем\s+использовать|используем\s+\S.{0,80}вместо|лучше\s+использовать)`, 0.85, []string{"ешил", "ешено", "ешение", "авай", "удем", "спользуем", "учше"}},
	{"ru_always", `(?i)(^|[\s,.:;!])(всегда|никогда\s+не|не\s+используй(те)?)\s`, 0.8, []string{"сегда", "икогда", "спользуй"}},
	{"de_decided", `(?i)\b(wir haben uns (für|entschieden)|entschieden|lass(t)? uns \S+ (verwenden|nehmen|nutzen|benutzen)|wir (verwenden|nehmen|nutzen) \S.{0,80}(statt|anstatt|anstelle))\b`, 0.8, []string{"entschieden", "lass uns", "lasst uns", "statt", "anstelle"}},
	{"de_always", `(?i)^(?:[-*•>]\s+|\d+[.)]\s+)?(bitte )?(immer|niemals|nie wieder|verwende nie|benutze nie|achte darauf)\b`, 0.8, []string{"immer", "niemals", "nie ", "achte darauf"}},
	{"fr_decided", `(?i)(\bon a décidé|\bnous avons décidé|\bdécidé d|\butilisons\b|\bon (va )?utilise(r)? \S.{0,80}(au lieu d|plutôt que)|\bau lieu d(e |')|\bplutôt que\b)`, 0.8, []string{"décidé", "utilisons", "au lieu d", "plutôt que"}},
	{"fr_always", `(?i)^(?:[-*•>]\s+|\d+[.)]\s+)?(merci de |s'il te plaît,? )?(toujours|jamais|ne jamais|n'utilise jamais|assure-toi)\b`, 0.8, []string{"toujours", "jamais", "assure-toi"}},
	{"es_decided", `(?i)\b(decidimos|hemos decidido|vamos a (usar|utilizar)|usemos|utilicemos|en lugar de|en vez de)\b`, 0.8, []string{"decidimos", "decidido", "vamos a", "usemos", "utilicemos", "en lugar de", "en vez de"}},
	{"es_always", `(?i)^(?:[-*•>]\s+|\d+[.)]\s+)?(por favor,? )?(siempre|nunca|no uses|asegúrate)\b`, 0.8, []string{"siempre", "nunca", "no uses", "asegúrate"}},
}

// Thresholds: at or above DecisionAt a match is a decision; from
// CandidateAt it is a candidate; below, it is not reported.
const (
	DecisionAt  = 0.8
	CandidateAt = 0.5
)

// Found is a sentence that states a decision or may.
type Found struct {
	Text string
	// Source is the text from the sentence on: the sentence, the rest of
	// its line and the lines after it, up to excerpt.SourceMax bytes past
	// it. A decision record carries it, and a stage after pos-scrub cuts
	// the sentence from it (excerpt.Finish), so that a secret that starts
	// in the sentence and runs on past its end (a private key block) is
	// redacted as it is in the message.
	Source     string
	Confidence float64
	Patterns   []string
	Status     string // "decision" or "candidate"
}

// Decisions finds the sentences of a text that match decision patterns (a
// list is compiled at its first use: it must not change after).
// Confidence is the best pattern's weight, plus 0.05 for each other
// pattern the sentence also matches, at most 1.
func Decisions(patterns []Pattern, text string) []Found {
	return detectorFor(patterns).find(text)
}

// A detector runs a pattern's regular expression only on a sentence that
// holds one of its keywords: one pass of a keyword.Matcher finds them all,
// where a strings.Contains per keyword took a pass each (and a lowered copy
// of the text).
type detector struct {
	patterns []Pattern
	res      []*regexp.Regexp // the patterns' expressions, compiled
	kw       *keyword.Matcher
	of       [][]int // keyword id -> the patterns it belongs to
}

func newDetector(patterns []Pattern) *detector {
	var words []string
	for _, p := range patterns {
		words = append(words, p.Keywords...)
	}
	d := &detector{patterns: patterns, res: make([]*regexp.Regexp, len(patterns))}
	for i, p := range patterns {
		d.res[i] = regexp.MustCompile(p.Expr)
	}
	var ids map[string]int
	d.kw, ids = keyword.New(words)
	d.of = make([][]int, len(d.kw.Words()))
	for i, p := range patterns {
		for _, k := range p.Keywords {
			id := ids[strings.ToLower(k)]
			if !slices.Contains(d.of[id], i) {
				d.of[id] = append(d.of[id], i)
			}
		}
	}
	return d
}

var defaultDetector = sync.OnceValue(func() *detector { return newDetector(DefaultPatterns) })

// detectors are the detectors built for pattern lists other than the
// default, by the list's first element and length: a caller passes the
// same list for each text.
var detectors sync.Map // listKey -> *detector

type listKey struct {
	first *Pattern
	n     int
}

// detectorFor returns the detector of a pattern list, built once per list.
func detectorFor(patterns []Pattern) *detector {
	if len(patterns) == 0 {
		return newDetector(nil)
	}
	if len(patterns) == len(DefaultPatterns) && &patterns[0] == &DefaultPatterns[0] {
		return defaultDetector()
	}
	k := listKey{&patterns[0], len(patterns)}
	if d, ok := detectors.Load(k); ok {
		return d.(*detector)
	}
	d, _ := detectors.LoadOrStore(k, newDetector(patterns))
	return d.(*detector)
}

// candidates reports, per pattern, whether text holds one of its keywords;
// nil when it holds none.
func (d *detector) candidates(text string) []bool {
	var may []bool
	keyword.Each(d.kw, text, func(_, id int) {
		if may == nil {
			may = make([]bool, len(d.patterns))
		}
		for _, i := range d.of[id] {
			may[i] = true
		}
	})
	return may
}

func (d *detector) find(text string) []Found {
	if d.candidates(text) == nil {
		return nil
	}
	var out []Found
	for _, sp := range sentenceSpans(text) {
		s := text[sp[0]:sp[1]]
		may := d.candidates(s)
		if may == nil {
			continue
		}
		var f Found
		best := 0.0
		for i := range d.patterns {
			p := &d.patterns[i]
			if !may[i] || !d.res[i].MatchString(s) {
				continue
			}
			best = max(best, p.Weight)
			f.Patterns = append(f.Patterns, p.Name)
		}
		if len(f.Patterns) == 0 {
			continue
		}
		f.Confidence = min(1, best+0.05*float64(len(f.Patterns)-1))
		f.Confidence = float64(int(f.Confidence*100+0.5)) / 100
		switch {
		case f.Confidence >= DecisionAt:
			f.Status = "decision"
		case f.Confidence >= CandidateAt:
			f.Status = "candidate"
		default:
			continue
		}
		f.Text = s
		f.Source = excerpt.SourceOf(text, sp[0], sp[1])
		out = append(out, f)
	}
	return out
}

// sentences splits a text into sentences, keeping list items and lines
// apart, and drops fenced code blocks (a decision is prose).
func sentences(text string) []string {
	var out []string
	for _, sp := range sentenceSpans(text) {
		out = append(out, text[sp[0]:sp[1]])
	}
	return out
}

// sentenceSpans returns where the sentences of text are (see sentences):
// a sentence ends at '.', '!' or '?' before a space or the line's end, or
// at the line's end (excerpt.Sentence cuts one the same way).
func sentenceSpans(text string) [][2]int {
	var out [][2]int
	inFence := false
	add := func(base int, t string) {
		trimmed := strings.TrimSpace(t)
		if len(trimmed) > 3 {
			start := base + len(t) - len(strings.TrimLeftFunc(t, unicode.IsSpace))
			out = append(out, [2]int{start, start + len(trimmed)})
		}
	}
	for at := 0; at <= len(text); {
		line := text[at:]
		next := len(text) + 1
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], at+i+1
		}
		t := strings.TrimSpace(line)
		base := at + len(line) - len(strings.TrimLeftFunc(line, unicode.IsSpace))
		at = next
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || t == "" {
			continue
		}
		start := 0
		for i := 0; i < len(t); i++ {
			c := t[i]
			if (c == '.' || c == '!' || c == '?') && (i+1 == len(t) || t[i+1] == ' ') {
				add(base+start, t[start:i+1])
				start = i + 1
			}
		}
		add(base+start, t[start:])
	}
	return out
}

// After is the sentence that follows a decision's sentence in the text it
// was found in (what was done about it, or why), cut to at most n bytes
// as excerpt.Sentence cuts: "" when text does not hold the sentence or
// nothing follows it. sentence is a decision's text as the lake keeps it
// (excerpt.Sentence of the sentence, so maybe cut short), and text the
// message's, both as pos-scrub left them.
func After(text, sentence string, n int) string {
	want := strings.TrimSuffix(strings.TrimSpace(sentence), excerpt.Ellipsis)
	if want == "" || !strings.Contains(text, want) {
		return ""
	}
	spans := sentenceSpans(text)
	for i, sp := range spans {
		if strings.HasPrefix(text[sp[0]:sp[1]], want) && i+1 < len(spans) {
			return excerpt.Sentence(text[spans[i+1][0]:spans[i+1][1]], n)
		}
	}
	return ""
}
