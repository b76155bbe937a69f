// Command pos-bench-mcpsearch times searches through a running pos-mcp:
// it starts the server once (the command given after the flags), sends the
// MCP handshake and one untimed search, then -n searches over stdio, and
// prints each one's wall time in seconds on a line of its own (the bench
// takes their median).
//
//	pos-bench-mcpsearch -n 10 -query 'fix the failing test' -- pos-mcp --lake LAKE
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

func main() {
	n := flag.Int("n", 10, "timed searches")
	q := flag.String("query", "fix the failing test", "the query")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "pos-bench-mcpsearch: give the pos-mcp command after the flags")
		os.Exit(2)
	}
	if err := run(flag.Args(), *n, *q); err != nil {
		fmt.Fprintln(os.Stderr, "pos-bench-mcpsearch:", err)
		os.Exit(1)
	}
}

func run(argv []string, n int, query string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { in.Close(); cmd.Wait() }()
	r := bufio.NewReaderSize(out, 1<<20)
	id := 0
	call := func(method string, params any) (json.RawMessage, error) {
		id++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := in.Write(append(b, '\n')); err != nil {
			return nil, err
		}
		for {
			line, err := r.ReadBytes('\n')
			if err == io.EOF && len(line) == 0 {
				return nil, fmt.Errorf("pos-mcp ended")
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			var resp struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(line, &resp) != nil || resp.ID == nil || *resp.ID != id {
				continue // a notification or log line
			}
			if len(resp.Error) > 0 {
				return nil, fmt.Errorf("%s: %s", method, resp.Error)
			}
			return resp.Result, nil
		}
	}
	if _, err := call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "pos-bench", "version": "1"}}); err != nil {
		return err
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if _, err := in.Write(append(b, '\n')); err != nil {
		return err
	}
	search := func() error {
		res, err := call("tools/call", map[string]any{"name": "search", "arguments": map[string]any{"query": query}})
		if err != nil {
			return err
		}
		var r struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(res, &r) != nil || r.IsError {
			return fmt.Errorf("search failed: %s", res)
		}
		return nil
	}
	if err := search(); err != nil { // warms the server: the lake opened, the index mapped
		return err
	}
	for range n {
		start := time.Now()
		if err := search(); err != nil {
			return err
		}
		fmt.Printf("%.4f\n", time.Since(start).Seconds())
	}
	return nil
}
