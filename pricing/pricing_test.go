package pricing

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"claude-sonnet-4-5-20250929":                  "claude-sonnet-4-5",
		"Claude-Opus-4-6":                             "claude-opus-4-6",
		"claude-opus-4-6[1m]":                         "claude-opus-4-6",
		"anthropic/claude-sonnet-4.5":                 "claude-sonnet-4-5",
		"us.anthropic.claude-sonnet-4-20250514-v1:0":  "claude-sonnet-4",
		"anthropic.claude-3-5-haiku-20241022-v1:0":    "claude-3-5-haiku",
		"claude-3-7-sonnet@20250219":                  "claude-3-7-sonnet",
		"openrouter/anthropic/claude-haiku-4-5":       "claude-haiku-4-5",
		"gpt-4o-2024-08-06":                           "gpt-4o",
		"openai/gpt-5.3-codex":                        "gpt-5.3-codex",
		"models/gemini-2.5-pro":                       "gemini-2.5-pro",
		"claude-3-5-sonnet-latest":                    "claude-3-5-sonnet",
		"gemini-2.5-flash-preview-09-2025":            "gemini-2.5-flash-preview-09-2025",
		"  claude-haiku-4-5-20251001  ":               "claude-haiku-4-5",
		"vertex_ai/claude-opus-4-1@20250805":          "claude-opus-4-1",
		"bedrock/global.anthropic.claude-opus-4-5-v1": "claude-opus-4-5",
		"claude-opus-4-6-fast":                        "claude-opus-4-6-fast",
		"claude-sonnet-4-5-20250929-fast":             "claude-sonnet-4-5-fast",
		"Claude-Opus-4.6[1m]-FAST":                    "claude-opus-4-6-fast",
		"gpt-4o-fast":                                 "gpt-4o-fast",
		" Claude-Opus-4.6[1m]-FAST ":                  "claude-opus-4-6-fast",
		"openrouter/openai/gpt-4o-mini":               "gpt-4o-mini",
		"claude-3.5.1-x":                              "claude-3-5.1-x",
		"o'brien-model":                               "o'brien-model",
		"<synthetic>":                                 "<synthetic>",
		"":                                            "",
		"-fast":                                       "-fast",
		"fast":                                        "fast",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLookup(t *testing.T) {
	tb := Default()
	for name, in := range map[string]float64{
		"claude-opus-4-6":            5,
		"claude-opus-4-5-20251101":   5,
		"claude-opus-4-1-20250805":   15,
		"claude-opus-4-20250514":     15,
		"claude-sonnet-4-20250514":   3,
		"claude-sonnet-4-5-20250929": 3,
		"claude-haiku-4-5-20251001":  1,
		"claude-3-5-haiku-20241022":  0.8,
		"claude-3-7-sonnet-20250219": 3,
		"gpt-5.3-codex":              1.75,
		"gpt-5.5":                    5,
		"gpt-5-codex":                1.25,
		"o4-mini-2025-04-16":         1.1,
		"gemini-2.5-flash":           0.3,
		"gemini-2.5-pro":             1.25,
	} {
		m, ok := tb.Lookup(name)
		if !ok {
			t.Errorf("%s: no price", name)
			continue
		}
		if m.Input != in {
			t.Errorf("%s: input %v, want %v", name, m.Input, in)
		}
	}
	for _, name := range []string{"<synthetic>", "", "claude-opus-9", "gpt-5-mini-turbo", "llama-3"} {
		if m, ok := tb.Lookup(name); ok {
			t.Errorf("%q: priced as %s", name, m.Name)
		}
	}
	if _, err := tb.Price("mystery-model", Usage{Input: 1}, time.Time{}); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown model: %v", err)
	}
}

// Every model's cache rates follow its provider's rules unless the table
// says otherwise.
func TestDefaultRates(t *testing.T) {
	tb := Default()
	for _, m := range tb.Models() {
		switch m.Provider {
		case "anthropic":
			if m.Name == "claude-3-haiku" {
				continue
			}
			if !near(m.CacheWrite5m, 1.25*m.Input) || !near(m.CacheWrite1h, 2*m.Input) || !near(m.CacheRead, 0.1*m.Input) {
				t.Errorf("%s: %+v", m.Name, m.Rates)
			}
		case "openai", "google":
			if m.CacheWrite5m != m.Input || m.CacheWrite1h != m.Input {
				t.Errorf("%s: cache writes not billed as input: %+v", m.Name, m.Rates)
			}
		default:
			t.Errorf("%s: provider %q", m.Name, m.Provider)
		}
		if lc := m.LongContext; lc != nil && (lc.Input <= m.Input || lc.Output < m.Output) {
			t.Errorf("%s: long-context tier cheaper than standard: %+v", m.Name, lc)
		}
	}
}

func TestCost(t *testing.T) {
	tb := Default()
	day := time.Date(2026, 2, 10, 12, 0, 0, 0, time.UTC)
	// Opus 4.6: 57 in, 225 out, 31531 cache writes all for 1 h, 99746
	// reads; ccusage 20.0.24 says $0.371093 for this day.
	c, err := tb.Price("claude-opus-4-6", Usage{Input: 57, Output: 225, CacheWrite: 31531, CacheWrite1h: 31531, CacheRead: 99746}, day)
	if err != nil {
		t.Fatal(err)
	}
	if !near(c.Total(), 0.371093) {
		t.Errorf("opus 4.6: %v (%+v)", c.Total(), c)
	}
	// The same writes for 5 minutes.
	c, _ = tb.Price("claude-opus-4-6", Usage{CacheWrite: 100_000}, day)
	if !near(c.CacheWrite, 0.625) {
		t.Errorf("5m writes: %+v", c)
	}
	// Sonnet 4.5 long context: the whole request at 2x input, 1.5x output.
	u := Usage{Input: 10, Output: 1000, CacheRead: 300_000}
	c, _ = tb.Price("claude-sonnet-4-5-20250929", u, day)
	if want := 10*6e-6 + 1000*22.5e-6 + 300000*0.6e-6; !near(c.Total(), want) {
		t.Errorf("sonnet 4.5 >200k: %v, want %v", c.Total(), want)
	}
	// At exactly 200k the standard rates apply.
	c, _ = tb.Price("claude-sonnet-4-5", Usage{Input: 200_000}, day)
	if !near(c.Total(), 0.6) {
		t.Errorf("sonnet 4.5 at 200k: %v", c.Total())
	}
	// Opus 4.6 lost its premium on 2026-03-13.
	big := Usage{Input: 250_000}
	before, _ := tb.Price("claude-opus-4-6", big, day)
	after, _ := tb.Price("claude-opus-4-6", big, time.Date(2026, 3, 13, 0, 0, 0, 0, time.UTC))
	if !near(before.Total(), 2.5) || !near(after.Total(), 1.25) {
		t.Errorf("opus 4.6 >200k: before GA %v, after %v", before.Total(), after.Total())
	}
	// GPT-5.4 above 272k.
	c, _ = tb.Price("gpt-5.4", Usage{Input: 100_000, CacheRead: 200_000, Output: 1000}, day)
	if want := 100000*5e-6 + 200000*0.5e-6 + 1000*22.5e-6; !near(c.Total(), want) {
		t.Errorf("gpt-5.4 >272k: %v, want %v", c.Total(), want)
	}
	// Gemini: cached input at its rate, no write charge beyond input.
	c, _ = tb.Price("gemini-2.5-flash", Usage{Input: 1_000_000, CacheRead: 1_000_000, Output: 1_000_000}, day)
	if !near(c.Total(), 0.3+0.03+2.5) {
		t.Errorf("gemini 2.5 flash: %v", c.Total())
	}
}

func TestOverride(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "prices.json")
	os.WriteFile(p, []byte(`{"models": [
		{"model": "claude-opus-4-6", "provider": "anthropic", "input": 4, "output": 20},
		{"model": "my-local-model", "provider": "self", "aliases": ["mlm"], "input": 0, "output": 0},
		{"model": "gpt-9", "provider": "openai", "input": 1, "output": 2, "cache_read": 0.1}
	]}`), 0o644)
	tb, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := tb.Lookup("claude-opus-4-6-20260101")
	if !ok || m.Input != 4 || m.CacheWrite1h != 8 || m.LongContext != nil {
		t.Errorf("override of opus 4.6: %+v", m)
	}
	if m, ok := tb.Lookup("MLM"); !ok || m.Name != "my-local-model" {
		t.Errorf("alias of an added model: %v", ok)
	}
	if m, ok := tb.Lookup("gpt-9"); !ok || m.CacheRead != 0.1 || m.CacheWrite5m != 1 {
		t.Errorf("gpt-9: %+v", m)
	}
	if n := len(tb.Models()); n != len(Default().Models())+2 {
		t.Errorf("%d models", n)
	}
	t.Setenv(EnvVar, p)
	if tb, err := FromEnv(); err != nil || len(tb.Files) != 1 {
		t.Errorf("FromEnv: %v %v", tb, err)
	}
	for _, bad := range []string{
		`{"models": [{"model": "x", "input": 1}]}`,
		`{"models": [{"model": "x", "input": 1, "output": -2}]}`,
		`{"models": [{"model": "x", "input": 1, "output": 2, "long_context": {"input": 2}}]}`,
		`{"models": [{"model": "x", "input": 1, "output": 2, "inptu": 3}]}`,
		`{"models": [{"model": "x", "input": 1, "output": 2, "long_context": {"above": 5, "until": "soon"}}]}`,
		`not json`,
	} {
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := Load(p); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Fast mode is priced by its own entry, 6x Opus 4.6 in every token kind; a
// model without a fast entry has no fast price (never its standard one).
func TestFastMode(t *testing.T) {
	tb := Default()
	std, ok1 := tb.Lookup("claude-opus-4-6")
	fast, ok2 := tb.Lookup("claude-opus-4-6" + FastSuffix)
	if !ok1 || !ok2 || fast == std {
		t.Fatalf("claude-opus-4-6: standard %v, fast %v: want two entries", ok1, ok2)
	}
	for _, r := range [][2]float64{
		{fast.Input, std.Input}, {fast.Output, std.Output}, {fast.CacheWrite5m, std.CacheWrite5m},
		{fast.CacheWrite1h, std.CacheWrite1h}, {fast.CacheRead, std.CacheRead},
	} {
		if r[0] != 6*r[1] {
			t.Errorf("fast %v, standard %v: want 6x", r[0], r[1])
		}
	}
	if m, ok := tb.Lookup("claude-sonnet-4-5-20250929" + FastSuffix); ok {
		t.Errorf("claude-sonnet-4-5 in fast mode is priced as %s", m.Name)
	}
}
