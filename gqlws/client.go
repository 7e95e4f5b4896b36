// Package gqlws is a small GraphQL-over-WebSocket client speaking the
// graphql-transport-ws protocol (the one graphql-ws and Apollo Client's
// GraphQLWsLink use), built on gorilla/websocket. `capstan watch` and the
// load generator use it; so do the tests, as a real client would.
package gqlws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Subprotocol is the protocol this client speaks.
const Subprotocol = "graphql-transport-ws"

// Message is one protocol message.
type Message struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Error is a GraphQL error of an error message.
type Error struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

// Code returns the error's extensions.code.
func (e Error) Code() string {
	c, _ := e.Extensions["code"].(string)
	return c
}

func (e Error) Error() string { return e.Code() + ": " + e.Message }

// Conn is one acknowledged connection.
type Conn struct {
	ws *websocket.Conn
	mu sync.Mutex // serializes writes
	// Wait, when set, bounds how long Next waits for a message other
	// than ping or pong (a test's client fails rather than hang).
	Wait time.Duration
}

// Dial connects to url (ws:// or http://, rewritten), sends connection_init
// with the bearer token and waits for connection_ack.
func Dial(ctx context.Context, url, token string) (*Conn, error) {
	url = strings.Replace(strings.Replace(url, "http://", "ws://", 1), "https://", "wss://", 1)
	d := websocket.Dialer{Subprotocols: []string{Subprotocol}, HandshakeTimeout: 10 * time.Second}
	ws, resp, err := d.DialContext(ctx, url, http.Header{})
	if err != nil {
		if resp != nil {
			return nil, &HandshakeError{URL: url, Status: resp.StatusCode, Err: err}
		}
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	c := &Conn{ws: ws}
	init, _ := json.Marshal(map[string]string{"Authorization": "Bearer " + token})
	if err := c.send(Message{Type: "connection_init", Payload: init}); err != nil {
		ws.Close()
		return nil, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = ws.SetReadDeadline(deadline)
	}
	for {
		m, err := c.Next()
		if err != nil {
			ws.Close()
			return nil, fmt.Errorf("connection_init: %w", err)
		}
		if m.Type == "connection_ack" {
			_ = ws.SetReadDeadline(time.Time{})
			return c, nil
		}
	}
}

func (c *Conn) send(m Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.WriteJSON(m)
}

// Subscribe starts a subscription with the given id.
func (c *Conn) Subscribe(id, query string, variables map[string]any) error {
	payload, err := json.Marshal(map[string]any{"query": query, "variables": variables})
	if err != nil {
		return err
	}
	return c.send(Message{ID: id, Type: "subscribe", Payload: payload})
}

// Complete stops a subscription.
func (c *Conn) Complete(id string) error {
	return c.send(Message{ID: id, Type: "complete"})
}

// Next returns the next message other than ping/pong (pings are answered).
// A closed connection returns its close error.
func (c *Conn) Next() (Message, error) {
	if c.Wait > 0 {
		_ = c.ws.SetReadDeadline(time.Now().Add(c.Wait))
		defer c.ws.SetReadDeadline(time.Time{})
	}
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return Message{}, err
		}
		m, err := decode(data)
		if err != nil {
			return m, err
		}
		switch m.Type {
		case "ping":
			if err := c.send(Message{Type: "pong"}); err != nil {
				return m, err
			}
		case "pong":
		default:
			return m, nil
		}
	}
}

// Close closes the connection.
func (c *Conn) Close() error {
	c.mu.Lock()
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	c.mu.Unlock()
	return c.ws.Close()
}

// Data decodes a next message's payload: {"data": ..., "errors": [...]}.
// An error message's payload is the error list.
func Data(m Message, into any) error {
	switch m.Type {
	case "next":
		var p struct {
			Data   json.RawMessage `json:"data"`
			Errors []Error         `json:"errors"`
		}
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			return err
		}
		if len(p.Errors) > 0 {
			return p.Errors[0]
		}
		return json.Unmarshal(p.Data, into)
	case "error":
		var errs []Error
		if err := json.Unmarshal(m.Payload, &errs); err != nil || len(errs) == 0 {
			return fmt.Errorf("error message: %s", m.Payload)
		}
		return errs[0]
	}
	return fmt.Errorf("unexpected %s message", m.Type)
}

// IsClosed reports whether err says the connection closed.
func IsClosed(err error) bool {
	var ce *websocket.CloseError
	return errors.As(err, &ce) || errors.Is(err, websocket.ErrCloseSent)
}

// Refused reports whether err says the server refused the client rather
// than lost it: the handshake answered 401 or 403, or the connection was
// closed with a protocol code for a bad request (4400), a rejected or
// missing token (4401) or a forbidden subscriber (4403). Dialling again
// with the same token cannot heal it.
func Refused(err error) bool {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		switch ce.Code {
		case 4400, 4401, 4403:
			return true
		}
	}
	var he *HandshakeError
	return errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden)
}

// HandshakeError is a WebSocket handshake the server answered with an
// HTTP status instead of an upgrade.
type HandshakeError struct {
	URL    string
	Status int
	Err    error
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("dial %s: %v (HTTP %d)", e.URL, e.Err, e.Status)
}

func (e *HandshakeError) Unwrap() error { return e.Err }
