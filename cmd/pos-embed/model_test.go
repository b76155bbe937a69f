package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/transform/embed/statictest"
)

// pos-embed model pull and list against a local hub, then the pulled
// model by name: the chunks carry its name, provider and dimension.
func TestModelCLI(t *testing.T) {
	hub := statictest.NewHub(map[string]*statictest.Model{"org/tiny": statictest.New(statictest.Options{Dim: 4})})
	defer hub.Close()
	models := filepath.Join(t.TempDir(), "models")
	t.Setenv("POS_MODELS_DIR", models)
	t.Setenv("HF_ENDPOINT", hub.URL)
	t.Setenv("HF_TOKEN", "")

	code, stdout, stderr := embedRun("", "model", "list")
	if code != 0 || stdout != "" || !strings.Contains(stderr, "no models in "+models) {
		t.Errorf("empty list: %d %q %q", code, stdout, stderr)
	}
	code, _, stderr = embedRun("", "model", "pull", "org/nope")
	if code != 1 || !strings.HasPrefix(stderr, "pos-embed: org/nope: config.json not found at "+hub.URL+" (HTTP 404)") {
		t.Errorf("404: %d %q", code, stderr)
	}
	code, _, stderr = embedRun("", "model", "pull", "nope")
	if code != 2 || !strings.Contains(stderr, `"nope" is not a hub model name`) {
		t.Errorf("bad name: %d %q", code, stderr)
	}
	code, _, stderr = embedRun("", "model", "pull", "org/tiny")
	if code != 0 || !strings.Contains(stderr, "pos-embed: fetching model.safetensors (") ||
		!strings.Contains(stderr, "pulled org/tiny: ") || !strings.Contains(stderr, "× 4 dimensions") {
		t.Errorf("pull: %d %q", code, stderr)
	}
	code, stdout, _ = embedRun("", "model", "list")
	if code != 0 || !strings.Contains(stdout, "org/tiny") || !strings.Contains(stdout, filepath.Join(models, "org", "tiny")) {
		t.Errorf("list: %d %q", code, stdout)
	}

	lake := t.TempDir()
	code, stdout, stderr = embedRun(input, "--lake", lake, "--provider", "static", "--model", "org/tiny")
	if code != 0 || strings.Count(stdout, `"provider":"static"`) != 2 || !strings.Contains(stdout, `"model":"org/tiny","dim":4,`) ||
		!strings.Contains(stderr, "model org/tiny (4-d)") {
		t.Errorf("embed: %d %q\n%s", code, stderr, stdout)
	}
	// By its directory, the same model and name.
	code, again, stderr := embedRun(input, "--lake", lake, "--provider", "static", "--model", filepath.Join(models, "org", "tiny"))
	if code != 0 || again != stdout || !strings.Contains(stderr, "0 computed, 2 reused") {
		t.Errorf("by directory: %d %q", code, stderr)
	}
	os.RemoveAll(models)
	code, _, stderr = embedRun(input, "--lake", lake, "--provider", "static", "--model", "org/tiny")
	if code != 2 || !strings.Contains(stderr, "org/tiny is not on this machine (pos-embed model pull org/tiny)") {
		t.Errorf("missing: %d %q", code, stderr)
	}
}
