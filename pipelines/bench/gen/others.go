package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	aider "github.com/pos-lake/pos/extract/aider/about"
	claudeabout "github.com/pos-lake/pos/extract/claudecode/about"
	codex "github.com/pos-lake/pos/extract/codex/about"
	gemini "github.com/pos-lake/pos/extract/gemini/about"
	"github.com/pos-lake/pos/extract/platforms"
)

// claudeCode is the platform gen replicates from --src.
const claudeCode = claudeabout.Name

// supported returns the platforms gen replicates, in the order the
// registry lists them.
func supported() []string {
	return slices.DeleteFunc(platforms.Names(), func(p string) bool {
		_, ok := otherPlatforms[p]
		return p != claudeCode && !ok
	})
}

// otherPlatforms are the platforms besides Claude Code that gen replicates:
// each reads <corpus>/<dir> and lays its copies out as the tool does.
var otherPlatforms = map[string]struct {
	dir   string
	match func(rel string) bool
	out   func(f *srcFile) func(data []byte, r int) (string, error)
}{
	// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<session id>.jsonl
	codex.Name: {"codex", func(rel string) bool { return strings.HasSuffix(rel, ".jsonl") }, func(*srcFile) func([]byte, int) (string, error) {
		return codexPath
	}},
	// ~/.gemini/tmp/<project hash>/chats/session-<time>-<id8>.json
	gemini.Name: {"gemini", func(rel string) bool { return strings.HasSuffix(rel, ".json") }, func(*srcFile) func([]byte, int) (string, error) {
		return geminiPath
	}},
	// Aider keeps its history in each project's root: aider/<project>-<r>/.
	aider.Name: {"aider", func(rel string) bool {
		b := path.Base(rel)
		return b == ".aider.chat.history.md" || b == ".aider.input.history"
	}, func(f *srcFile) func([]byte, int) (string, error) {
		dir, base := path.Split(f.rel)
		project := path.Base(path.Clean(dir))
		return func(_ []byte, r int) (string, error) {
			return filepath.Join("aider", fmt.Sprintf("%s-%03d", project, r), base), nil
		}
	}},
}

// loadOther adds the real files of platform p under corpus to s.
func loadOther(s *source, corpus, p string) error {
	spec := otherPlatforms[p]
	root := filepath.Join(corpus, spec.dir)
	var files []*srcFile
	err := filepath.WalkDir(root, func(pth string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, pth)
		rel = filepath.ToSlash(rel)
		if d.IsDir() || !spec.match(rel) {
			return nil
		}
		b, err := os.ReadFile(pth)
		if err != nil {
			return err
		}
		f := &srcFile{platform: p, rel: p + "/" + rel, data: b, lastTS: lastTimestamp(b)}
		f.unit = p + "/" + rel
		if p == aider.Name {
			f.unit = p + "/" + path.Dir(rel)
		}
		f.out = spec.out(f)
		files = append(files, f)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: no files under %s", p, root)
	}
	slices.SortFunc(files, func(a, b *srcFile) int { return strings.Compare(a.rel, b.rel) })
	for _, f := range files {
		s.files = append(s.files, f)
		s.bytes += int64(len(f.data))
	}
	return nil
}

// codexPath names a rollout after its (rewritten) session_meta: its id and
// its time, in UTC.
func codexPath(data []byte, _ int) (string, error) {
	first, _, _ := bytes.Cut(data, []byte{'\n'})
	var l struct {
		Timestamp string `json:"timestamp"`
		Type      string `json:"type"`
		Payload   struct {
			ID        string `json:"id"`
			Timestamp string `json:"timestamp"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(first, &l); err != nil || l.Type != "session_meta" || !isUUID(l.Payload.ID) {
		return "", fmt.Errorf("the first line is not a session_meta with an id")
	}
	t, err := time.Parse(time.RFC3339Nano, cmpOr(l.Payload.Timestamp, l.Timestamp))
	if err != nil {
		return "", err
	}
	t = t.UTC()
	return filepath.Join(".codex", "sessions", t.Format("2006"), t.Format("01"), t.Format("02"),
		"rollout-"+t.Format("2006-01-02T15-04-05")+"-"+l.Payload.ID+".jsonl"), nil
}

// geminiPath names a Gemini CLI chat after its (rewritten) session.
func geminiPath(data []byte, _ int) (string, error) {
	var c struct {
		SessionID   string `json:"sessionId"`
		ProjectHash string `json:"projectHash"`
		StartTime   string `json:"startTime"`
	}
	if err := json.Unmarshal(data, &c); err != nil || !isUUID(c.SessionID) || c.ProjectHash == "" || strings.ContainsAny(c.ProjectHash, `/\.`) {
		return "", fmt.Errorf("not a Gemini CLI chat with a sessionId and projectHash")
	}
	t, err := time.Parse(time.RFC3339Nano, c.StartTime)
	if err != nil {
		return "", err
	}
	return filepath.Join(".gemini", "tmp", c.ProjectHash, "chats",
		"session-"+t.UTC().Format("2006-01-02T15-04")+"-"+c.SessionID[:8]+".json"), nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
