// Package gemini reads Gemini CLI chat histories under
// ~/.gemini/tmp/<project>/chats/ ($GEMINI_CLI_HOME replaces the home
// directory, as Gemini CLI's own homedir() does): the older session-*.json
// files, one pretty-printed ConversationRecord each, and the newer
// session-*.jsonl files, one record per line.
//
// The JSONL layout is the one Gemini CLI's ChatRecordingService writes and
// loadConversationRecord reads back (google-gemini/gemini-cli,
// packages/core/src/services/chatRecordingService.ts at commit 016443b5e7bf,
// the types in chatRecordingTypes.ts at 04741d1d7383; project folders and
// .project_root in config/storage.ts and config/projectRegistry.ts;
// GEMINI_CLI_HOME in utils/paths.ts):
//
//   - the first line is the conversation's metadata {sessionId,
//     projectHash, startTime, lastUpdated, kind, directories};
//   - every message is appended whole each time it is recorded or updated
//     (tokens, tool calls and their results arrive in later copies of the
//     same id); the last copy of an id is the message, kept at the place
//     its first copy took;
//   - {"$set": {…}} merges metadata (lastUpdated, summary, directories,
//     memoryScratchpad …); a $set with "messages" rewrites the whole
//     conversation (updateMessagesFromHistory);
//   - {"$rewindTo": id} removes that message and every message after it
//     (all of them when the id is unknown);
//   - subagents get their own file, chats/<parent session id>/<id>.jsonl,
//     with kind "subagent";
//   - resuming a legacy .json session writes its .jsonl beside it, with
//     the same session and message ids (so both yield the same records).
//
// Every line (or legacy message) is one raw record. A message record is
// made from the last copy of each message that survives rewinds, after the
// raw record of the line that holds that copy; superseded and rewound
// copies stay raw only. Tool calls and their results are inside the
// assistant message that made them.
package gemini

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/gemini/about"
	"github.com/pos-lake/pos/schema"
)

// AdapterVersion changes when the records this adapter emits change.
const AdapterVersion = "1"

const platform = about.Name

// Adapter is the Gemini CLI extractor.
type Adapter struct{}

func init() { extract.Register(Adapter{}) }

// Platform implements extract.Adapter.
func (Adapter) Platform() string { return platform }

// Dir is Gemini CLI's directory: $GEMINI_CLI_HOME/.gemini, else ~/.gemini.
func Dir(opt *extract.Options) string {
	if v := strings.TrimSpace(opt.Getenv("GEMINI_CLI_HOME")); v != "" {
		return filepath.Join(v, ".gemini")
	}
	return opt.InHome(".gemini")
}

// roots returns the directories to search: tmp/ of a Gemini directory
// (given as .gemini, or as the home holding it), else the root itself.
func roots(opt *extract.Options) []string {
	if len(opt.Roots) == 0 {
		d := Dir(opt)
		if d == "" {
			return nil
		}
		return []string{filepath.Join(d, "tmp")}
	}
	var out []string
	for _, r := range opt.Roots {
		switch {
		case extract.IsDir(filepath.Join(r, ".gemini", "tmp")):
			out = append(out, filepath.Join(r, ".gemini", "tmp"))
		case filepath.Base(filepath.Clean(r)) == ".gemini" && extract.IsDir(filepath.Join(r, "tmp")):
			out = append(out, filepath.Join(r, "tmp"))
		default:
			out = append(out, r)
		}
	}
	return out
}

// isChat tells a chat file: chats/session-*.json(l), a subagent's
// chats/<parent>/<id>.jsonl, or, outside a chats folder (a copy), a
// session-*.json(l) that starts with Gemini CLI's conversation metadata.
// Other tools' files under the same root are left to their adapters.
func isChat(opt *extract.Options, path string) (bool, error) {
	if !chatName(path) {
		return false, nil
	}
	if inChats(path) {
		return true, nil
	}
	b, err := opt.Head(path, 4<<10)
	if err != nil {
		return false, err
	}
	head := bytes.TrimLeft(b, " \t\r\n")
	if !bytes.HasPrefix(head, []byte("{")) {
		return false, nil
	}
	if i := bytes.IndexByte(head, ','); i >= 0 {
		head = head[:i]
	}
	return bytes.Contains(head, []byte(`"sessionId"`)), nil
}

// chatName reports whether a path is named as a chat file is: in a chats
// folder, or session-*.json(l) anywhere.
func chatName(path string) bool {
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	if ext != ".json" && ext != ".jsonl" {
		return false
	}
	return inChats(path) || strings.HasPrefix(base, "session-")
}

// inChats reports whether a .json(l) path is where Gemini CLI keeps its
// chats: chats/session-*, or a subagent's chats/<parent>/<id>.jsonl.
func inChats(path string) bool {
	base := filepath.Base(path)
	switch {
	case filepath.Base(filepath.Dir(path)) == "chats" && strings.HasPrefix(base, "session-"):
		return true
	case filepath.Ext(base) == ".jsonl" && filepath.Base(filepath.Dir(filepath.Dir(path))) == "chats":
		return true
	}
	return false
}

// Locations implements extract.Adapter.
func (Adapter) Locations(opt extract.Options) []string { return roots(&opt) }

// Extract implements extract.Adapter.
func (Adapter) Extract(ctx context.Context, opt extract.Options, emit extract.Emit) error {
	opt.Platform = Adapter{}.Platform() // keys this adapter's watermarks
	match := extract.Match{
		Name:    chatName,
		Content: func(path string) (bool, error) { return isChat(&opt, path) },
	}
	projects := &sync.Map{} // project dir -> its .project_root
	var readers extract.LineReaders
	return opt.ReadChanged(ctx, roots(&opt), match, emit, func(ctx context.Context, sf extract.SourceFile, src *extract.Source, emit extract.Emit) error {
		r := &run{opt: &opt, emit: emit, projects: projects, lr: readers.Get()}
		defer func() { readers.Put(r.lr) }()
		if strings.HasSuffix(sf.Path, ".jsonl") {
			return r.jsonl(ctx, sf, src)
		}
		return r.json(ctx, sf, src)
	})
}

type run struct {
	opt      *extract.Options
	emit     extract.Emit
	projects *sync.Map
	lr       *schema.LineReader // reused across passes and files
}

// projectRoot is the project a chat file belongs to, from the
// .project_root marker in <tmp>/<project>/ (Gemini CLI's ProjectRegistry).
func (r *run) projectRoot(path string) (string, error) {
	dir := filepath.Dir(path)
	for i := 0; i < 3 && filepath.Base(dir) != "chats"; i++ {
		dir = filepath.Dir(dir)
	}
	if filepath.Base(dir) != "chats" {
		return "", nil
	}
	proj := filepath.Dir(dir)
	if v, ok := r.projects.Load(proj); ok {
		return v.(string), nil
	}
	root := ""
	marker := filepath.Join(proj, ".project_root")
	b, err := r.opt.ReadSmall(marker, 64<<10)
	if err != nil {
		// Reported once (the result is kept): the chats are read without
		// their project.
		if _, loaded := r.projects.LoadOrStore(proj, ""); !loaded {
			return "", r.opt.SkipFile(marker, err)
		}
		return "", nil
	}
	root = strings.TrimSpace(string(b))
	r.projects.Store(proj, root)
	return root, nil
}

// parentOf is the parent session of a subagent chat
// (chats/<parent>/<id>.jsonl), or "".
func parentOf(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(filepath.Dir(dir)) == "chats" {
		return filepath.Base(dir)
	}
	return ""
}
