package query

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
	"github.com/pos-lake/pos/internal/english"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/internal/oaiwire"
	openai "github.com/sashabaranov/go-openai"
	"golang.org/x/sync/errgroup"
)

// LLMOptions reach an OpenAI-compatible chat completions endpoint (OpenAI,
// Ollama, vLLM, llama.cpp server, LM Studio …).
type LLMOptions struct {
	BaseURL string // default https://api.openai.com/v1
	Model   string // required by the LLM strategies
	APIKey  string // sent as a bearer token; none when empty
	// Timeout bounds one request (default 2 minutes). A request that
	// times out is not retried.
	Timeout time.Duration
	// Retries of a request on 429, 5xx and network errors (default 3;
	// negative: none), waiting Backoff (default 1s) doubled each time,
	// with jitter, or what a 429's Retry-After says.
	Retries int
	Backoff time.Duration
	// Concurrency bounds the requests in flight in the map step of
	// map-reduce and hierarchical (default 4).
	Concurrency int
}

// DefaultLLMBaseURL is the endpoint used when LLMOptions.BaseURL is empty.
const DefaultLLMBaseURL = "https://api.openai.com/v1"

// ErrLLM marks an answer of the endpoint that a retry will not change: a
// rejected key, an unknown model, a refused request, an empty answer.
var ErrLLM = errors.New("LLM error")

type llmClient struct {
	client      *openai.Client
	opt         LLMOptions
	sleep       func(ctx context.Context, d time.Duration) error
	calls       atomic.Int64
	in, out     atomic.Int64
	mu          sync.Mutex
	truncations int
}

func newLLM(o LLMOptions) (*llmClient, error) {
	if o.Model == "" {
		return nil, argErrorf("no LLM model given")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultLLMBaseURL
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	o.Retries = oaiwire.Retries(o.Retries, 3)
	o.Backoff = oaiwire.Backoff(o.Backoff)
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	// o.Timeout bounds each attempt through its context.
	return &llmClient{client: oaiwire.NewClient(o.BaseURL, o.APIKey, 0), opt: o, sleep: oaiwire.Sleep}, nil
}

func (l *llmClient) notes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.truncations > 0 {
		return []string{fmt.Sprintf("the model stopped %s at its length limit", english.Plural(l.truncations, "answer"))}
	}
	return nil
}

// chat sends one request, retrying what a retry may fix.
func (l *llmClient) chat(ctx context.Context, system, user string) (string, error) {
	req := openai.ChatCompletionRequest{
		Model: l.opt.Model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: user},
		},
	}
	for attempt := 0; ; attempt++ {
		hctx, hint := oaiwire.WithHint(ctx)
		actx, cancel := context.WithTimeout(hctx, l.opt.Timeout)
		res, err := l.client.CreateChatCompletion(actx, req)
		timedOut := actx.Err() == context.DeadlineExceeded
		cancel()
		l.calls.Add(1)
		if err == nil {
			l.in.Add(int64(res.Usage.PromptTokens))
			l.out.Add(int64(res.Usage.CompletionTokens))
			if len(res.Choices) == 0 || strings.TrimSpace(res.Choices[0].Message.Content) == "" {
				return "", fmt.Errorf("%w: model %q at %s returned an empty answer", ErrLLM, l.opt.Model, l.opt.BaseURL)
			}
			if res.Choices[0].FinishReason == openai.FinishReasonLength {
				l.mu.Lock()
				l.truncations++
				l.mu.Unlock()
			}
			return strings.TrimSpace(res.Choices[0].Message.Content), nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if timedOut {
			return "", fmt.Errorf("the LLM at %s did not answer within %s (raise --timeout for a slow model)", l.opt.BaseURL, l.opt.Timeout)
		}
		status, msg := oaiwire.ErrorStatus(err)
		if !oaiwire.Retryable(status) || attempt >= l.opt.Retries {
			return "", l.explain(status, msg, err, attempt)
		}
		if err := l.sleep(ctx, oaiwire.Wait(l.opt.Backoff, attempt, hint)); err != nil {
			return "", err
		}
	}
}

// explain turns a failed request into an error that says what to do.
func (l *llmClient) explain(status int, msg string, err error, attempt int) error {
	at := l.opt.BaseURL
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%w: %s rejected the API key (HTTP %d: %s); set --llm-key or $POS_LLM_API_KEY ($OPENAI_API_KEY)",
			ErrLLM, at, status, msg)
	case status == http.StatusNotFound || (status == http.StatusBadRequest && strings.Contains(strings.ToLower(msg), "model")):
		return fmt.Errorf("%w: model %q is not served at %s (HTTP %d: %s); check --llm-model and --llm-base-url",
			ErrLLM, l.opt.Model, at, status, msg)
	case status >= 400 && status < 500 && status != http.StatusTooManyRequests:
		return fmt.Errorf("%w: %s refused the request for model %q (HTTP %d: %s)", ErrLLM, at, l.opt.Model, status, msg)
	}
	what := fmt.Sprintf("HTTP %d: %s", status, msg)
	if status == 0 {
		what = err.Error()
	}
	return fmt.Errorf("the LLM at %s failed after %s: %s", at, english.Plural(attempt+1, "attempt"), what)
}

// The prompts. Each request is the system prompt and one user message:
// an instruction, the session's header (title, facts, labels) and the
// text.
const (
	systemPrompt = `You summarize transcripts of work sessions between a developer and an AI coding agent. ` +
		`Be factual and specific: name the files, commands, tools, decisions, errors and fixes that matter. ` +
		`Never invent anything the transcript does not say. Write plain Markdown without a preamble.`
	abstractivePrompt = `Summarize this coding-agent session in at most %d words. Cover the goal, what was done, ` +
		`the decisions made and why, the problems hit and how they were solved, and where it ended: what is finished ` +
		`and what is still open.`
	mapPrompt = `Below is part %d of %d of a coding-agent session (%s). Summarize this part in at most %d words: ` +
		`what was asked, what was done, decisions and their reasons, problems and fixes, and anything left open at its end.`
	reducePrompt = `Below are summaries of consecutive parts of one coding-agent session, in order. Combine them into one ` +
		`summary of %s in at most %d words. Keep the goal, the decisions and their reasons, the problems and their fixes, ` +
		`and the state at the end (what is finished, what is open); drop what later parts superseded.`
	rollingPrompt = `Below is the summary of a coding-agent session so far, then the next part of its transcript ` +
		`(part %d of %d, %s). Write the updated summary of the session so far in at most %d words: keep what still ` +
		`matters from the summary (the goal, decisions, open problems), add what the new part did, and update what it changed.`
	abstractPrompt = `Write an abstract of this coding-agent session in two or three sentences: its goal, its outcome, ` +
		`and what is left open.`
)

// promptReserve is the part of a request's token budget kept for the
// instructions and the session's header; rolling also needs room for the
// summary so far (about two tokens a word, to err high).
const promptReserve = 600

// contentBudget is the most transcript tokens one request carries.
func contentBudget(opt SummarizeOptions) int {
	return max(500, opt.ChunkTokens-promptReserve-2*opt.Words)
}

// chunk is a run of consecutive segments that fits one request.
type chunk struct {
	text        string
	first, last int64 // exchange numbers (0: no exchange)
	from, to    time.Time
}

func (c chunk) part(text string) SummaryPart {
	return SummaryPart{First: c.first, Last: c.last, From: c.from, To: c.to, Text: text}
}

func (c chunk) span() string { return c.part("").span() }

// chunkSegments packs the segments, rendered, into chunks of at most
// budget tokens, in order; a segment larger than a chunk is shortened in
// its middle.
func chunkSegments(segs []segment, budget int) []chunk {
	var out []chunk
	var cur chunk
	var b strings.Builder
	used := 0
	flush := func() {
		if b.Len() > 0 {
			cur.text = b.String()
			out = append(out, cur)
		}
		cur, used = chunk{}, 0
		b.Reset()
	}
	for _, s := range segs {
		text := renderSegment(s, budget)
		t := EstimateTokens(text)
		if used > 0 && used+t > budget {
			flush()
		}
		b.WriteString(text)
		used += t
		if s.kind == "exchange" {
			if cur.first == 0 {
				cur.first = s.number
			}
			cur.last = s.number
		}
		if cur.from.IsZero() {
			cur.from = s.ts
		}
		cur.to = s.ts
	}
	flush()
	return out
}

// renderSegment writes a segment as the transcript a model reads, within
// budget tokens.
func renderSegment(s segment, budget int) string {
	when := ""
	if !s.ts.IsZero() {
		when = " (" + s.ts.UTC().Format("2006-01-02 15:04") + " UTC)"
	}
	var b strings.Builder
	switch s.kind {
	case "exchange":
		who := ""
		if s.agent != "" {
			who = ", subagent " + s.agent
		}
		fmt.Fprintf(&b, "### Exchange %d%s%s\n", s.number, who, when)
		if p := strings.TrimSpace(s.prompt); p != "" {
			b.WriteString("User: " + p + "\n")
		}
		if r := strings.TrimSpace(s.response); r != "" {
			b.WriteString("Agent: " + r + "\n")
		}
		if len(s.tools) > 0 {
			fmt.Fprintf(&b, "Tools (%d calls): %s\n", s.toolCount, strings.Join(s.tools, ", "))
		}
		if len(s.files) > 0 {
			files := s.files[:min(len(s.files), 12)]
			fmt.Fprintf(&b, "Files: %s\n", strings.Join(files, ", "))
		}
	case "report":
		fmt.Fprintf(&b, "### Subagent report%s\n", when)
		if s.title != "" {
			b.WriteString("Task: " + OneLine(s.title) + "\n")
		}
		b.WriteString(strings.TrimSpace(s.response) + "\n")
	default:
		fmt.Fprintf(&b, "### Compaction summary written by the agent%s\n", when)
		b.WriteString(strings.TrimSpace(s.response) + "\n")
	}
	b.WriteString("\n")
	return shorten(b.String(), budget)
}

// shorten cuts the middle of a text until its token estimate is within
// budget, saying how much was left out.
func shorten(text string, budget int) string {
	if EstimateTokens(text) <= budget {
		return text
	}
	n := utf8.RuneCountInString(text)
	keep := min(n, budget*3)
	for {
		// Cut beside a redaction marker, never inside one.
		head, tail := excerpt.PrefixRunes(text, keep*2/3), excerpt.SuffixRunes(text, keep/3)
		left := n - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail)
		cut := head + fmt.Sprintf("\n[… %s characters left out …]\n", humanize.Comma(int64(left))) + tail
		if EstimateTokens(cut) <= budget || keep < 100 {
			return cut
		}
		keep = keep * 4 / 5
	}
}

// header describes the session to the model.
func (m *material) header() string {
	var b strings.Builder
	title := m.ref.Title
	if title == "" {
		title = m.ref.SessionID
	}
	fmt.Fprintf(&b, "Session: %s\nPlatform: %s", OneLine(title), m.ref.Platform)
	if m.ref.Project != "" {
		fmt.Fprintf(&b, "; project: %s", m.ref.Project)
	}
	fmt.Fprintf(&b, "\nFacts: %s\n", m.facts())
	if len(m.labels) > 0 {
		labels := m.labels[max(0, len(m.labels)-10):]
		fmt.Fprintf(&b, "Chapter labels the agent gave it: %s\n", strings.Join(labels, "; "))
	}
	return b.String()
}

// summarizeLLM makes an LLM summary of the material with a strategy.
func summarizeLLM(ctx context.Context, l *llmClient, m *material, strategy string, opt SummarizeOptions, s *Summary) error {
	if len(m.segments) == 0 {
		s.Text = "The session holds no exchanges, reports or compaction summaries to summarize."
		return nil
	}
	budget := contentBudget(opt)
	chunks := chunkSegments(m.segments, budget)
	head := m.header()
	words, partWords := opt.Words, max(80, opt.Words/2)
	var err error
	switch strategy {
	case StrategyAbstractive:
		text, left := fitOneRequest(m.segments, budget)
		if left > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("abstractive: %s of %s did not fit one request of %s tokens and were left out "+
				"(the first and the latest were kept); rolling, map-reduce or hierarchical read the whole session",
				english.Plural(left, "segment"), english.Plural(len(m.segments), "segment"), humanize.Comma(int64(opt.ChunkTokens))))
		}
		s.Text, err = l.chat(ctx, systemPrompt, fmt.Sprintf(abstractivePrompt, words)+"\n\n"+head+"\nTranscript:\n"+text)
	case StrategyRolling:
		s.Text, err = rolling(ctx, l, chunks, head, words)
		if err == nil && len(chunks) > 1 {
			s.Notes = append(s.Notes, fmt.Sprintf("rolling: %s folded in order", english.Plural(len(chunks), "chunk")))
		}
	case StrategyMapReduce:
		if len(chunks) == 1 {
			s.Text, err = l.chat(ctx, systemPrompt, fmt.Sprintf(abstractivePrompt, words)+"\n\n"+head+"\nTranscript:\n"+chunks[0].text)
			break
		}
		var parts []SummaryPart
		if parts, err = mapChunks(ctx, l, chunks, head, partWords); err != nil {
			break
		}
		var final SummaryPart
		final, _, err = reduceParts(ctx, l, parts, head, words, budget)
		s.Text = final.Text
		s.Notes = append(s.Notes, fmt.Sprintf("map-reduce: %s summarized concurrently (at most %d at once), then combined",
			english.Plural(len(chunks), "chunk"), l.opt.Concurrency))
	case StrategyHierarchical:
		err = hierarchical(ctx, l, chunks, head, words, partWords, budget, s)
	default:
		return argErrorf("%s is not an LLM strategy", strategy)
	}
	return err
}

// fitOneRequest renders the first segment and the latest that fit beside
// it, and says how many were left out.
func fitOneRequest(segs []segment, budget int) (string, int) {
	all := make([]string, len(segs))
	total := 0
	for i, s := range segs {
		all[i] = renderSegment(s, budget)
		total += EstimateTokens(all[i])
	}
	if total <= budget {
		return strings.Join(all, ""), 0
	}
	first := shorten(all[0], budget/3)
	used := EstimateTokens(first) + 20
	from := len(segs)
	for i := len(segs) - 1; i > 0; i-- {
		t := EstimateTokens(all[i])
		if used+t > budget {
			break
		}
		used += t
		from = i
	}
	left := from - 1
	return first + fmt.Sprintf("[… %s left out …]\n\n", english.Plural(left, "segment")) + strings.Join(all[from:], ""), left
}

func rolling(ctx context.Context, l *llmClient, chunks []chunk, head string, words int) (string, error) {
	n := len(chunks)
	if n == 1 {
		return l.chat(ctx, systemPrompt, fmt.Sprintf(abstractivePrompt, words)+"\n\n"+head+"\nTranscript:\n"+chunks[0].text)
	}
	summary, err := l.chat(ctx, systemPrompt, fmt.Sprintf(mapPrompt, 1, n, chunks[0].span(), words)+"\n\n"+head+
		fmt.Sprintf("\nTranscript, part 1 of %d:\n", n)+chunks[0].text)
	if err != nil {
		return "", err
	}
	for i := 1; i < n; i++ {
		summary, err = l.chat(ctx, systemPrompt, fmt.Sprintf(rollingPrompt, i+1, n, chunks[i].span(), words)+"\n\n"+head+
			"\nSummary so far:\n"+summary+"\n\nNext part of the transcript:\n"+chunks[i].text)
		if err != nil {
			return "", err
		}
	}
	return summary, nil
}

// mapChunks summarizes the chunks concurrently (at most Concurrency
// requests at once), keeping their order. The first error cancels the
// rest.
func mapChunks(ctx context.Context, l *llmClient, chunks []chunk, head string, words int) ([]SummaryPart, error) {
	parts := make([]SummaryPart, len(chunks))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(l.opt.Concurrency)
	for i, c := range chunks {
		g.Go(func() error {
			text, err := l.chat(gctx, systemPrompt, fmt.Sprintf(mapPrompt, i+1, len(chunks), c.span(), words)+"\n\n"+head+
				fmt.Sprintf("\nTranscript, part %d of %d:\n", i+1, len(chunks))+c.text)
			if err != nil {
				return fmt.Errorf("part %d of %d: %w", i+1, len(chunks), err)
			}
			parts[i] = c.part(text)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return parts, nil
}

// reduceParts combines part summaries into one. When they do not fit one
// request, consecutive parts are combined in groups that do (concurrently),
// level by level, until they fit; the intermediate levels are returned.
func reduceParts(ctx context.Context, l *llmClient, parts []SummaryPart, head string, words, budget int) (SummaryPart, [][]SummaryPart, error) {
	var levels [][]SummaryPart
	for {
		text := renderParts(parts)
		if EstimateTokens(text) <= budget || len(parts) <= 2 {
			out, err := l.chat(ctx, systemPrompt, fmt.Sprintf(reducePrompt, "the whole session", words)+"\n\n"+head+
				"\nPart summaries:\n\n"+shorten(text, budget))
			whole := SummaryPart{First: parts[0].First, Last: parts[len(parts)-1].Last, From: parts[0].From, To: parts[len(parts)-1].To, Text: out}
			return whole, levels, err
		}
		groups := groupParts(parts, budget)
		next := make([]SummaryPart, len(groups))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(l.opt.Concurrency)
		for i, grp := range groups {
			g.Go(func() error {
				p := SummaryPart{First: grp[0].First, Last: grp[len(grp)-1].Last, From: grp[0].From, To: grp[len(grp)-1].To}
				out, err := l.chat(gctx, systemPrompt, fmt.Sprintf(reducePrompt, strings.ToLower(p.span()), max(80, words/2))+
					"\n\n"+head+"\nPart summaries:\n\n"+shorten(renderParts(grp), budget))
				p.Text = out
				next[i] = p
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return SummaryPart{}, nil, err
		}
		levels = append(levels, next)
		parts = next
	}
}

// groupParts packs consecutive parts into groups that fit budget, at least
// two to a group so that every level halves the parts or better.
func groupParts(parts []SummaryPart, budget int) [][]SummaryPart {
	var out [][]SummaryPart
	var cur []SummaryPart
	used := 0
	for _, p := range parts {
		t := EstimateTokens(renderParts([]SummaryPart{p}))
		if len(cur) >= 2 && used+t > budget {
			out = append(out, cur)
			cur, used = nil, 0
		}
		cur = append(cur, p)
		used += t
	}
	if len(cur) == 1 && len(out) > 0 {
		out[len(out)-1] = append(out[len(out)-1], cur[0])
	} else if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func renderParts(parts []SummaryPart) string {
	var b strings.Builder
	for i, p := range parts {
		fmt.Fprintf(&b, "## Part %d: %s\n\n%s\n\n", i+1, p.span(), strings.TrimSpace(p.Text))
	}
	return b.String()
}

// hierarchical makes every level: the chunks' summaries (concurrently),
// any intermediate sections, the session summary, the abstract.
func hierarchical(ctx context.Context, l *llmClient, chunks []chunk, head string, words, partWords, budget int, s *Summary) error {
	var parts []SummaryPart
	var session SummaryPart
	if len(chunks) == 1 {
		text, err := l.chat(ctx, systemPrompt, fmt.Sprintf(abstractivePrompt, words)+"\n\n"+head+"\nTranscript:\n"+chunks[0].text)
		if err != nil {
			return err
		}
		parts = []SummaryPart{chunks[0].part(text)}
		session = parts[0]
		s.Notes = append(s.Notes, "hierarchical: the session fits one chunk, so its chunk summary is its session summary")
		s.Levels = append(s.Levels, SummaryLevel{Level: 1, Name: "chunks", Parts: parts})
	} else {
		var err error
		if parts, err = mapChunks(ctx, l, chunks, head, partWords); err != nil {
			return err
		}
		s.Levels = append(s.Levels, SummaryLevel{Level: 1, Name: "chunks", Parts: parts})
		var sections [][]SummaryPart
		if session, sections, err = reduceParts(ctx, l, parts, head, words, budget); err != nil {
			return err
		}
		for _, sec := range sections {
			s.Levels = append(s.Levels, SummaryLevel{Level: len(s.Levels) + 1, Name: "sections", Parts: sec})
		}
	}
	s.Levels = append(s.Levels, SummaryLevel{Level: len(s.Levels) + 1, Name: "session", Parts: []SummaryPart{session}})
	abstract, err := l.chat(ctx, systemPrompt, abstractPrompt+"\n\n"+head+"\nSession summary:\n"+session.Text)
	if err != nil {
		return err
	}
	whole := session
	whole.Text = abstract
	s.Levels = append(s.Levels, SummaryLevel{Level: len(s.Levels) + 1, Name: "abstract", Parts: []SummaryPart{whole}})
	s.Text = session.Text
	return nil
}
