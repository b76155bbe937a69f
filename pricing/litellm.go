package pricing

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/atomicfile"
)

// MaxImportSize bounds a price file Import reads (LiteLLM's is about
// 1.5 MB).
const MaxImportSize = 64 << 20

// liteLLMModel is the part of an entry of LiteLLM's
// model_prices_and_context_window.json that prices requests: USD per
// token.
type liteLLMModel struct {
	Provider         string   `json:"litellm_provider"`
	Input            *float64 `json:"input_cost_per_token"`
	Output           *float64 `json:"output_cost_per_token"`
	CacheWrite       *float64 `json:"cache_creation_input_token_cost"`
	CacheWrite1h     *float64 `json:"cache_creation_input_token_cost_above_1hr"`
	CacheRead        *float64 `json:"cache_read_input_token_cost"`
	Input200k        *float64 `json:"input_cost_per_token_above_200k_tokens"`
	Output200k       *float64 `json:"output_cost_per_token_above_200k_tokens"`
	CacheWrite200k   *float64 `json:"cache_creation_input_token_cost_above_200k_tokens"`
	CacheWrite1h200k *float64 `json:"cache_creation_input_token_cost_above_1hr_above_200k_tokens"`
	CacheRead200k    *float64 `json:"cache_read_input_token_cost_above_200k_tokens"`
}

// ImportSummary says what Import stored.
type ImportSummary struct {
	Source  string // the file imported
	Models  int    // models stored
	Skipped int    // entries without an input and an output price, or with one pos cannot use
}

// jsonPosError makes a JSON decoding error of the document b, read from
// name, one line that says where: name:line:column: message.
func jsonPosError(name string, b []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	if off < 0 || off > int64(len(b)) {
		return fmt.Errorf("%s: %s", name, msg)
	}
	// Offset counts the bytes read, the offending one included.
	at := max(int(off)-1, 0)
	line := 1 + bytes.Count(b[:at], []byte{'\n'})
	col := at - bytes.LastIndexByte(b[:at], '\n')
	return fmt.Errorf("%s:%d:%d: %s", name, line, col, msg)
}

// perMillion turns a price per token into one per million tokens, to a
// billionth of a dollar (the per-token figures are binary fractions: 3e-06
// is not 3 millionths exactly). ok is false for a price pos cannot use.
func perMillion(v *float64) (*float64, bool) {
	if v == nil {
		return nil, true
	}
	r := math.Round(*v*1e6*1e9) / 1e9
	if r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
		return nil, false
	}
	return &r, true
}

// ParseLiteLLM converts a LiteLLM price file (a JSON object of model name
// to entry) to pos's price file form: each entry with an input and an
// output price per token becomes a model priced per million tokens; the
// cache prices and the above-200k tier (as a long-context tier over 200k
// prompt tokens) are kept when present. Names that several entries share
// once normalised (bedrock/…, openrouter/anthropic/…) take the price of
// the provider's own entry (a name without a prefix). name is used in
// errors.
func ParseLiteLLM(b []byte, name string) ([]byte, *ImportSummary, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, nil, jsonPosError(name, b, err)
	}
	keys := make([]string, 0, len(doc))
	for k := range doc {
		if k != "sample_spec" {
			keys = append(keys, k)
		}
	}
	// Prefixed names first, so the plain ones (the provider's own
	// entries) replace them.
	plain := func(k string) bool {
		return !strings.Contains(k, "/") && Normalize(k) == strings.ToLower(strings.TrimSpace(k))
	}
	slices.SortFunc(keys, func(a, b string) int {
		if pa, pb := plain(a), plain(b); pa != pb {
			if pa {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	sum := &ImportSummary{Source: name}
	var models []fileModel
	for _, k := range keys {
		var m liteLLMModel
		if err := json.Unmarshal(doc[k], &m); err != nil || m.Input == nil || m.Output == nil || strings.TrimSpace(k) == "" {
			sum.Skipped++
			continue
		}
		fm := fileModel{Model: k, Provider: liteLLMProvider(m.Provider, k)}
		ok := true
		for _, p := range []struct {
			dst **float64
			src *float64
		}{{&fm.Input, m.Input}, {&fm.Output, m.Output}, {&fm.CacheWrite5m, m.CacheWrite}, {&fm.CacheWrite1h, m.CacheWrite1h}, {&fm.CacheRead, m.CacheRead}} {
			v, good := perMillion(p.src)
			*p.dst, ok = v, ok && good
		}
		if m.Input200k != nil {
			lc := &struct {
				Above int64  `json:"above"`
				Until string `json:"until"`
				fileRates
			}{Above: 200_000}
			for _, p := range []struct {
				dst **float64
				src *float64
			}{{&lc.Input, m.Input200k}, {&lc.Output, m.Output200k}, {&lc.CacheWrite5m, m.CacheWrite200k}, {&lc.CacheWrite1h, m.CacheWrite1h200k}, {&lc.CacheRead, m.CacheRead200k}} {
				v, good := perMillion(p.src)
				*p.dst, ok = v, ok && good
			}
			fm.LongContext = lc
		}
		if !ok {
			sum.Skipped++
			continue
		}
		models = append(models, fm)
	}
	sum.Models = len(models)
	out, err := json.MarshalIndent(struct {
		Updated  string      `json:"updated"`
		Currency string      `json:"currency"`
		Sources  []string    `json:"sources"`
		Models   []fileModel `json:"models"`
	}{Currency: "USD per million tokens", Models: models}, "", " ")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, sum, nil
}

// liteLLMProvider is pos's provider for a LiteLLM entry: anthropic for
// Claude models wherever they are served (so Anthropic's cache
// multipliers apply to prices the entry leaves out).
func liteLLMProvider(p, name string) string {
	switch {
	case p == "anthropic" || strings.Contains(strings.ToLower(name), "claude"):
		return "anthropic"
	case p == "openai" || p == "azure":
		return "openai"
	case p == "gemini" || strings.HasPrefix(p, "vertex_ai"):
		return "google"
	}
	return p
}

// Import converts the LiteLLM price file at path (ParseLiteLLM) and stores
// it in the lake at lake (ImportedPath), replacing a table imported
// before: the reports of that lake then price with it over the embedded
// table (LoadLake). The stored table's date is the file's modification
// date; its source names the file, its digest and the day of import.
func Import(path, lake string, now time.Time) (*ImportSummary, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	if fi.Size() > MaxImportSize {
		return nil, fmt.Errorf("pricing: %s: larger than %d bytes", path, MaxImportSize)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	out, sum, err := ParseLiteLLM(b, path)
	if err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	if sum.Models == 0 {
		return nil, fmt.Errorf("pricing: %s: no entry with an input and an output price (is it LiteLLM's model_prices_and_context_window.json?)", path)
	}
	abs, _ := filepath.Abs(path)
	var f file
	if err := json.Unmarshal(out, &f); err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	f.Updated = fi.ModTime().UTC().Format(time.DateOnly)
	f.Sources = []string{fmt.Sprintf("LiteLLM price file %s (sha256 %x), imported %s", abs, sha256.Sum256(b), now.UTC().Format(time.DateOnly))}
	// The stored file must load as the reports will load it.
	t := &Table{index: map[string]*Model{}}
	if err := t.add(&f, path); err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	out, err = json.MarshalIndent(struct {
		Updated  string      `json:"updated"`
		Currency string      `json:"currency"`
		Sources  []string    `json:"sources"`
		Models   []fileModel `json:"models"`
	}{f.Updated, "USD per million tokens", f.Sources, f.Models}, "", " ")
	if err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	dst := ImportedPath(lake)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	if err := atomicfile.Write(dst, out); err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	sum.Source = abs
	return sum, nil
}

// ImportedInfo describes the table imported into a lake.
type ImportedInfo struct {
	Updated string // the table's date
	Source  string // where it came from, and when it was imported
	Models  int
}

// ReadImported describes the table imported into the lake at lake; nil
// when there is none.
func ReadImported(lake string) (*ImportedInfo, error) {
	p := ImportedPath(lake)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	f, err := parse(b, p)
	if err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	info := &ImportedInfo{Updated: f.Updated, Models: len(f.Models)}
	if len(f.Sources) > 0 {
		info.Source = f.Sources[0]
	}
	return info, nil
}
