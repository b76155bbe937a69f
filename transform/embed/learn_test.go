package embed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/vectest"
)

// Two topics that never meet in one text, and words that both use: a
// learned model should put each topic's words near each other.
var (
	topicA  = strings.Fields("database query index table schema column postgres migration transaction cursor")
	topicB  = strings.Fields("kitten puppy garden flower meadow rabbit orchard tulip hedgehog sparrow")
	fillers = strings.Fields("today really want look again maybe still quite often need make good work thing")
)

// syntheticTexts are n texts, each of one topic: eight of its words and
// four fillers in a seeded random order.
func syntheticTexts(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []string
	for i := range n {
		topic := topicA
		if i%2 == 1 {
			topic = topicB
		}
		var ws []string
		for range 8 {
			ws = append(ws, topic[rng.IntN(len(topic))])
		}
		for range 4 {
			ws = append(ws, fillers[rng.IntN(len(fillers))])
		}
		rng.Shuffle(len(ws), func(a, b int) { ws[a], ws[b] = ws[b], ws[a] })
		out = append(out, strings.Join(ws, " ")+".")
	}
	return out
}

var smallOptions = TrainOptions{Dim: 8, HashDim: 32, MinCount: 2}

func train(t *testing.T, opt TrainOptions, texts []string, modelsDir, name string) *LearnedModel {
	t.Helper()
	tr, err := NewTrainer(opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range texts {
		tr.Add(s)
	}
	m, err := tr.Write(modelsDir, name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// openTrained trains a model on texts into a new models directory and
// opens it as the static provider.
func openTrained(t *testing.T, opt TrainOptions, texts []string, name string) *Static {
	t.Helper()
	models := t.TempDir()
	p, err := OpenStatic(train(t, opt, texts, models, name).Name, models)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func embedOne(t *testing.T, p Provider, text string) []float32 {
	t.Helper()
	vs, err := p.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

// Words used together get nearer vectors than words that never meet,
// and a text meets another of its topic that shares none of its words,
// which the hash provider's vectors cannot (they share no feature). The
// model loads through the static provider by the name it was written
// under.
func TestLearnCooccurrence(t *testing.T) {
	models := t.TempDir()
	m := train(t, smallOptions, syntheticTexts(400, 1), models, "learned/test")
	if !strings.HasPrefix(m.Name, "learned/test-") || len(m.Name) != len("learned/test-")+8 || m.Dim != 40 {
		t.Fatalf("model %+v", m)
	}
	p, err := NewProvider(Config{Provider: "static", Model: m.Name, ModelsDir: models})
	if err != nil {
		t.Fatal(err)
	}
	if p.Model() != m.Name || p.Dim() != 40 {
		t.Fatalf("loaded as %s (%d-d)", p.Model(), p.Dim())
	}
	vec := map[string][]float32{}
	for _, w := range append(append([]string{}, topicA...), topicB...) {
		vec[w] = embedOne(t, p, w)
	}
	var same, other float64
	var nSame, nOther int
	for _, group := range [][]string{topicA, topicB} {
		for i, a := range group {
			for _, b := range group[i+1:] {
				same += vectest.Dot(vec[a], vec[b])
				nSame++
			}
		}
	}
	for _, a := range topicA {
		for _, b := range topicB {
			other += vectest.Dot(vec[a], vec[b])
			nOther++
		}
	}
	same /= float64(nSame)
	other /= float64(nOther)
	if same < other+0.2 {
		t.Errorf("mean similarity of words of a topic %.3f, across topics %.3f: co-occurrence not learned", same, other)
	}
	// Texts with no word in common.
	q := embedOne(t, p, "postgres migration cursor")
	a := embedOne(t, p, "the schema of the table and its index")
	b := embedOne(t, p, "the tulip of the orchard and its rabbit")
	if vectest.Dot(q, a) < vectest.Dot(q, b)+0.1 {
		t.Errorf("query to its topic %.3f, to the other %.3f", vectest.Dot(q, a), vectest.Dot(q, b))
	}
	h := NewHash(0)
	if s := vectest.Dot(h.Vector("postgres migration cursor"), h.Vector("the schema of the table and its index")); s > 0.2 {
		t.Errorf("hash similarity %.3f of texts without a common word: the test does not test learning", s)
	}
	// A word the texts did not have is made of known ones: "databases"
	// of "database" and "##s", nearer its topic than the other.
	u := embedOne(t, p, "postgresdatabases")
	if vectest.Dot(u, vec["postgres"]) < 0.3 || vectest.Dot(u, vec["index"]) < vectest.Dot(u, vec["tulip"])+0.1 {
		t.Errorf("unseen word: to postgres %.3f, index %.3f, tulip %.3f", vectest.Dot(u, vec["postgres"]), vectest.Dot(u, vec["index"]), vectest.Dot(u, vec["tulip"]))
	}
	// Exact words still count: a text is nearest to itself among texts
	// of its topic.
	t1, t2 := "database index migration", "table schema cursor"
	if vectest.Dot(embedOne(t, p, t1), embedOne(t, p, t1)) < vectest.Dot(embedOne(t, p, t1), embedOne(t, p, t2))+0.1 {
		t.Errorf("exact words do not stand out")
	}
}

// The same texts and parameters give the same files, byte for byte; other
// texts or parameters another name, so that a lake never mixes their
// vectors.
func TestLearnDeterministic(t *testing.T) {
	texts := syntheticTexts(200, 2)
	a := train(t, smallOptions, texts, t.TempDir(), "learned/x")
	b := train(t, smallOptions, texts, t.TempDir(), "learned/x")
	if a.Name != b.Name {
		t.Fatalf("names %s and %s", a.Name, b.Name)
	}
	for _, f := range append(append([]string{}, StaticFiles...), "pos_training.json") {
		x, err := os.ReadFile(filepath.Join(a.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two trainings on the same texts", f)
		}
	}
	if c := train(t, smallOptions, texts[1:], t.TempDir(), "learned/x"); c.Name == a.Name {
		t.Errorf("other texts, same name %s", c.Name)
	}
	opt := smallOptions
	opt.Window = 3
	if c := train(t, opt, texts, t.TempDir(), "learned/x"); c.Name == a.Name {
		t.Errorf("other window, same name %s", c.Name)
	}
	// Retraining in place replaces the model whole.
	models := t.TempDir()
	first := train(t, smallOptions, texts, models, "learned/x")
	again := train(t, smallOptions, texts, models, "learned/x")
	if first.Dir != again.Dir {
		t.Fatalf("dirs %s, %s", first.Dir, again.Dir)
	}
	ents, _ := os.ReadDir(filepath.Dir(first.Dir))
	if len(ents) != 1 {
		t.Errorf("models directory holds %d entries after retraining, want the model alone", len(ents))
	}
}

func TestLearnErrors(t *testing.T) {
	models := t.TempDir()
	for _, tc := range []struct {
		texts []string
		want  string
	}{
		{nil, "0 texts give 0 terms"},
		{[]string{"", "   ", "the and of"}, "3 texts give 0 terms"},
		{[]string{"alpha beta gamma delta", "epsilon zeta gamma theta"}, "2 texts give 1 terms seen 2 times or more; 9 are needed"},
	} {
		tr, err := NewTrainer(smallOptions)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tc.texts {
			tr.Add(s)
		}
		_, err = tr.Write(models, "learned/x")
		if !errors.Is(err, ErrNoTrainingText) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d texts: %v, want %q", len(tc.texts), err, tc.want)
		}
	}
	if ents, _ := os.ReadDir(models); len(ents) != 0 {
		t.Errorf("a failed training left %d entries in the models directory", len(ents))
	}
	for _, opt := range []TrainOptions{{Dim: 1}, {SemanticShare: 1.5}, {HashDim: -1}, {HashDim: 5000}, {Window: 100}, {Power: 2}} {
		if _, err := NewTrainer(opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
	tr, _ := NewTrainer(smallOptions)
	for _, s := range syntheticTexts(50, 1) {
		tr.Add(s)
	}
	if _, err := tr.Write(models, "no-org"); err == nil || !strings.Contains(err.Error(), "not a hub model name") {
		t.Errorf("bad name: %v", err)
	}
}

func ExampleTrainer() {
	tr, _ := NewTrainer(TrainOptions{Dim: 8, HashDim: 32, MinCount: 2})
	for _, text := range syntheticTexts(100, 1) {
		tr.Add(text)
	}
	dir, _ := os.MkdirTemp("", "models")
	defer os.RemoveAll(dir)
	m, err := tr.Write(dir, "learned/example")
	fmt.Println(err, m.Texts, m.Dim)
	// Output: <nil> 100 40
}

// meanCrossSimilarity is the mean similarity under p of texts of one
// topic to texts of the other: what unrelated texts score.
func meanCrossSimilarity(t *testing.T, p Provider, texts []string) float64 {
	t.Helper()
	vs, err := p.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	var n int
	for i := 0; i < len(vs); i += 2 {
		for j := 1; j < len(vs); j += 2 {
			sum += vectest.Dot(vs[i], vs[j])
			n++
		}
	}
	return sum / float64(n)
}

// A word in every text says nothing of a text: under SIF weighting its
// row is short, so a text's vector leans to its rarer words.
func TestLearnSIFWeighting(t *testing.T) {
	var texts []string
	for _, s := range syntheticTexts(400, 3) {
		texts = append(texts, s+" okay okay")
	}
	near := func(opt TrainOptions) float64 {
		p := openTrained(t, opt, texts, "learned/sif")
		return vectest.Dot(embedOne(t, p, "postgres okay"), embedOne(t, p, "okay"))
	}
	weighted := near(smallOptions)
	opt := smallOptions
	opt.SIF = -1
	plain := near(opt)
	if weighted > plain-0.2 || weighted > 0.5 {
		t.Errorf(`"postgres okay" to "okay": %.3f weighted (the default), %.3f without weighting: the common word is not weighed down`, weighted, plain)
	}
}

// Removing the learned vectors' common direction makes unrelated texts
// less alike.
func TestLearnCentered(t *testing.T) {
	texts := syntheticTexts(400, 4)
	cross := func(opt TrainOptions) float64 {
		return meanCrossSimilarity(t, openTrained(t, opt, texts, "learned/c"), texts[:60])
	}
	opt := smallOptions
	opt.HashDim, opt.SemanticShare = -1, 1 // the learned part alone
	centered := cross(opt)
	opt.NoCenter = true
	plain := cross(opt)
	if centered > plain-0.05 {
		t.Errorf("texts of different topics: %.3f centred (the default), %.3f not: no common direction removed", centered, plain)
	}
}

// A learned model records the chance level of its lake's texts, and
// MinSimilarity finds it by the name a lake records (in the models
// directory, or as a directory): unrelated texts score below it, a text
// and its near copy above.
func TestLearnChanceLevel(t *testing.T) {
	models := t.TempDir()
	t.Setenv("POS_MODELS_DIR", models)
	texts := syntheticTexts(400, 5)
	m := train(t, smallOptions, texts, models, "learned/chance")
	level := MinSimilarity(m.Name, m.Dim)
	if !(level > 0 && level < 1) {
		t.Fatalf("MinSimilarity(%s, %d) = %v, want a chance level in (0, 1)", m.Name, m.Dim, level)
	}
	if got := MinSimilarity(m.Dir, m.Dim); got != level {
		t.Errorf("by directory %v, by name %v", got, level)
	}
	if got := MinSimilarity(m.Name, m.Dim+1); got != 0 {
		t.Errorf("another dimension: %v, want 0", got)
	}
	if got := MinSimilarity("learned/absent-01234567", m.Dim); got != 0 {
		t.Errorf("a model not on this machine: %v, want 0", got)
	}
	p, err := OpenStatic(m.Name, models)
	if err != nil {
		t.Fatal(err)
	}
	if cross := meanCrossSimilarity(t, p, texts[:60]); cross >= level {
		t.Errorf("texts of different topics score %.3f on average, above the chance level %.3f", cross, level)
	}
	q := embedOne(t, p, texts[7])
	if s := vectest.Dot(q, embedOne(t, p, texts[7]+" again")); s <= level {
		t.Errorf("a text and its near copy score %.3f, not above the chance level %.3f", s, level)
	}
}

// center removes the rows' weighted mean and, asked, their leading
// principal component: rows spread mostly along one axis keep nothing of
// it.
func TestLearnCenterComponents(t *testing.T) {
	const n, dim = 200, 6
	rng := rand.New(rand.NewPCG(9, 9))
	vecs := make([]float64, n*dim)
	weights := make([]float64, n)
	for i := range n {
		row := vecs[i*dim : (i+1)*dim]
		row[0] = 3 + 5*rng.NormFloat64() // a common offset and a wide spread along axis 0
		for j := 1; j < dim; j++ {
			row[j] = 0.3 * rng.NormFloat64()
		}
		weights[i] = float64(1 + i%3)
	}
	meanAlong0 := func(v []float64) (mean, abs float64) {
		for i := range n {
			mean += weights[i] * v[i*dim]
			abs += math.Abs(v[i*dim])
		}
		return mean, abs / n
	}
	only := append([]float64(nil), vecs...)
	center(only, dim, weights, 0)
	var total float64
	for _, w := range weights {
		total += w
	}
	// Unit rows along axis 0 lean to its positive side by about 0.45
	// before centring, by chance alone after it.
	if m, _ := meanAlong0(only); math.Abs(m/total) > 0.15 {
		t.Errorf("centred rows' weighted mean along axis 0: %.3f", m/total)
	}
	if _, a := meanAlong0(only); a < 0.5 {
		t.Errorf("centring alone removed the spread along axis 0 (mean |x| %.3f)", a)
	}
	center(vecs, dim, weights, 1)
	if _, a := meanAlong0(vecs); a > 0.05 {
		t.Errorf("after removing the leading component, mean |x| along axis 0 is %.3f", a)
	}
	for i := range n {
		var norm float64
		for _, x := range vecs[i*dim : (i+1)*dim] {
			norm += x * x
		}
		if math.Abs(norm-1) > 1e-9 {
			t.Fatalf("row %d has squared length %v", i, norm)
		}
	}
}
