// Package pricing prices the tokens of AI model requests. It embeds a table
// of current Claude, OpenAI and Gemini list prices (prices.json, USD per
// million tokens, with its sources and date) for offline use; a JSON file
// of the same form overrides or extends it (Load, $POS_PRICING).
//
// Prices apply per request: input, output, cache writes (5-minute and
// 1-hour, Anthropic's two cache lifetimes) and cache reads each have a
// rate, and a model may have a long-context tier that bills a whole request
// at other rates when its prompt (input + cache writes + cache reads) is
// larger than a threshold. Model names are normalised before lookup: case,
// provider prefixes (anthropic/, openai/, models/, Bedrock's
// us.anthropic.), date suffixes (-20250929, -2025-08-07, @20250929),
// Bedrock's -v1:0, Claude Code's [1m] and -latest are dropped. A model that
// is not in the table has no price: Lookup says so, and callers must show
// the cost as unknown, never as 0.
package pricing

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/lazyre"
)

//go:embed prices.json
var embedded []byte

// EnvVar names the environment variable that points at an override file.
const EnvVar = "POS_PRICING"

// Rates are USD per million tokens.
type Rates struct {
	Input        float64 `json:"input"`
	Output       float64 `json:"output"`
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
	CacheRead    float64 `json:"cache_read"`
}

// Tier is a long-context tier: a request whose prompt (input + cache
// writes + cache reads) is larger than Above tokens is billed whole at its
// rates, if it was made before Until (when Until is set).
type Tier struct {
	Above int64     `json:"above"`
	Until time.Time `json:"-"`
	Rates
}

// Model is one priced model.
type Model struct {
	Name        string   // canonical name, as in the table
	Provider    string   // anthropic, openai, google, or what an override says
	Aliases     []string // other names it is known by
	Rates                // standard rates
	LongContext *Tier    // nil: no long-context tier
}

// Table is a set of priced models.
type Table struct {
	Updated string   // date the embedded prices were read
	Sources []string // where they come from
	Files   []string // override files applied, in order
	models  []*Model
	index   map[string]*Model // normalised name or alias -> model
}

// Usage is the tokens of one request, as four disjoint counts (a token is
// in exactly one of them); CacheWrite1h is the part of the cache writes
// made for one hour (the rest were for five minutes).
type Usage struct {
	Input, Output, CacheWrite, CacheWrite1h, CacheRead int64
}

// Prompt is the request's prompt size, the quantity long-context tiers
// look at.
func (u Usage) Prompt() int64 { return u.Input + u.CacheWrite + u.CacheRead }

// Cost is what a request costs, USD, by component.
type Cost struct {
	Input, Output, CacheWrite, CacheRead float64
}

// Total is the sum of the components.
func (c Cost) Total() float64 { return c.Input + c.Output + c.CacheWrite + c.CacheRead }

// Add accumulates o into c.
func (c *Cost) Add(o Cost) {
	c.Input += o.Input
	c.Output += o.Output
	c.CacheWrite += o.CacheWrite
	c.CacheRead += o.CacheRead
}

// RatesAt returns the rates that apply to a request of prompt size prompt
// made at t (zero: now, so a tier with Until does not apply).
func (m *Model) RatesAt(prompt int64, t time.Time) (Rates, bool) {
	if lc := m.LongContext; lc != nil && prompt > lc.Above && (lc.Until.IsZero() || (!t.IsZero() && t.Before(lc.Until))) {
		return lc.Rates, true
	}
	return m.Rates, false
}

// Cost prices one request made at t.
func (m *Model) Cost(u Usage, t time.Time) Cost {
	r, _ := m.RatesAt(u.Prompt(), t)
	w5 := max(u.CacheWrite-u.CacheWrite1h, 0)
	return Cost{
		Input:      float64(u.Input) * r.Input / 1e6,
		Output:     float64(u.Output) * r.Output / 1e6,
		CacheWrite: (float64(w5)*r.CacheWrite5m + float64(u.CacheWrite1h)*r.CacheWrite1h) / 1e6,
		CacheRead:  float64(u.CacheRead) * r.CacheRead / 1e6,
	}
}

// Models lists the table's models in table order.
func (t *Table) Models() []*Model { return slices.Clone(t.models) }

// Lookup finds the price of a model by any of its names.
func (t *Table) Lookup(name string) (*Model, bool) {
	m, ok := t.index[Normalize(name)]
	return m, ok
}

// The normalisation rules of Normalize, as RE2 patterns.
const (
	// Provider paths (openrouter/anthropic/…, models/gemini-…) and
	// Bedrock's region and provider prefixes (us.anthropic.claude-…).
	prefixPattern = `^(?:.*/)?(?:(?:us|eu|apac|global|au|jp)\.)?(?:anthropic\.)?`
	// One trailing decoration: Claude Code's [1m], Bedrock's -v1:0,
	// Vertex's @20250929, Anthropic's -20250929, OpenAI's -2025-08-07,
	// -latest. Removed suffixPasses times.
	suffixPattern = `(?:\[1m\]|-v\d+(?::\d+)?|@\d{8}|@latest|-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$`
	suffixPasses  = 3
	// Claude versions written with dots (claude-sonnet-4.5).
	claudeDotPattern = `(\d)\.(\d)`
)

var (
	prefixRE    = lazyre.New(prefixPattern)
	suffixRE    = lazyre.New(suffixPattern)
	claudeDotRE = lazyre.New(claudeDotPattern)
)

// FastSuffix ends the name of a model used in fast mode (Claude Code's
// usage.speed "fast", named as ccusage names it): claude-opus-4-6-fast is
// priced by its own entry, and a model without one has no price.
const FastSuffix = "-fast"

// Normalize reduces a model name to the form the table is indexed by:
// lower case, spaces trimmed, provider prefixes and up to three trailing
// decorations (dates, versions, [1m], -latest) removed, and a Claude
// version's dots made dashes. A trailing FastSuffix is kept, after the
// rest is reduced: claude-sonnet-4-5-20250929-fast is claude-sonnet-4-5-fast.
func Normalize(name string) string {
	s := strings.ToLower(strings.Trim(name, " "))
	base, fast := strings.CutSuffix(s, FastSuffix)
	s = prefixRE().ReplaceAllString(base, "")
	for range suffixPasses {
		s = suffixRE().ReplaceAllString(s, "")
	}
	if strings.HasPrefix(s, "claude") {
		s = claudeDotRE().ReplaceAllString(s, "$1-$2")
	}
	if fast {
		s += FastSuffix
	}
	return s
}

// Keys lists every normalised name and alias the table answers to, with
// its model, sorted by key.
func (t *Table) Keys() []Key {
	out := make([]Key, 0, len(t.index))
	for k, m := range t.index {
		out = append(out, Key{k, m})
	}
	slices.SortFunc(out, func(a, b Key) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Key is a normalised name of a model.
type Key struct {
	Key   string
	Model *Model
}

// fileModel is a model as written in prices.json or an override file.
// Omitted cache rates default by provider (see defaults).
type fileModel struct {
	Model    string   `json:"model"`
	Provider string   `json:"provider"`
	Aliases  []string `json:"aliases"`
	fileRates
	LongContext *struct {
		Above int64  `json:"above"`
		Until string `json:"until"`
		fileRates
	} `json:"long_context"`
}

type fileRates struct {
	Input        *float64 `json:"input"`
	Output       *float64 `json:"output"`
	CacheWrite5m *float64 `json:"cache_write_5m"`
	CacheWrite1h *float64 `json:"cache_write_1h"`
	CacheRead    *float64 `json:"cache_read"`
}

type file struct {
	Updated string      `json:"updated"`
	Sources []string    `json:"sources"`
	Models  []fileModel `json:"models"`
}

func (r fileRates) rates(provider, what string) (Rates, error) {
	if r.Input == nil || r.Output == nil {
		return Rates{}, fmt.Errorf("%s: input and output prices are required", what)
	}
	out := Rates{Input: *r.Input, Output: *r.Output}
	if provider == "anthropic" {
		// Anthropic's prompt caching multipliers.
		out.CacheWrite5m, out.CacheWrite1h, out.CacheRead = 1.25*out.Input, 2*out.Input, 0.1*out.Input
	} else {
		// OpenAI and Gemini bill no cache writes (they are input); a model
		// without a cached-input price bills reads as input.
		out.CacheWrite5m, out.CacheWrite1h, out.CacheRead = out.Input, out.Input, out.Input
	}
	if r.CacheWrite5m != nil {
		out.CacheWrite5m = *r.CacheWrite5m
		if r.CacheWrite1h == nil && provider != "anthropic" {
			out.CacheWrite1h = *r.CacheWrite5m
		}
	}
	if r.CacheWrite1h != nil {
		out.CacheWrite1h = *r.CacheWrite1h
	}
	if r.CacheRead != nil {
		out.CacheRead = *r.CacheRead
	}
	for _, v := range []float64{out.Input, out.Output, out.CacheWrite5m, out.CacheWrite1h, out.CacheRead} {
		if v < 0 {
			return Rates{}, fmt.Errorf("%s: negative price", what)
		}
	}
	return out, nil
}

func parse(b []byte, name string) (*file, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f struct {
		file
		Currency string `json:"currency"`
		Notes    string `json:"notes"`
	}
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &f.file, nil
}

// add puts the models of f into t; a model already there (by any of its
// names) is replaced.
func (t *Table) add(f *file, name string) error {
	for i, fm := range f.Models {
		what := fmt.Sprintf("%s: model %d (%q)", name, i+1, fm.Model)
		if strings.TrimSpace(fm.Model) == "" {
			return fmt.Errorf("%s: no model name", what)
		}
		m := &Model{Name: fm.Model, Provider: fm.Provider, Aliases: fm.Aliases}
		var err error
		if m.Rates, err = fm.rates(fm.Provider, what); err != nil {
			return err
		}
		if lc := fm.LongContext; lc != nil {
			if lc.Above <= 0 {
				return fmt.Errorf("%s: long_context.above must be positive", what)
			}
			tier := &Tier{Above: lc.Above}
			// Tier rates default to the standard ones scaled like the input.
			r := lc.fileRates
			if r.Output == nil {
				r.Output = &m.Output
			}
			if tier.Rates, err = r.rates(fm.Provider, what+" long_context"); err != nil {
				return err
			}
			if lc.Until != "" {
				if tier.Until, err = time.Parse(time.DateOnly, lc.Until); err != nil {
					return fmt.Errorf("%s: long_context.until: %w", what, err)
				}
			}
			m.LongContext = tier
		}
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			if old, ok := t.index[Normalize(n)]; ok {
				t.remove(old)
			}
		}
		t.models = append(t.models, m)
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			t.index[Normalize(n)] = m
		}
	}
	return nil
}

func (t *Table) remove(m *Model) {
	t.models = slices.DeleteFunc(t.models, func(x *Model) bool { return x == m })
	for k, v := range t.index {
		if v == m {
			delete(t.index, k)
		}
	}
}

// Default is the embedded table.
func Default() *Table {
	f, err := parse(embedded, "prices.json")
	if err != nil {
		panic(err)
	}
	t := &Table{Updated: f.Updated, Sources: f.Sources, index: map[string]*Model{}}
	if err := t.add(f, "prices.json"); err != nil {
		panic(err)
	}
	return t
}

// Load returns the embedded table with the models of the override files
// applied in order: a model of a file replaces the table's model of the
// same (normalised) name or alias, or is added.
func Load(files ...string) (*Table, error) {
	t := Default()
	for _, p := range files {
		if p == "" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("pricing: %w", err)
		}
		f, err := parse(b, p)
		if err != nil {
			return nil, fmt.Errorf("pricing: %w", err)
		}
		if err := t.add(f, p); err != nil {
			return nil, fmt.Errorf("pricing: %w", err)
		}
		t.Files = append(t.Files, p)
	}
	return t, nil
}

// Parse builds a table from a JSON document of the embedded table's form
// alone, without the embedded prices.
func Parse(b []byte) (*Table, error) {
	f, err := parse(b, "prices")
	if err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	t := &Table{Updated: f.Updated, Sources: f.Sources, index: map[string]*Model{}}
	if err := t.add(f, "prices"); err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	return t, nil
}

// FromEnv loads the table with the override file $POS_PRICING, if set.
func FromEnv() (*Table, error) { return Load(os.Getenv(EnvVar)) }

// ErrUnknown is returned by Price for a model the table has no price for.
var ErrUnknown = errors.New("unknown model: no price")

// Price prices one request of model made at t.
func (t *Table) Price(model string, u Usage, at time.Time) (Cost, error) {
	m, ok := t.Lookup(model)
	if !ok {
		return Cost{}, fmt.Errorf("%q: %w", model, ErrUnknown)
	}
	return m.Cost(u, at), nil
}
