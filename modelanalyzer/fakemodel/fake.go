// Package fakemodel is an OpenAI-compatible Chat Completions server that
// replays recorded replies (testdata fixtures), for tests with no
// network. It keeps every request body it received, so a test can scan
// what left the server.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"
)

// Fixture is a recorded exchange: the replies, in order.
type Fixture struct {
	About   string  `json:"about"`
	Replies []Reply `json:"replies"`
}

// Reply is one response of the server.
type Reply struct {
	Status   int               `json:"status,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Raw      string            `json:"raw,omitempty"`     // the whole body, as is
	Content  *string           `json:"content,omitempty"` // the message content, as is
	Answer   json.RawMessage   `json:"answer,omitempty"`  // the message content, as JSON
	ToolCall *struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"tool_call,omitempty"`
	DelayMS  int  `json:"delay_ms,omitempty"`
	Oversize int  `json:"oversize,omitempty"` // a content this many bytes long
	Repeat   bool `json:"repeat,omitempty"`   // the last reply, for every later request
}

// Load reads a fixture file.
func Load(path string) (Fixture, error) {
	var f Fixture
	data, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	return f, json.Unmarshal(data, &f)
}

// Server replays a fixture.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	fixture  Fixture
	next     int
	requests []string
}

// Start serves f on 127.0.0.1; Close stops it.
func Start(f Fixture) *Server {
	s := &Server{fixture: f}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Requests returns the bodies received so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Set replaces the fixture and starts it from its first reply.
func (s *Server) Set(f Fixture) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fixture, s.next = f, 0
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error": {"message": "not found"}}`, http.StatusNotFound)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, string(body))
	var rep Reply
	switch {
	case s.next < len(s.fixture.Replies):
		rep = s.fixture.Replies[s.next]
		s.next++
	case len(s.fixture.Replies) > 0 && s.fixture.Replies[len(s.fixture.Replies)-1].Repeat:
		rep = s.fixture.Replies[len(s.fixture.Replies)-1]
	default:
		rep = Reply{Status: http.StatusInternalServerError, Raw: `{"error": {"message": "the fixture has no more replies"}}`}
	}
	s.mu.Unlock()
	if rep.DelayMS > 0 {
		select {
		case <-time.After(time.Duration(rep.DelayMS) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range rep.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Status != 0 {
		w.WriteHeader(rep.Status)
	}
	if rep.Raw != "" {
		_, _ = io.WriteString(w, rep.Raw)
		return
	}
	_ = json.NewEncoder(w).Encode(completion(rep))
}

// completion is the Chat Completions body of a reply.
func completion(rep Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil}
	finish := "stop"
	switch {
	case rep.ToolCall != nil:
		finish = "tool_calls"
		msg["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%d", time.Now().UnixNano()), "type": "function",
			"function": map[string]any{"name": rep.ToolCall.Name, "arguments": rep.ToolCall.Arguments}}}
	case rep.Oversize > 0:
		msg["content"] = `{"kind": "review", "diagnosis": "` + strings.Repeat("x", rep.Oversize) + `"}`
	case rep.Content != nil:
		msg["content"] = *rep.Content
	default:
		msg["content"] = string(rep.Answer)
	}
	return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(), "model": "fake",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   map[string]any{"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160}}
}
