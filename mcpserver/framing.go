package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Frame limits: a frame (one line of the stdio stream) longer than
// MaxFrameBytes, or nesting arrays and objects deeper than MaxFrameDepth,
// is answered with an error and not read further. pos-mcp's requests are
// small and shallow; the limits keep one frame from taking the server's
// memory or stack.
const (
	MaxFrameBytes = 4 << 20
	MaxFrameDepth = 64
)

// StdioTransport is an mcp.Transport over newline-delimited JSON-RPC (the
// MCP stdio transport) that survives what a client sends: a frame that is
// not JSON, not an object, not JSON-RPC 2.0, has an id that is neither a
// string nor an integer, or is too large or too deep gets a JSON-RPC error
// answer (-32700 parse error or -32600 invalid request, with the frame's
// id when it has a valid one, else null), and the server goes on with the
// next frame. The SDK's own transport ends the session at the first such
// frame.
//
// JSON-RPC batches (arrays), which MCP dropped in 2025-06-18, are answered
// with -32600 too.
type StdioTransport struct {
	Reader io.Reader
	Writer io.Writer
	// MaxFrame and MaxDepth override MaxFrameBytes and MaxFrameDepth.
	MaxFrame, MaxDepth int
	// Logger is told about each frame answered with an error (default:
	// none).
	Logger *slog.Logger
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &frameConn{
		w: t.Writer, r: t.Reader, max: t.MaxFrame, depth: t.MaxDepth, log: t.Logger,
		incoming: make(chan jsonrpc.Message), closed: make(chan struct{}), readErr: make(chan error, 1),
		pending: map[jsonrpc.ID]struct{}{}, idle: make(chan struct{}),
	}
	close(c.idle)
	if c.max <= 0 {
		c.max = MaxFrameBytes
	}
	if c.depth <= 0 {
		c.depth = MaxFrameDepth
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	go c.readLoop()
	return c, nil
}

type frameConn struct {
	r        io.Reader
	w        io.Writer
	max      int
	depth    int
	log      *slog.Logger
	wmu      sync.Mutex
	incoming chan jsonrpc.Message
	readErr  chan error
	closed   chan struct{}
	once     sync.Once

	// The calls read and not yet answered: at the end of the input, Read
	// waits for their answers before it reports the end, which closes the
	// connection. A client that writes its requests and closes stdin (a
	// pipe, a script) gets every answer.
	pmu     sync.Mutex
	pending map[jsonrpc.ID]struct{}
	idle    chan struct{} // closed while nothing is pending
}

// readLoop reads frames, answers the bad ones and hands the others to
// Read, until the input ends or the connection is closed.
func (c *frameConn) readLoop() {
	fr := newFrameReader(c.r, c.max)
	for {
		frame, size, err := fr.next()
		if err != nil {
			c.readErr <- err
			return
		}
		var msg jsonrpc.Message
		var reply []byte
		if size > c.max {
			reply = errorReply(nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("invalid request: the frame has more than %d bytes (the limit)", c.max))
		} else if msg, reply = CheckFrame(frame, c.depth); msg == nil && reply == nil {
			continue // a blank line
		}
		if reply != nil {
			c.log.Warn("bad frame answered", "bytes", size, "reply", string(reply))
			if err := c.writeLine(reply); err != nil {
				c.readErr <- err
				return
			}
			continue
		}
		select {
		case c.incoming <- msg:
		case <-c.closed:
			return
		}
	}
}

// Read implements mcp.Connection.
func (c *frameConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case m := <-c.incoming:
		if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
			c.pmu.Lock()
			if len(c.pending) == 0 {
				c.idle = make(chan struct{})
			}
			c.pending[r.ID] = struct{}{}
			c.pmu.Unlock()
		}
		return m, nil
	case err := <-c.readErr:
		c.readErr <- err // every later Read ends alike
		c.pmu.Lock()
		idle := c.idle
		c.pmu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
		}
		return nil, err
	}
}

// answered notes that the call id has its response.
func (c *frameConn) answered(id jsonrpc.ID) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if _, ok := c.pending[id]; !ok {
		return
	}
	delete(c.pending, id)
	if len(c.pending) == 0 {
		close(c.idle)
	}
}

// Write implements mcp.Connection.
func (c *frameConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	err = c.writeLine(b)
	if r, ok := msg.(*jsonrpc.Response); ok {
		c.answered(r.ID)
	}
	return err
}

func (c *frameConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(b, '\n'))
	return err
}

// Close implements mcp.Connection.
func (c *frameConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		if rc, ok := c.r.(io.Closer); ok {
			err = rc.Close()
		}
	})
	return err
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *frameConn) SessionID() string { return "" }

// frameReader reads newline-ended frames of any length, keeping at most
// max bytes of one: the rest of a longer frame is read and dropped.
type frameReader struct {
	br  *bufio.Reader
	max int
	buf []byte
	eof bool
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next frame (without its newline) and its full size;
// when size > max the frame holds only its first bytes. The input's last
// line counts even without a newline. err is io.EOF at the end.
func (f *frameReader) next() (frame []byte, size int, err error) {
	if f.eof {
		return nil, 0, io.EOF
	}
	f.buf = f.buf[:0]
	for {
		chunk, err := f.br.ReadSlice('\n')
		size += len(chunk)
		if len(f.buf) < f.max+1 {
			f.buf = append(f.buf, chunk[:min(len(chunk), f.max+1-len(f.buf))]...)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(f.buf, []byte("\n")), size - 1, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			f.eof = true
			if size == 0 {
				return nil, 0, io.EOF
			}
			return f.buf, size, nil
		default:
			return nil, 0, err
		}
	}
}

// CheckFrame reads one frame of the stream: a JSON-RPC 2.0 message for the
// SDK, or the error answer to send back instead (never both). A blank
// frame gives neither. depth bounds the nesting of arrays and objects.
func CheckFrame(frame []byte, depth int) (jsonrpc.Message, []byte) {
	frame = bytes.TrimSpace(frame)
	if len(frame) == 0 {
		return nil, nil
	}
	if d := nesting(frame, depth); d > depth {
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("invalid request: arrays and objects nested deeper than %d levels (the limit)", depth))
	}
	if !json.Valid(frame) {
		var v any
		err := json.Unmarshal(frame, &v)
		msg := "parse error: the frame is not JSON"
		if err != nil {
			msg = "parse error: " + err.Error()
		}
		return nil, errorReply(nil, jsonrpc.CodeParseError, msg)
	}
	switch frame[0] {
	case '{':
	case '[':
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported (MCP 2025-06-18 and later); send one message per line")
	default:
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message is a JSON object")
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(frame, &env); err != nil {
		return nil, errorReply(nil, jsonrpc.CodeParseError, "parse error: "+err.Error())
	}
	id, idErr := checkID(env["id"])
	if idErr != "" {
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, "invalid request: "+idErr)
	}
	bad := func(msg string) (jsonrpc.Message, []byte) {
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, "invalid request: "+msg)
	}
	if v, ok := env["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return bad(`"jsonrpc" must be "2.0"`)
	}
	method, isRequest := env["method"]
	if isRequest {
		if len(method) == 0 || method[0] != '"' {
			return bad(`"method" must be a string`)
		}
		if p, ok := env["params"]; ok && len(p) > 0 && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return bad(`"params" must be an object`)
		}
	} else {
		_, hasResult := env["result"]
		e, hasError := env["error"]
		switch {
		case id == nil:
			return bad(`a message without "method" is a response and needs an id`)
		case hasResult == hasError:
			return bad(`a response has either "result" or "error"`)
		case hasError && (len(e) == 0 || e[0] != '{'):
			return bad(`"error" must be an object`)
		}
	}
	msg, err := jsonrpc.DecodeMessage(frame)
	if err != nil {
		return bad(err.Error())
	}
	return msg, nil
}

// checkID returns a frame's id fit to be sent back (nil when absent or
// null), or why it is not a valid id: JSON-RPC ids are strings or
// integers (the SDK keeps integers as int64 through a float64, so those
// beyond 2^53 would come back changed).
func checkID(raw json.RawMessage) (json.RawMessage, string) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ""
	}
	switch raw[0] {
	case '"':
		return raw, ""
	case '{', '[', 't', 'f':
		return nil, `"id" must be a string or an integer`
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return nil, `"id" must be a string or an integer (of at most 2^53)`
	}
	return raw, ""
}

// nesting returns the deepest nesting of arrays and objects in a JSON
// text, or limit+1 as soon as it goes deeper than limit.
func nesting(b []byte, limit int) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > limit {
				return limit + 1
			}
			deepest = max(deepest, depth)
		case '}', ']':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}

// errorReply is a JSON-RPC error response to id (null when nil).
func errorReply(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return b
}
