package embed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pos-lake/pos/transform/embed/statictest"
)

// entries lists what is under dir, relative, for "nothing was left" checks.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func TestPull(t *testing.T) {
	tiny := statictest.New(statictest.Options{Dim: 8, Float16: true})
	hub := statictest.NewHub(map[string]*statictest.Model{"org/tiny": tiny})
	defer hub.Close()
	models := t.TempDir()
	ctx := context.Background()

	m, err := Pull(ctx, models, "org/tiny", PullOptions{Endpoint: hub.URL})
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim != 8 || m.Rows != len(tiny.Vocab) || m.Dir != filepath.Join(models, "org", "tiny") {
		t.Errorf("pulled %+v", m)
	}
	for _, f := range StaticFiles {
		b, err := os.ReadFile(filepath.Join(m.Dir, f))
		if err != nil || string(b) != string(tiny.Files[f]) {
			t.Errorf("%s: %v, same %v", f, err, string(b) == string(tiny.Files[f]))
		}
	}
	if got := strings.Join(entries(t, models), " "); got != "org org/tiny org/tiny/config.json org/tiny/model.safetensors org/tiny/tokenizer.json" {
		t.Errorf("models dir: %s", got)
	}
	ls, err := ListModels(models)
	if err != nil || len(ls) != 1 || ls[0].Name != "org/tiny" || ls[0].Dim != 8 || ls[0].DType != "F16" || ls[0].Size == 0 {
		t.Errorf("list: %+v %v", ls, err)
	}
	p, err := OpenStatic("org/tiny", models)
	if err != nil || p.Dim() != 8 {
		t.Fatalf("open: %v", err)
	}
}

// A failed pull leaves no model: a 404, a refused token, a corrupt file
// (its SHA-256 is not the hub's) and a cut download; pulling again after a
// cut resumes where it stopped.
func TestPullFailures(t *testing.T) {
	tiny := statictest.New(statictest.Options{Dim: 8})
	hub := statictest.NewHub(map[string]*statictest.Model{"org/tiny": tiny})
	defer hub.Close()
	ctx := context.Background()
	noModel := func(models string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(models, "org", "tiny")); err == nil {
			t.Errorf("a model was left in place after a failed pull: %v", entries(t, models))
		}
		if ls, _ := ListModels(models); len(ls) != 0 {
			t.Errorf("listed %+v", ls)
		}
	}

	models := t.TempDir()
	_, err := Pull(ctx, models, "org/nope", PullOptions{Endpoint: hub.URL})
	if err == nil || err.Error() != "org/nope: config.json not found at "+hub.URL+" (HTTP 404): check the model name" {
		t.Errorf("404: %v", err)
	}
	noModel(models)

	hub.Token = "hf_good"
	_, err = Pull(ctx, models, "org/tiny", PullOptions{Endpoint: hub.URL})
	if err == nil || !strings.Contains(err.Error(), "refused (HTTP 401): a gated or private model needs $HF_TOKEN") {
		t.Errorf("no token: %v", err)
	}
	noModel(models)
	if _, err := Pull(ctx, t.TempDir(), "org/tiny", PullOptions{Endpoint: hub.URL, Token: "hf_good"}); err != nil {
		t.Errorf("with the token (not sent to the download host): %v", err)
	}
	hub.Token = ""

	hub.Corrupt["model.safetensors"] = true
	_, err = Pull(ctx, models, "org/tiny", PullOptions{Endpoint: hub.URL})
	if err == nil || !strings.Contains(err.Error(), "model.safetensors: SHA-256 ") || !strings.Contains(err.Error(), ", the hub states ") {
		t.Errorf("corrupt: %v", err)
	}
	noModel(models)
	delete(hub.Corrupt, "model.safetensors")

	size := len(tiny.Files["model.safetensors"])
	hub.Cut["model.safetensors"] = size / 2
	_, err = Pull(ctx, models, "org/tiny", PullOptions{Endpoint: hub.URL})
	if err == nil || !strings.Contains(err.Error(), "org/tiny: model.safetensors: download cut") {
		t.Errorf("cut: %v", err)
	}
	noModel(models)
	hub.Requests = nil
	if _, err := Pull(ctx, models, "org/tiny", PullOptions{Endpoint: hub.URL}); err != nil {
		t.Fatalf("after the cut: %v", err)
	}
	resumed := false
	for _, r := range hub.Requests {
		resumed = resumed || strings.HasPrefix(r, "GET /cdn/org/tiny/model.safetensors bytes=") && !strings.HasSuffix(r, "bytes=0-")
	}
	if !resumed {
		t.Errorf("the second pull did not resume: %q", hub.Requests)
	}
	if _, err := LoadStatic(filepath.Join(models, "org", "tiny"), ""); err != nil {
		t.Errorf("resumed model: %v", err)
	}

	// While another pull of the model runs, a second one stops at once.
	busy := t.TempDir()
	os.MkdirAll(filepath.Join(busy, "org", ".tiny.pull"), 0o755)
	lk, err := os.Create(filepath.Join(busy, "org", ".tiny.pull.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lk.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := Pull(ctx, busy, "org/tiny", PullOptions{Endpoint: hub.URL}); err == nil || err.Error() != "org/tiny: another pull of it is under way" {
		t.Errorf("concurrent pull: %v", err)
	}
	lk.Close()

	hub.Close()
	_, err = Pull(ctx, t.TempDir(), "org/tiny", PullOptions{Endpoint: hub.URL})
	if err == nil || !strings.Contains(err.Error(), "org/tiny: config.json: cannot reach "+hub.URL+": ") {
		t.Errorf("no network: %v", err)
	}
	if _, err := Pull(ctx, t.TempDir(), "../etc", PullOptions{Endpoint: hub.URL}); err == nil || !strings.Contains(err.Error(), "is not a hub model name") {
		t.Errorf("bad name: %v", err)
	}
}
