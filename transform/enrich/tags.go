package enrich

import (
	"math"
	"path"
	"slices"
	"strings"
)

// TagRule names a tag and what earns it: file extensions or names, whole
// words, and phrases. Activities (generic words) need two hits.
type TagRule struct {
	Tag     string
	Files   []string // ".go", "Dockerfile", "deployment.yaml"
	Words   []string // whole words, lower case
	Phrases []string // lower-case phrases matched anywhere
	MinHits int      // hits needed (default 1)
}

// DefaultTagRules is the starting table (languages, infrastructure,
// activities) from the design notes, with file-name rules made explicit.
var DefaultTagRules = []TagRule{
	{Tag: "golang", Files: []string{".go", "go.mod", "go.sum"}, Phrases: []string{"go mod", "go build", "go test", "go vet", "golang"}},
	{Tag: "python", Files: []string{".py", "pyproject.toml", "requirements.txt"}, Words: []string{"pip", "pytest", "python", "python3"}},
	{Tag: "typescript", Files: []string{".ts", ".tsx", "package.json", "tsconfig.json"}, Words: []string{"npm", "yarn", "pnpm", "typescript", "nodejs"}},
	{Tag: "javascript", Files: []string{".js", ".jsx", ".mjs"}, Words: []string{"javascript"}},
	{Tag: "rust", Files: []string{".rs", "Cargo.toml"}, Words: []string{"cargo", "rustc", "rustup"}},
	{Tag: "elixir", Files: []string{".ex", ".exs", "mix.exs"}, Words: []string{"elixir", "phoenix"}, Phrases: []string{"mix test", "mix phx"}},
	{Tag: "kubernetes", Files: []string{"deployment.yaml", "service.yaml", "kustomization.yaml"}, Words: []string{"kubectl", "k8s", "helm", "kubernetes"}},
	{Tag: "terraform", Files: []string{".tf", ".tfvars", ".tfstate"}, Words: []string{"terraform", "tfstate", "tfvars"}},
	{Tag: "docker", Files: []string{"Dockerfile", "docker-compose.yml", "docker-compose.yaml", "compose.yaml"}, Words: []string{"docker", "dockerfile"}, Phrases: []string{"docker-compose", "docker compose"}},
	{Tag: "aws", Words: []string{"aws", "s3", "ec2", "lambda", "cloudformation"}},
	{Tag: "sql", Files: []string{".sql"}, Words: []string{"sql", "postgres", "postgresql", "sqlite", "duckdb", "mysql"}},
	{Tag: "debugging", Words: []string{"fix", "fixed", "bug", "error", "errors", "broken", "failing", "fails", "crash", "panic", "traceback"}, MinHits: 2},
	{Tag: "documentation", Files: []string{".md", ".rst"}, Words: []string{"docs", "readme", "documentation", "document", "explain"}, MinHits: 2},
	{Tag: "testing", Files: []string{"_test.go", ".test.ts", ".spec.ts", "test_"}, Words: []string{"test", "tests", "spec", "coverage", "mock", "assert", "fixture"}, MinHits: 2},
	{Tag: "refactoring", Words: []string{"refactor", "refactoring", "cleanup", "rename", "simplify", "extract"}, MinHits: 2},
	{Tag: "security", Words: []string{"auth", "secret", "secrets", "credential", "credentials", "permission", "encrypt", "token", "oauth"}, MinHits: 2},
	{Tag: "performance", Words: []string{"optimize", "optimise", "slow", "faster", "cache", "latency", "benchmark", "throughput"}, MinHits: 2},
}

// vocabulary maps each word of a rule set to the rules that count it. Most
// words of a text are none of them; the lengths and first bytes of the
// rules' words pass most of those over without a map lookup.
type vocabulary struct {
	rules          map[string][]int
	first          [256]bool
	minLen, maxLen int
}

var defaultVocab = newVocabulary(DefaultTagRules)

func newVocabulary(rules []TagRule) *vocabulary {
	v := &vocabulary{rules: map[string][]int{}, minLen: math.MaxInt}
	for i, r := range rules {
		for _, w := range r.Words {
			if w == "" {
				continue
			}
			v.rules[w] = append(v.rules[w], i)
			v.first[w[0]] = true
			v.minLen, v.maxLen = min(v.minLen, len(w)), max(v.maxLen, len(w))
		}
	}
	return v
}

// of returns the rules that count word.
func (v *vocabulary) of(word string) []int {
	if len(word) < v.minLen || len(word) > v.maxLen || !v.first[word[0]] {
		return nil
	}
	return v.rules[word]
}

// Tags returns the tags of a text and the files it concerns, in rule
// order.
func Tags(rules []TagRule, text string, files []string) []string {
	vocab := defaultVocab
	if len(rules) != len(DefaultTagRules) || &rules[0] != &DefaultTagRules[0] {
		vocab = newVocabulary(rules)
	}
	lower := strings.ToLower(text)
	hits := make([]int, len(rules))
	// Whole words: runs of letters, digits, '_' and '-'.
	for i := 0; i < len(lower); {
		for i < len(lower) && !wordByte(lower[i]) {
			i++
		}
		j := i
		for j < len(lower) && wordByte(lower[j]) {
			j++
		}
		if j > i {
			for _, r := range vocab.of(lower[i:j]) {
				hits[r]++
			}
		}
		i = j
	}
	var out []string
	for i, r := range rules {
		for _, f := range files {
			base := path.Base(f)
			for _, pat := range r.Files {
				if strings.HasPrefix(pat, ".") && strings.HasSuffix(base, pat) || base == pat ||
					strings.HasSuffix(pat, "_") && strings.HasPrefix(base, pat) || strings.HasPrefix(pat, "_") && strings.HasSuffix(base, pat) {
					hits[i] += 2 // a file of the kind is strong evidence
				}
			}
		}
		for _, p := range r.Phrases {
			hits[i] += strings.Count(lower, p)
		}
		if hits[i] >= max(r.MinHits, 1) && !slices.Contains(out, r.Tag) {
			out = append(out, r.Tag)
		}
	}
	return out
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c >= 0x80
}
