// Package executor will hold the in-process DAG executor: one goroutine per
// running operation owns its state, jobs run on a bounded worker pool
// through runners (shell, http, sim), and every state change is persisted
// before it is acted on. It is built by the executor issue; planning does
// not depend on it.
package executor
