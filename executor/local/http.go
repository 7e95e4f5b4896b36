package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
)

// HTTPRunner runs a job as one HTTP request: the contract's method, URL and
// headers; parameters travel as a JSON body (never spliced into the URL);
// the response status must be the expected one (any 2xx when unset).
type HTTPRunner struct {
	Client *http.Client
}

// Run sends the request.
func (r HTTPRunner) Run(ctx context.Context, j job.Job) job.Result {
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	method := j.Spec.Method
	if method == "" {
		method = http.MethodPost
	}
	body, err := json.Marshal(map[string]any{"operation": capstan.OperationGID(j.OperationID), "node": j.NodeID, "attempt": j.Attempt, "env": j.Env})
	if err != nil {
		return job.Result{ExitCode: -1, ErrKind: "runner", Err: err}
	}
	var reader io.Reader
	if method != http.MethodGet && method != http.MethodHead {
		reader = bytes.NewReader(body)
	}
	status, out, err := Send(ctx, r.Client, method, j.Spec.URL, j.Spec.Headers, reader)
	res := job.Result{Output: out}
	switch {
	case err != nil && ctx.Err() != nil:
		res.ExitCode, res.ErrKind = -1, "timeout"
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			res.ErrKind = "cancelled"
		}
		res.Err = fmt.Errorf("job %s: %s", j.NodeID, res.ErrKind)
	case err != nil:
		res.ExitCode, res.ErrKind, res.Err = -1, "http", fmt.Errorf("job %s: %w", j.NodeID, err)
	case !StatusMatches(status, j.Spec.ExpectStatus):
		res.ExitCode, res.ErrKind = 1, fmt.Sprintf("http:%d", status)
		res.Err = fmt.Errorf("job %s: %s %s answered %d", j.NodeID, method, j.Spec.URL, status)
	}
	return res
}

// Send makes one request and returns the status and the (bounded) body.
func Send(ctx context.Context, c *http.Client, method, url string, headers map[string]string, body io.Reader) (int, []byte, error) {
	if c == nil {
		c = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	// Read one byte past the bound and stop: a body larger than memory
	// (or endless) costs MaxOutput, not its size.
	var out limitedBuffer
	_, _ = io.Copy(&out, io.LimitReader(resp.Body, job.MaxOutput+1))
	if out.dropped > 0 {
		out.kept = append(out.kept, "\n[capstan: the rest of the body was not read]\n"...)
		out.dropped = 0
	}
	return resp.StatusCode, out.Bytes(), nil
}

func StatusMatches(got, want int) bool {
	if want == 0 {
		return got >= 200 && got < 300
	}
	return got == want
}

// Trimmed is output as evidence keeps it: short and without trailing space.
func Trimmed(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 2048 {
		s = s[:2048] + "…"
	}
	return s
}
