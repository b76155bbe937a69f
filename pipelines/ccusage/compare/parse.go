package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bytedance/sonic"
)

// ---------------------------------------------------------------------------
// The transcripts, counted by each tool's rules

// line is what both tools read of a transcript line that carries usage.
// Pointers tell an absent field from an empty one.
type line struct {
	Type      string  `json:"type"`
	Timestamp string  `json:"timestamp"`
	SessionID *string `json:"sessionId"`
	RequestID *string `json:"requestId"`
	Version   *string `json:"version"`
	UUID      string  `json:"uuid"`
	Sidechain bool    `json:"isSidechain"`
	AgentID   string  `json:"agentId"`
	Message   *struct {
		ID    *string `json:"id"`
		Model *string `json:"model"`
		Usage *struct {
			In  int64 `json:"input_tokens"`
			Out int64 `json:"output_tokens"`
			CW  int64 `json:"cache_creation_input_tokens"`
			CR  int64 `json:"cache_read_input_tokens"`
			// Speed "fast": both name the model <model>-fast.
			Speed string `json:"speed"`
			// Calls to an advisor model within the request: both count
			// them under the advisor's model, outside the usage above.
			Iterations []struct {
				Type  string `json:"type"`
				Model string `json:"model"`
				In    int64  `json:"input_tokens"`
				Out   int64  `json:"output_tokens"`
				CW    int64  `json:"cache_creation_input_tokens"`
				CR    int64  `json:"cache_read_input_tokens"`
			} `json:"iterations"`
		} `json:"usage"`
	} `json:"message"`
	Data *struct {
		Type    string          `json:"type"`
		AgentID string          `json:"agentId"`
		Message json.RawMessage `json:"message"`
	} `json:"data"`
}

// entry is one line with usage, where it is and what it says.
type entry struct {
	file      string
	n         int // 1-based line number
	ts        time.Time
	day       string
	model     string // "" when absent
	hasModel  bool
	msgID     string
	hasMsgID  bool
	reqID     string
	hasReqID  bool
	session   string
	uuid      string
	sidechain bool
	agent     string
	usage     tokens
	advisor   []advisorCall // usage.iterations of type advisor_message
	progress  bool          // usage embedded in a progress (agent_progress) line
	// pos reads a progress line's copy (an assistant line with a uuid, in
	// an agent_progress line naming its agent) when the agent has no
	// transcript beside the session: copyOf is that agent, "" otherwise.
	copyOf    string
	skip      string // why ccusage skips it, "" if it does not
	assistant bool   // a type "assistant" line, what pos reads usage from
	dropped   bool   // ccusage drops it as a sidechain replay
}

func (e *entry) where() string { return fmt.Sprintf("%s:%d", e.file, e.n) }

// advisorCall is one call of an advisor model within a request.
type advisorCall struct {
	model string
	usage tokens
}

var semverPrefix = regexp.MustCompile(`^\d+\.\d+\.\d+`)

func parseLine(b []byte, file string, n int) (*entry, bool) {
	var l line
	if err := sonic.Unmarshal(b, &l); err != nil {
		return nil, false
	}
	e := &entry{file: file, n: n, uuid: l.UUID, sidechain: l.Sidechain, agent: l.AgentID, assistant: l.Type == "assistant"}
	ts, sess, req, msg, version := l.Timestamp, l.SessionID, l.RequestID, l.Message, l.Version
	if msg == nil || msg.Usage == nil {
		// A progress line may carry a subagent's assistant message.
		if l.Data == nil || len(l.Data.Message) == 0 {
			return nil, false
		}
		var inner line
		if err := sonic.Unmarshal(l.Data.Message, &inner); err != nil || inner.Message == nil || inner.Message.Usage == nil {
			return nil, false
		}
		ts, req, msg, version = inner.Timestamp, inner.RequestID, inner.Message, nil
		e.sidechain, e.progress, e.assistant = inner.Sidechain, true, false
		if l.Data.Type == "agent_progress" && l.Data.AgentID != "" && inner.Type == "assistant" && inner.UUID != "" {
			e.copyOf, e.uuid, e.agent = l.Data.AgentID, inner.UUID, l.Data.AgentID
		}
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return nil, false
	}
	e.ts = t.UTC()
	e.day = e.ts.Format(time.DateOnly)
	u := msg.Usage
	e.usage = tokens{u.In, u.Out, u.CW, u.CR}
	for _, it := range u.Iterations {
		if it.Type == "advisor_message" && it.Model != "" {
			e.advisor = append(e.advisor, advisorCall{it.Model, tokens{it.In, it.Out, it.CW, it.CR}})
		}
	}
	if msg.Model != nil {
		e.model, e.hasModel = *msg.Model, true
		if u.Speed == "fast" && e.model != "" {
			e.model += "-fast"
		}
	}
	if msg.ID != nil {
		e.msgID, e.hasMsgID = *msg.ID, true
	}
	if req != nil {
		e.reqID, e.hasReqID = *req, true
	}
	if sess != nil {
		e.session = *sess
	}
	switch {
	case version != nil && !semverPrefix.MatchString(*version):
		e.skip = fmt.Sprintf("version %q is not semver", *version)
	case sess != nil && *sess == "":
		e.skip = "empty sessionId"
	case req != nil && *req == "":
		e.skip = "empty requestId"
	case msg.ID != nil && *msg.ID == "":
		e.skip = "empty message.id"
	case msg.Model != nil && *msg.Model == "":
		e.skip = "empty model"
	}
	return e, true
}

var usageMarker = []byte(`"usage":{`)

func scan(dir string) ([][]*entry, map[string]bool, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(files)
	present := make(map[string]bool, len(files))
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		present[filepath.ToSlash(rel)] = true
	}
	out := make([][]*entry, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = scanFile(files[i], dir)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, present, errors.Join(errs...)
}

func scanFile(p, dir string) ([]*entry, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rel, _ := filepath.Rel(dir, p)
	br := bufio.NewReaderSize(f, 1<<20)
	var out []*entry
	var acc []byte
	for n := 1; ; n++ {
		b, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			acc = append(acc, b...)
			b, err = br.ReadSlice('\n')
		}
		if len(acc) > 0 {
			b = append(acc, b...)
			acc = acc[:0]
		}
		if len(b) > 0 && bytes.Contains(b, usageMarker) {
			if e, ok := parseLine(bytes.TrimSpace(b), rel, n); ok {
				out = append(out, e)
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
