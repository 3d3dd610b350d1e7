package httpserve

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// Processor answers one JSON-RPC request body; nil means nothing to send back.
// *protocol.Server is one.
type Processor interface {
	Process(ctx context.Context, body []byte) []byte
}

// DateRefresher is the function of fasthttp's goroutine that refreshes the Date of
// answers every second: one per process, living as long as the process, which leak
// checks of tests that start StartRPC servers ignore.
const DateRefresher = "github.com/valyala/fasthttp.updateServerDate.func1"

// workerIdle is how long a fasthttp worker without a connection lives.
const workerIdle = 200 * time.Millisecond

// RPCPath is the JSON-RPC endpoint's path.
const RPCPath = "/mcp"

// StartRPC is StartTLS for a role whose endpoint serves most of a league's exchanges (a
// player answers about six in seven). It serves with fasthttp, which reads and answers a
// request on the connection's goroutine: net/http also starts a goroutine per request to
// watch for the client going away, and builds header maps, a context and a response
// writer for each, which cost the player about a seventh of its CPU. A POST to RPCPath
// goes straight to rpc, with maxBody as the body limit (413 above it, and the connection
// kept up to twice that); every other
// request goes to h as net/http would serve it. The request's context ends when the
// handler returns or, once something waits on it, when the client closes the connection
// (see connContext).
func StartRPC(addr string, h http.Handler, rpc Processor, maxBody int, cfg *tls.Config, log zerolog.Logger) (*Server, error) {
	return startRPC(addr, h, rpc, maxBody, cfg, log, DefaultTimeouts)
}

// startRPC is StartRPC with other timeouts (tests of slow handlers use short ones).
func startRPC(addr string, h http.Handler, rpc Processor, maxBody int, cfg *tls.Config, log zerolog.Logger, t Timeouts) (*Server, error) {
	ln, scheme, err := listen(addr, cfg)
	if err != nil {
		return nil, err
	}
	other := fasthttpadaptor.NewFastHTTPHandler(h)
	srv := &fasthttp.Server{
		Handler: func(c *fasthttp.RequestCtx) {
			if !c.IsPost() || string(c.Path()) != RPCPath {
				other(c)
				return
			}
			if len(c.PostBody()) > maxBody {
				c.Error("request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			ctx := newConnContext(c.Conn())
			defer ctx.end()
			// The handler may keep parts of the body (a move's raw JSON) after it returns,
			// and fasthttp reuses its buffer for the next request.
			out := rpc.Process(ctx, bytes.Clone(c.PostBody()))
			if out == nil {
				c.SetStatusCode(http.StatusNoContent)
				return
			}
			c.SetContentType("application/json")
			c.SetBody(out)
		},
		// A body up to twice the limit is read whole and answered 413 on a kept
		// connection, so the client reads the answer: fasthttp answers a larger one at
		// once and closes the connection on a client still sending, which may then see a
		// reset instead (net/http waits half a second for it). fasthttp's ReadTimeout
		// covers headers and body, as net/http's Read does.
		ReadTimeout:        t.Read,
		WriteTimeout:       t.Write,
		IdleTimeout:        t.Idle,
		ReadBufferSize:     maxHeaderBytes,
		MaxRequestBodySize: 2 * maxBody,
		// Answers say nothing about the software that serves them. Their Date comes from
		// a fasthttp goroutine that refreshes it every second while the process lives.
		NoDefaultServerHeader:        true,
		DisablePreParseMultipartForm: true,
		CloseOnShutdown:              true,
		// fasthttp's pool cleaner notices Shutdown only after this sleep: it bounds how
		// long that goroutine outlives the server (and how long an idle worker waits).
		MaxIdleWorkerDuration: workerIdle,
		Logger:                fastLogger{log},
		ErrorHandler:          fastError,
	}
	return serve(ln, scheme, srv.Serve, srv.ShutdownWithContext), nil
}

// fastError answers a request fasthttp could not read with the status net/http gives
// it; fasthttp's own answer is 400 for a body over the limit.
func fastError(c *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var nerr net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		c.Error("request body too large", http.StatusRequestEntityTooLarge)
	case errors.As(err, &small):
		c.Error("request headers too large", http.StatusRequestHeaderFieldsTooLarge)
	case errors.As(err, &nerr) && nerr.Timeout():
		c.Error("request not read in time", http.StatusRequestTimeout)
	default:
		c.Error("malformed request", http.StatusBadRequest)
	}
}

// fastLogger puts fasthttp's messages (a client's malformed request, a timeout) in the
// role's log at debug: they are about clients, not about the server.
type fastLogger struct{ log zerolog.Logger }

func (l fastLogger) Printf(format string, args ...any) {
	l.log.Debug().Msgf(format, args...)
}
