package pricing

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A part of LiteLLM's model_prices_and_context_window.json, with the
// entries pos reads and some it skips.
const liteLLMSample = `{
  "sample_spec": {"input_cost_per_token": 0, "output_cost_per_token": 0, "litellm_provider": "one of https://docs.litellm.ai/docs/providers"},
  "claude-sonnet-4-5": {
    "input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05,
    "cache_creation_input_token_cost": 3.75e-06, "cache_read_input_token_cost": 3e-07,
    "input_cost_per_token_above_200k_tokens": 6e-06, "output_cost_per_token_above_200k_tokens": 2.25e-05,
    "cache_creation_input_token_cost_above_200k_tokens": 7.5e-06, "cache_read_input_token_cost_above_200k_tokens": 6e-07,
    "litellm_provider": "anthropic", "max_input_tokens": 200000, "mode": "chat"
  },
  "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0": {
    "input_cost_per_token": 3.3e-06, "output_cost_per_token": 1.65e-05, "litellm_provider": "bedrock"
  },
  "gpt-5": {"input_cost_per_token": 1.25e-06, "output_cost_per_token": 1e-05, "cache_read_input_token_cost": 1.25e-07, "litellm_provider": "openai"},
  "text-embedding-3-small": {"input_cost_per_token": 2e-08, "litellm_provider": "openai", "mode": "embedding"},
  "odd-model": {"input_cost_per_token": "free", "output_cost_per_token": 1}
}`

func TestImportLiteLLM(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "model_prices_and_context_window.json")
	if err := os.WriteFile(src, []byte(liteLLMSample), 0o600); err != nil {
		t.Fatal(err)
	}
	lake := filepath.Join(dir, "lake")
	sum, err := Import(src, lake, time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Models != 3 || sum.Skipped != 2 {
		t.Errorf("imported %d, skipped %d; want 3 and 2", sum.Models, sum.Skipped)
	}
	tab, err := LoadLake(lake)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := tab.Lookup("claude-sonnet-4-5-20250929")
	if !ok {
		t.Fatal("claude-sonnet-4-5 not found")
	}
	// The provider's own entry wins over Bedrock's, whose name normalises
	// to the same model.
	if m.Input != 3 || m.Output != 15 || m.CacheWrite5m != 3.75 || m.CacheWrite1h != 6 || m.CacheRead != 0.3 {
		t.Errorf("rates %+v", m.Rates)
	}
	if lc := m.LongContext; lc == nil || lc.Above != 200000 || lc.Input != 6 || lc.Output != 22.5 || lc.CacheRead != 0.6 {
		t.Errorf("long context %+v", m.LongContext)
	}
	g, ok := tab.Lookup("gpt-5")
	if !ok || g.Input != 1.25 || g.CacheRead != 0.125 || g.CacheWrite5m != 1.25 {
		t.Errorf("gpt-5: %+v %v", g, ok)
	}
	// Models the file does not name keep the built-in prices.
	if _, ok := tab.Lookup("claude-opus-4-6"); !ok {
		t.Error("claude-opus-4-6 lost")
	}
	info, err := ReadImported(lake)
	if err != nil || info == nil || info.Models != 3 || !strings.Contains(info.Source, "imported 2026-12-02") || info.Updated == "" {
		t.Errorf("info %+v, %v", info, err)
	}
	if info, err := ReadImported(filepath.Join(dir, "none")); info != nil || err != nil {
		t.Errorf("no import: %+v, %v", info, err)
	}
}

func TestImportBadJSON(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ doc, want string }{
		{"{\n  \"a\": {\"input_cost_per_token\": 1,\n  oops}\n}", `prices.json:3:3: invalid character 'o'`},
		{"[1, 2]", `prices.json:1:1: json: cannot unmarshal array`},
		{"{}", `no entry with an input and an output price`},
		{"", `prices.json:1:1: unexpected end of JSON input`},
	} {
		src := filepath.Join(dir, "prices.json")
		if err := os.WriteFile(src, []byte(c.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Import(src, filepath.Join(dir, "lake"), time.Now())
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", c.doc, err, c.want)
		}
	}
	if _, err := os.Stat(ImportedPath(filepath.Join(dir, "lake"))); err == nil {
		t.Error("a bad file was stored")
	}
}

// FuzzParseLiteLLM: any input is rejected or converted to a price file
// that loads, and converting is a fixed point on what it keeps.
func FuzzParseLiteLLM(f *testing.F) {
	f.Add([]byte(liteLLMSample))
	f.Add([]byte(`{"m": {"input_cost_per_token": 1e300, "output_cost_per_token": 1}}`))
	f.Add([]byte(`{"m": {"input_cost_per_token": -1, "output_cost_per_token": 1}}`))
	f.Add([]byte(`{" ": {"input_cost_per_token": 1, "output_cost_per_token": 1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, sum, err := ParseLiteLLM(data, "fuzz")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error on two lines: %v", err)
			}
			return
		}
		fl, err := parse(out, "converted")
		if err != nil {
			t.Fatalf("converted file does not parse: %v\n%s", err, out)
		}
		if len(fl.Models) != sum.Models {
			t.Fatalf("%d models, summary says %d", len(fl.Models), sum.Models)
		}
		tab := &Table{index: map[string]*Model{}}
		if err := tab.add(fl, "converted"); err != nil {
			t.Fatalf("converted file does not load: %v\n%s", err, out)
		}
		// Each kept model read back as LiteLLM gives the same file.
		back := map[string]map[string]float64{}
		for _, m := range fl.Models {
			e := map[string]float64{"input_cost_per_token": *m.Input / 1e6, "output_cost_per_token": *m.Output / 1e6}
			back[m.Model] = e
		}
		b, err := json.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := ParseLiteLLM(b, "again"); err != nil {
			t.Fatalf("converting the kept models again: %v", err)
		}
	})
}
