package app

import (
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/trace"
)

// NewLogger is the process logger: JSON lines to w (stderr in every process; on Lambda they
// land in CloudWatch), at STEWARD_LOG_LEVEL, or a console format for people when
// STEWARD_LOG_FORMAT=console. Request handlers log through zerolog.Ctx. Every line passes
// through trace.RedactWriter, so no log line carries a secret.
func NewLogger(cfg config.Config, w io.Writer) zerolog.Logger {
	level, err := zerolog.ParseLevel(cfg.LogLevel)
	if err != nil || level == zerolog.NoLevel {
		level = zerolog.InfoLevel
	}
	if cfg.LogFormat == "console" {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: !IsTerminal(w)}
	}
	return zerolog.New(trace.RedactWriter(w)).Level(level).With().Timestamp().Logger()
}

// IsTerminal reports whether w is a terminal, for colour.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
