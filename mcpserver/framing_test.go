package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// frameSeeds are frames of every kind the framing layer tells apart.
var frameSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":7,"result":{}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}`,
	`not json`, `[1,2]`, `[]`, `"str"`, `42`, `null`, `true`, ``, `   `, "\r",
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`, `{"id":1,"method":"ping"}`, `{"jsonrpc":2.0,"id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, `{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
	`{"jsonrpc":"2.0","id":true,"method":"ping"}`, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1e300,"method":"ping"}`, `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`, `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`,
	`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","result":{}}`, `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":"x"}`, `{"jsonrpc":"2.0","id":1,"method":"ping"}{}`, `{"jsonrpc":"2.0","id":1,"method":"ping"`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"p\ud800"}`, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
	`{"jsonrpc":"2.0","JSONRPC":"1.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"id":{},"method":"ping"}`,
}

// checkReply asserts that a reply is a JSON-RPC error response: version
// 2.0, code -32700 or -32600, a message, and an id that is null, a string
// or an integer.
func checkReply(t *testing.T, reply []byte) {
	t.Helper()
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		t.Fatalf("reply %s: %v", reply, err)
	}
	if r.JSONRPC != "2.0" || r.Error == nil || (r.Error.Code != jsonrpc.CodeParseError && r.Error.Code != jsonrpc.CodeInvalidRequest) ||
		r.Error.Message == "" || len(r.ID) == 0 {
		t.Fatalf("not a JSON-RPC error reply: %s", reply)
	}
	if id := string(r.ID); id != "null" && id[0] != '"' {
		if _, err := strconv.ParseInt(id, 10, 64); err != nil {
			if f, ferr := strconv.ParseFloat(id, 64); ferr != nil || f != float64(int64(f)) {
				t.Fatalf("reply id %s is neither null, a string nor an integer", id)
			}
		}
	}
	if bytes.ContainsRune(reply, '\n') {
		t.Fatalf("a reply spans lines: %q", reply)
	}
}

// FuzzCheckFrame: any frame gives a message for the SDK or an error reply
// (or, blank, neither), never both; a message passed on is a JSON object
// within the depth limit that the SDK encodes again.
func FuzzCheckFrame(f *testing.F) {
	for _, s := range frameSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		const depth = 8
		msg, reply := CheckFrame(frame, depth)
		switch {
		case msg != nil && reply != nil:
			t.Fatalf("%q: both a message and a reply", frame)
		case msg == nil && reply == nil:
			if len(bytes.TrimSpace(frame)) != 0 {
				t.Fatalf("%q: neither a message nor a reply", frame)
			}
		case reply != nil:
			checkReply(t, reply)
		default:
			if b := bytes.TrimSpace(frame); b[0] != '{' || nesting(b, depth) > depth || !json.Valid(b) {
				t.Fatalf("%q passed on", frame)
			}
			if _, err := jsonrpc.EncodeMessage(msg); err != nil {
				t.Fatalf("%q: the message does not encode again: %v", frame, err)
			}
		}
	})
}

// FuzzFrameReader: a stream is cut at its newlines into frames, each kept
// whole up to the limit and counted whole beyond it.
func FuzzFrameReader(f *testing.F) {
	f.Add([]byte("{}\n{\"a\":1}\n"), 4)
	f.Add([]byte("no newline at the end"), 8)
	f.Add([]byte("\n\n\n"), 1)
	f.Add(bytes.Repeat([]byte("x"), 200), 16)
	f.Fuzz(func(t *testing.T, stream []byte, max int) {
		max = 1 + abs(max)%64
		lines := strings.Split(string(stream), "\n")
		if strings.HasSuffix(string(stream), "\n") || len(stream) == 0 {
			lines = lines[:len(lines)-1]
		}
		fr := newFrameReader(bytes.NewReader(stream), max)
		for i := 0; ; i++ {
			frame, size, err := fr.next()
			if err == io.EOF {
				if i != len(lines) {
					t.Fatalf("%d frames, want %d", i, len(lines))
				}
				return
			}
			if err != nil || i >= len(lines) {
				t.Fatalf("frame %d: %v (of %d lines)", i, err, len(lines))
			}
			if size != len(lines[i]) {
				t.Fatalf("frame %d: size %d, want %d", i, size, len(lines[i]))
			}
			if size <= max && string(frame) != lines[i] || size > max && (len(frame) > max+1 || !strings.HasPrefix(lines[i], string(frame))) {
				t.Fatalf("frame %d: %q, line %q (limit %d)", i, frame, lines[i], max)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// The limits: a frame over MaxFrame bytes or nested deeper than MaxDepth
// gets -32600, and the next frame is read.
func TestFrameLimits(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}`
	big := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"` + strings.Repeat("a", 5<<20) + `"}}`
	in := deep + "\n" + big + "\n" + `{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n"
	var out bytes.Buffer
	conn, err := (&StdioTransport{Reader: strings.NewReader(in), Writer: &out}).Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	msg, err := conn.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "ping" || req.ID.Raw() != int64(3) {
		t.Fatalf("passed on %#v", msg)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "nested deeper than 64 levels") || !strings.Contains(lines[1], "more than 4194304 bytes") {
		t.Fatalf("replies:\n%s", out.String())
	}
	for _, l := range lines {
		checkReply(t, []byte(l))
	}
	// The end of the input is reported once the call read is answered.
	if err := conn.Write(t.Context(), &jsonrpc.Response{ID: req.ID, Result: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(t.Context()); err != io.EOF {
		t.Fatalf("at the end: %v", err)
	}
}
