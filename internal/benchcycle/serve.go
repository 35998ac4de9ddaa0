package benchcycle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"syscall"
)

// Server is a `steward serve` process a benchmark started on a free loopback port: the cycle
// benchmark, the soak, the cold-pool runs and the load run (internal/benchload) share it.
type Server struct {
	// Base is the server's root URL, http://127.0.0.1:port.
	Base string
	cmd  *exec.Cmd
	done bool
	err  error
}

// StartServer starts `binary serve` with env and the name/value pairs kv (STEWARD_ADDR is
// chosen here), its stdout discarded and its stderr (the log) to log, and waits until GET
// /healthz answers 200. The caller stops it with Stop.
func StartServer(ctx context.Context, binary string, env []string, log io.Writer, kv ...string) (*Server, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, "serve")
	cmd.Env = setEnv(env, append([]string{"STEWARD_ADDR", addr}, kv...)...)
	cmd.Stdout, cmd.Stderr = io.Discard, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Base: "http://" + addr, cmd: cmd}
	if err := waitHealthy(ctx, s.Base); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// PID is the serve process's id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Stop sends SIGTERM (a graceful shutdown) and waits for the process; its error is the
// process's exit status. Stopping twice returns the first result.
func (s *Server) Stop() error {
	if !s.done {
		s.done = true
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		s.err = s.cmd.Wait()
	}
	return s.err
}

// Owner is an owner a benchmark added with `steward owners add`.
type Owner struct {
	ID     string `json:"owner_id"`
	APIKey string `json:"api_key"`
}

// Prepare sets up o.Database with Steward's own commands — bootstrap (roles and database, as
// superuser), a reset to empty, migrations — and returns the environment the steward
// commands run with (BenchEnv).
func Prepare(ctx context.Context, o Options, logf func(string, ...any)) ([]string, error) {
	env, err := BenchEnv(o)
	if err != nil {
		return nil, err
	}
	logf("setting up database %s with bin/steward migrate", o.Database)
	for _, args := range [][]string{{"migrate", "bootstrap"}, {"migrate", "reset", "--yes"}, {"migrate", "up"}} {
		if _, err := Command(ctx, o.Steward, env, args...); err != nil {
			return nil, err
		}
	}
	return env, nil
}

// AddOwner adds an owner named name with `steward owners add` and gives it a budget that does
// not bind (`steward owners budget`).
func AddOwner(ctx context.Context, o Options, env []string, name string) (Owner, error) {
	out, err := Command(ctx, o.Steward, env, "owners", "add", name, "--json")
	if err != nil {
		return Owner{}, err
	}
	var owner Owner
	if err := json.Unmarshal(out, &owner); err != nil {
		return Owner{}, fmt.Errorf("owners add --json: %w: %s", err, out)
	}
	if _, err := Command(ctx, o.Steward, env, "owners", "budget", "--owner", owner.ID, "--messages", "100000000", "--cost-usd", "1000000"); err != nil {
		return Owner{}, err
	}
	return owner, nil
}

// setUp is Prepare and AddOwner of one owner named name: the environment and its API key.
func setUp(ctx context.Context, o Options, name string, logf func(string, ...any)) (env []string, apiKey string, err error) {
	if env, err = Prepare(ctx, o, logf); err != nil {
		return nil, "", err
	}
	owner, err := AddOwner(ctx, o, env, name)
	return env, owner.APIKey, err
}
