package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/load"
)

// topicLake embeds n exchanges (pos-embed, hash provider) into a new lake:
// half about databases, half about gardens.
func topicLake(t *testing.T, n int) string {
	t.Helper()
	topics := [][]string{
		strings.Fields("database query index table schema column postgres migration transaction cursor"),
		strings.Fields("kitten puppy garden flower meadow rabbit orchard tulip hedgehog sparrow"),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var in strings.Builder
	for i := range n {
		var ws []string
		for range 10 {
			ws = append(ws, topics[i%2][rng.IntN(10)])
		}
		fmt.Fprintf(&in, `{"schema":"pos/1","kind":"exchange","id":"e%d","platform":"claude_code","session_id":"s%d","ts":"2026-02-01T10:00:00Z","role":"user","content_type":"exchange","text":%q,"exchange":{"number":1,"message_count":2,"tool_count":0}}`+"\n",
			i, i, strings.Join(ws, " "))
	}
	code, out, stderr := embedRun(in.String(), "--no-cache", "-q")
	if code != 0 {
		t.Fatalf("embed: %d %s", code, stderr)
	}
	lake := filepath.Join(t.TempDir(), "lake")
	now := func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) }
	if _, err := load.Load(context.Background(), strings.NewReader(out), load.Options{Lake: lake, Now: now, NoCatalog: true}); err != nil {
		t.Fatal(err)
	}
	return lake
}

// pos-embed model train learns from a lake's chunks and writes a model
// that pos-embed --provider static embeds with by its name; the same lake
// trains the same model again.
func TestModelTrainCLI(t *testing.T) {
	models := filepath.Join(t.TempDir(), "models")
	t.Setenv("POS_MODELS_DIR", models)
	lake := topicLake(t, 120)
	args := []string{"model", "train", "--lake", lake, "--name", "learned/t", "--dim", "8", "--hash-dim", "32", "--min-count", "2"}
	code, stdout, stderr := embedRun("", args...)
	re := regexp.MustCompile(`^pos-embed: trained (learned/t-[0-9a-f]{8}) from 120 chunks: 20 terms learned, 43 words and characters × 40 dimensions, .* use it with --provider static --model learned/t-[0-9a-f]{8}\n$`)
	m := re.FindStringSubmatch(stderr)
	if code != 0 || stdout != "" || m == nil {
		t.Fatalf("train: %d %q %q", code, stdout, stderr)
	}
	name := m[1]
	tok, err := os.ReadFile(filepath.Join(models, name, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	code, _, again := embedRun("", args...)
	if code != 0 || !strings.Contains(again, "trained "+name+" ") {
		t.Errorf("retrained: %d %q", code, again)
	}
	if tok2, _ := os.ReadFile(filepath.Join(models, name, "tokenizer.json")); string(tok2) != string(tok) {
		t.Errorf("retraining on the same lake changed tokenizer.json")
	}
	code, stdout, stderr = embedRun(input, "--no-cache", "--provider", "static", "--model", name)
	if code != 0 || strings.Count(stdout, `"provider":"static"`) != 2 || !strings.Contains(stdout, `"model":"`+name+`","dim":40,`) {
		t.Errorf("embed with the learned model: %d %q\n%s", code, stderr, stdout)
	}
	code, stdout, _ = embedRun("", "model", "list")
	if code != 0 || !strings.Contains(stdout, name) {
		t.Errorf("list: %d %q", code, stdout)
	}
}

func TestModelTrainCLIErrors(t *testing.T) {
	models := filepath.Join(t.TempDir(), "models")
	t.Setenv("POS_MODELS_DIR", models)
	small := topicLake(t, 2)
	missing := filepath.Join(t.TempDir(), "none")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--lake", missing}, 1, "pos-embed: no lake at " + missing + ": the directory does not exist"},
		{[]string{"--lake", small}, 1, "pos-embed: " + small + ": not enough text to learn word vectors from: 2 texts give 1 terms seen 3 times or more; 129 are needed"},
		{[]string{"--lake", small, "--name", "flat"}, 2, `"flat" is not a hub model name`},
		{[]string{"--lake", small, "--hash-dim", "0"}, 2, "a semantic share below 1 needs hashed dimensions"},
		{[]string{"--lake", small, "extra"}, 2, "model train takes no arguments"},
	} {
		code, stdout, stderr := embedRun("", append([]string{"model", "train"}, tc.args...)...)
		if code != tc.code || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: %d %q, want %d %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(models); !os.IsNotExist(err) {
		t.Errorf("failed trainings made %s", models)
	}
}
