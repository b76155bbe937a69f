package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// badFrames makes n frames that are not valid JSON-RPC messages, of every
// kind a client (or a broken pipe) can send: random bytes, truncated
// messages, JSON that is not an object, the wrong version, ids that are
// not ids, too deep or too large. wantID is the id each error answer
// must carry ("null" when the frame has no usable one).
func badFrames(r *rand.Rand, n int) (frames []string, wantID []string) {
	valid := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":"retry"}}}`
	for i := range n {
		id := "null"
		var f string
		switch r.IntN(11) {
		case 0: // random bytes, never a JSON value: they start with '#'
			b := make([]byte, 1+r.IntN(300))
			for j := range b {
				b[j] = byte(r.IntN(256))
				if b[j] == '\n' {
					b[j] = ' '
				}
			}
			f = "#" + string(b)
		case 1: // a message cut short
			m := fmt.Sprintf(valid, i)
			f = m[:1+r.IntN(len(m)-1)]
		case 2:
			f = []string{`[1,2]`, `"str"`, `42`, `null`, `true`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`}[r.IntN(7)]
		case 3:
			f, id = fmt.Sprintf(`{"jsonrpc":"1.0","id":%d,"method":"ping"}`, i), fmt.Sprint(i)
		case 4:
			f = fmt.Sprintf(`{"id":%d,"method":"ping"}`, i)
			id = fmt.Sprint(i)
		case 5:
			f = `{"jsonrpc":"2.0","id":` + []string{`{"a":1}`, `[1]`, `true`, `1.5`, `1e300`}[r.IntN(5)] + `,"method":"ping"}`
		case 6:
			d := 1000 + r.IntN(100000)
			f = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":%s%s}}`, i,
				strings.Repeat("[", d), strings.Repeat("]", d))
		case 7:
			f = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"x":"%s"}}`, i, strings.Repeat("a", 4<<20+r.IntN(1<<20)))
		case 8:
			f, id = fmt.Sprintf(`{"jsonrpc":"2.0","id":"s%d","method":7}`, i), fmt.Sprintf(`"s%d"`, i)
		case 9:
			f, id = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":"x"}`, i), fmt.Sprint(i)
		default:
			f = fmt.Sprintf(`{"jsonrpc":"2.0","result":{},"x":%d}`, i) // a response without an id
		}
		frames, wantID = append(frames, f), append(wantID, id)
	}
	// And the issue's own: a frame of 24 MB and 100,000-deep arguments.
	frames = append(frames, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+strings.Repeat("b", 24<<20)+`"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":`+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+`}}`)
	wantID = append(wantID, "null", "null")
	return frames, wantID
}

// pos-mcp answers every malformed or oversized frame of a fuzzed stream
// with a JSON-RPC error, in order, and serves the valid requests that
// follow them.
func TestSurvivesBadFrames(t *testing.T) {
	lake := filepath.Join(t.TempDir(), "lake")
	cmd := exec.Command(filepath.Join(binDir, "pos-mcp"), "--lake", lake)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type reply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	replies := make(chan reply, 1024)
	go func() {
		defer close(replies)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var r reply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Errorf("a line that is not JSON on stdout: %.200q", sc.Text())
				continue
			}
			replies <- r
		}
	}()
	next := func() reply {
		t.Helper()
		select {
		case r, ok := <-replies:
			if !ok {
				t.Fatalf("pos-mcp ended: %v\n%s", cmd.Wait(), stderr.String())
			}
			return r
		case <-time.After(60 * time.Second):
			t.Fatal("no answer in 60 s")
		}
		panic("unreachable")
	}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatalf("writing to pos-mcp: %v\n%s", err, stderr.String())
		}
	}
	send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := next(); string(r.ID) != `"init"` || r.Error != nil {
		t.Fatalf("initialize: %+v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	frames, wantID := badFrames(rand.New(rand.NewPCG(30, 13)), 300)
	go func() {
		for _, f := range frames {
			if _, err := io.WriteString(stdin, f+"\n"); err != nil {
				return
			}
		}
	}()
	codes := map[int]int{}
	for i := range frames {
		r := next()
		if r.Error == nil || (r.Error.Code != -32700 && r.Error.Code != -32600) {
			t.Fatalf("frame %d (%.80q): answer %+v", i, frames[i], r)
		}
		if string(r.ID) != wantID[i] {
			t.Errorf("frame %d (%.80q): id %s, want %s", i, frames[i], r.ID, wantID[i])
		}
		codes[r.Error.Code]++
	}
	t.Logf("%d bad frames answered: %v", len(frames), codes)

	send(`{"jsonrpc":"2.0","id":"after","method":"tools/list"}`)
	if r := next(); string(r.ID) != `"after"` || r.Error != nil || !strings.Contains(string(r.Result), `"name":"search"`) {
		t.Fatalf("tools/list after the bad frames: %+v", r)
	}
	send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	if r := next(); string(r.ID) != `"ping"` || r.Error != nil {
		t.Fatalf("ping: %+v", r)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pos-mcp at the end of its input: %v\n%s", err, stderr.String())
	}
}
