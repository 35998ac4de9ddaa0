package app

import "net/http"

// WriteThrough adapts h to a ResponseWriter that delivers every Write as it happens but has
// no Flush method — lambdaurl's, which writes into a pipe the Lambda runtime streams from. It
// gives the writer a Flush that does nothing, so handlers that flush after each
// server-sent event (http.ResponseController.Flush) keep streaming instead of taking
// http.ErrNotSupported for a gone client. A writer that can flush is left alone.
func WriteThrough(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			w = writeThrough{w}
		}
		h.ServeHTTP(w, r)
	})
}

type writeThrough struct{ http.ResponseWriter }

// Flush does nothing: every Write has already been handed on.
func (writeThrough) Flush() {}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w writeThrough) Unwrap() http.ResponseWriter { return w.ResponseWriter }
