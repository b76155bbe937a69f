package pipelines_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/transform/embed/statictest"
)

// A static model pulled from a hub (a local one speaking its wire
// format) embeds a real lake, and pos-query embeds its queries with the
// same model: a vector search finds the exchange a query paraphrases
// in the model's vocabulary. On a machine without the model, the search
// says so and answers lexically.
func TestStaticModelPipeline(t *testing.T) {
	tmp := t.TempDir()
	hub := statictest.NewHub(map[string]*statictest.Model{"org/tiny": statictest.New(statictest.Options{Dim: 32, Float16: true, Seed: 7})})
	defer hub.Close()
	models := filepath.Join(tmp, "models")
	env := []string{"POS_MODELS_DIR=" + models, "HF_ENDPOINT=" + hub.URL}
	out, errs, code := sh(t, "pos-embed model pull org/tiny", env...)
	if code != 0 || !strings.Contains(errs, "pulled org/tiny: ") {
		t.Fatalf("pull: exit %d\n%s%s", code, out, errs)
	}
	if out := mustSh(t, "pos-embed model list", env...); !strings.Contains(out, "org/tiny") || !strings.Contains(out, " 32 ") {
		t.Fatalf("list:\n%s", out)
	}
	lake := filepath.Join(tmp, "lake")
	_, errs, code = sh(t, fmt.Sprintf("pos-extract --root ../testdata/claude/home/.claude --full -q | pos-normalize -q | pos-scrub -q | pos-embed --provider static --model org/tiny --lake %q | pos-load --lake %q -q", lake, lake), env...)
	if code != 0 && code != 3 || !strings.Contains(errs, "model org/tiny (32-d)") {
		t.Fatalf("pipeline: exit %d\n%s", code, errs)
	}
	m, ok, err := layout.LakeEmbedding(t.Context(), lake)
	if err != nil || !ok || m.Model != "org/tiny" || m.Provider != "static" || m.Dim != 32 {
		t.Fatalf("the lake records %+v %v %v", m, ok, err)
	}
	// The query: an exchange's own words, reordered: its chunk is the
	// nearest (the mean of the same token vectors).
	db := loadtest.Views(t, lake)
	var id, text string
	if err := db.QueryRow(`SELECT parent_id, text FROM chunks WHERE content_type = 'exchange' ORDER BY length(text) DESC LIMIT 1`).Scan(&id, &text); err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(text)
	if len(words) > 40 {
		words = words[:40]
	}
	for i, j := 0, len(words)-1; i < j; i, j = i+1, j-1 {
		words[i], words[j] = words[j], words[i]
	}
	q := strings.Join(words, " ")
	out, errs, code = sh(t, fmt.Sprintf("pos-query search --lake %q --mode vector --format json -n 3 %q", lake, q), env...)
	if code != 0 || strings.Contains(errs, "lexical results only") {
		t.Fatalf("search: exit %d\n%s", code, errs)
	}
	var hits []map[string]any
	if err := json.Unmarshal([]byte(out), &hits); err != nil || len(hits) == 0 {
		t.Fatalf("search: %v\n%s", err, out)
	}
	if hits[0]["parent_id"] != id || hits[0]["vector_score"].(float64) < 0.95 {
		t.Fatalf("top hit %v, want %s", hits[0], id)
	}

	// Elsewhere, without the model: lexical, with a warning that says why.
	out, errs, code = sh(t, fmt.Sprintf("pos-query search --lake %q --mode vector %q", lake, q), "POS_MODELS_DIR="+filepath.Join(tmp, "empty"))
	if code != 0 || !strings.Contains(errs, "warning: lexical results only: the query could not be embedded: static model not found: org/tiny is not on this machine (pos-embed model pull org/tiny)") {
		t.Fatalf("without the model: exit %d\n%s\n%s", code, out, errs)
	}
	os.RemoveAll(models)
}
