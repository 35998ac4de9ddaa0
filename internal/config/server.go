package config

import "time"

// Server is the process itself: where `steward serve` listens, what `steward chat` talks
// to, its logs, its request bodies and its shutdown.
type Server struct {
	// Addr is where `steward serve` listens (STEWARD_ADDR).
	Addr string
	// DebugAddr, when set, is where `steward serve` also serves the process's runtime
	// counters (expvar: memstats with allocations, GC, heap) on GET /debug/vars, for the
	// cycle benchmark, and Go's profiles on /debug/pprof/ (STEWARD_DEBUG_ADDR); unset,
	// nothing listens.
	DebugAddr string
	// ServerURL and APIKey are what `steward chat` talks to (STEWARD_URL, STEWARD_API_KEY);
	// the URL defaults to the local server.
	ServerURL string
	APIKey    string
	// LogLevel is zerolog's level name (STEWARD_LOG_LEVEL); LogFormat is json or console.
	LogLevel  string
	LogFormat string
	// MaxBodyBytes caps request bodies (STEWARD_MAX_BODY_BYTES).
	MaxBodyBytes int64
	// ShutdownGrace is how long `steward serve` gives requests in flight on SIGTERM: half of
	// it to finish, then running turns are saved to continue in the next process
	// (STEWARD_SHUTDOWN_GRACE, 10s).
	ShutdownGrace time.Duration
}

// server reads the Server area.
func (r *reader) server() Server {
	s := Server{
		Addr:          r.addr("STEWARD_ADDR", "127.0.0.1:8080"),
		DebugAddr:     r.addrOrEmpty("STEWARD_DEBUG_ADDR"),
		ServerURL:     r.str("STEWARD_URL", ""),
		APIKey:        r.str("STEWARD_API_KEY", ""),
		LogLevel:      r.oneOf("STEWARD_LOG_LEVEL", "info", "trace", "debug", "info", "warn", "error"),
		LogFormat:     r.oneOf("STEWARD_LOG_FORMAT", "json", "json", "console"),
		MaxBodyBytes:  int64(r.intIn("STEWARD_MAX_BODY_BYTES", 1<<20, 1024, 64<<20)),
		ShutdownGrace: r.duration("STEWARD_SHUTDOWN_GRACE", 10*time.Second),
	}
	if s.ServerURL == "" {
		s.ServerURL = "http://" + s.Addr
	}
	return s
}
