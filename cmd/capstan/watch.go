package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/gqlws"
)

const watchEvents = `subscription($op: ID!, $after: String) { operationEvents(operation: $op, after: $after) { cursor node { sequence type actor at payload } } }`

const watchProgress = `subscription($op: ID!) { operationProgress(operation: $op) { status currentPhase completedNodes totalNodes needsAttention resourceHealth } }`

type watchConfig struct {
	server, token, operation, after string
	retries                         int
}

// watch follows an operation in the terminal: its timeline (node changes,
// gates, evidence) and its progress, reconnecting with the last cursor
// after a drop. It exits 0 when the operation succeeds, 1 when it ends
// otherwise or cannot be followed.
func watch(args []string, stdout, stderr io.Writer) int {
	var c watchConfig
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.server, "server", envOr("CAPSTAN_SERVER", "http://127.0.0.1:8080"), "Capstan server URL (CAPSTAN_SERVER)")
	fs.StringVar(&c.token, "token", os.Getenv("CAPSTAN_TOKEN"), "bearer token (CAPSTAN_TOKEN)")
	fs.StringVar(&c.after, "after", "", "start after this timeline cursor (default: from the beginning)")
	fs.IntVar(&c.retries, "retries", 20, "reconnection attempts in a row before giving up")
	fs.Usage = func() { fmt.Fprintln(stderr, "usage: capstan watch [flags] OPERATION"); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	if c.token == "" {
		fmt.Fprintln(stderr, "capstan watch: no token: pass --token or set CAPSTAN_TOKEN")
		return 2
	}
	c.operation = operationID(fs.Arg(0))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	status, err := follow(ctx, c, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "capstan watch: %v\n", err)
		return 1
	}
	if status != "SUCCEEDED" {
		return 1
	}
	return 0
}

// operationID accepts a global id or an operation's own id.
func operationID(arg string) string {
	if _, _, err := capstan.ParseGlobalID(arg, capstan.KindOperation); err == nil {
		return arg
	}
	return capstan.OperationGID(arg)
}

// follow keeps one connection at a time, resuming from the last cursor,
// until the timeline completes; it returns the operation's final status.
func follow(ctx context.Context, c watchConfig, stdout, stderr io.Writer) (string, error) {
	cursor, status := c.after, ""
	for failures := 0; ; {
		done, err := followOnce(ctx, c, &cursor, &status, stdout)
		if done {
			return status, nil
		}
		var gqlErr gqlws.Error
		if errors.As(err, &gqlErr) && !retryable(gqlErr.Code()) || ctx.Err() != nil {
			return status, err // refused (not found, unauthenticated): retrying will not help
		}
		if gqlws.Refused(err) {
			return status, fmt.Errorf("the server refused the connection (is the token right?): %w", err)
		}
		failures++
		if failures > c.retries {
			return status, fmt.Errorf("gave up after %d reconnections: %w", c.retries, err)
		}
		wait := min(time.Duration(failures)*250*time.Millisecond, 5*time.Second)
		fmt.Fprintf(stderr, "connection lost (%v); reconnecting from cursor %q in %v\n", err, cursor, wait)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return status, ctx.Err()
		}
	}
}

// retryable says whether a subscription ended with an error code that a
// new connection may not get: fallen behind (OVERFLOW), or a server that
// is not ready yet or lost its store (UNAVAILABLE).
func retryable(code string) bool { return code == "OVERFLOW" || code == "UNAVAILABLE" }

// followOnce runs one connection; done means the timeline completed.
func followOnce(ctx context.Context, c watchConfig, cursor, status *string, out io.Writer) (bool, error) {
	dialCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := gqlws.Dial(dialCtx, strings.TrimSuffix(c.server, "/")+"/graphql", c.token)
	cancel()
	if err != nil {
		return false, err
	}
	defer conn.Close()
	go func() { <-ctx.Done(); conn.Close() }()
	vars := map[string]any{"op": c.operation}
	if *cursor != "" {
		vars["after"] = *cursor
	}
	if err := conn.Subscribe("events", watchEvents, vars); err != nil {
		return false, err
	}
	if err := conn.Subscribe("progress", watchProgress, map[string]any{"op": c.operation}); err != nil {
		return false, err
	}
	eventsDone, progressDone := false, false
	for !eventsDone || !progressDone {
		m, err := conn.Next()
		if err != nil {
			return false, err
		}
		switch {
		case m.Type == "complete" && m.ID == "events" && *status == "":
			// Completed before the final event: the server is shutting down.
			return false, errors.New("the server ended the stream")
		case m.Type == "complete":
			eventsDone, progressDone = eventsDone || m.ID == "events", progressDone || m.ID == "progress"
		case m.Type == "error" || m.Type == "next" && m.ID == "events":
			var e struct {
				OperationEvents struct {
					Cursor string
					Node   watchedEvent
				}
			}
			if err := gqlws.Data(m, &e); err != nil {
				return false, err
			}
			*cursor = e.OperationEvents.Cursor
			if s := finalStatus(e.OperationEvents.Node.Type); s != "" {
				*status = s
			}
			fmt.Fprintln(out, describe(e.OperationEvents.Node))
		case m.Type == "next" && m.ID == "progress":
			var p struct{ OperationProgress watchedProgress }
			if err := gqlws.Data(m, &p); err == nil {
				fmt.Fprintln(out, p.OperationProgress.String())
			}
		}
	}
	return true, nil
}

type watchedEvent struct {
	Sequence int64
	Type     string
	Actor    string
	At       time.Time
	Payload  map[string]any
}

type watchedProgress struct {
	Status, CurrentPhase       string
	CompletedNodes, TotalNodes int
	NeedsAttention             []string
	ResourceHealth             *string
}

func (p watchedProgress) String() string {
	s := fmt.Sprintf("── %s · %d/%d nodes · %s", p.Status, p.CompletedNodes, p.TotalNodes, p.CurrentPhase)
	if p.ResourceHealth != nil {
		s += " · resource " + strings.ToLower(*p.ResourceHealth)
	}
	for _, n := range p.NeedsAttention {
		s += "\n   needs attention: " + n
	}
	return s
}

// finalStatus maps an operation's final event to its status, or "".
func finalStatus(typ string) string {
	switch typ {
	case "operation.succeeded", "operation.failed", "operation.cancelled", "operation.rolled_back":
		return strings.ToUpper(strings.TrimPrefix(typ, "operation."))
	}
	return ""
}

// describe renders one timeline event as a line.
func describe(e watchedEvent) string {
	p := e.Payload
	node, _ := p["node"].(string)
	var what string
	switch e.Type {
	case "node.running":
		what = fmt.Sprintf("▶ %s (attempt %v)", node, p["attempt"])
	case "node.succeeded", "node.recovered":
		what = "✔ " + node
	case "node.failed":
		what = fmt.Sprintf("✖ %s: %v", node, p["reason"])
	case "node.retrying":
		what = fmt.Sprintf("↻ %s retries in %v", node, p["wait"])
	case "node.needs_attention", "operation.needs_attention":
		what = fmt.Sprintf("⚠ %s: %v", node, p["reason"])
	case "gate.waiting":
		what = fmt.Sprintf("⏸ gate %s waits for approval by %v", node, p["roles"])
	case "gate.decided":
		what = fmt.Sprintf("  gate %s: %s by %s", node, map[bool]string{true: "approved", false: "rejected"}[p["approve"] == true], e.Actor)
	case "evidence.recorded":
		what = fmt.Sprintf("  evidence %s/%v: %v", node, p["item"], p["result"])
	default:
		what = e.Type + payloadText(p)
	}
	return fmt.Sprintf("%4d %s %s", e.Sequence, e.At.Format("15:04:05"), what)
}

func payloadText(p map[string]any) string {
	if len(p) == 0 {
		return ""
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if p[k] == nil || p[k] == "" {
			continue
		}
		v, _ := json.Marshal(p[k])
		fmt.Fprintf(&b, " %s=%s", k, v)
	}
	return b.String()
}
