package corpus

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pos-lake/pos/extract/platform"
)

func TestFolder(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"claude", "codex"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "gemini"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p    platform.Platform
		want string
	}{
		{platform.Platform{Name: "claude_code", Aliases: []string{"claude", "claude-code"}}, "claude"},
		{platform.Platform{Name: "codex", Aliases: []string{"codex-cli"}}, "codex"},
		{platform.Platform{Name: "gemini"}, ""}, // a file, not a folder
		{platform.Platform{Name: "push"}, ""},
	} {
		got, ok := Folder(dir, c.p)
		if c.want == "" {
			if ok {
				t.Errorf("%s: folder %s, want none", c.p.Name, got)
			}
			continue
		}
		if want := filepath.Join(dir, c.want); !ok || got != want {
			t.Errorf("%s: folder %q, %v; want %q", c.p.Name, got, ok, want)
		}
	}
}

func TestPath(t *testing.T) {
	t.Setenv("POS_CORPUS", "rel/corpus")
	if got, _ := filepath.Abs("rel/corpus"); Path() != got {
		t.Errorf("Path() = %q with POS_CORPUS=rel/corpus, want %q", Path(), got)
	}
	t.Setenv("POS_CORPUS", "")
	if got := Path(); filepath.Base(got) != "corpus" || filepath.Base(filepath.Dir(got)) != "shared" || !filepath.IsAbs(got) {
		t.Errorf("Path() = %q, want an absolute .../shared/corpus", got)
	}
}
