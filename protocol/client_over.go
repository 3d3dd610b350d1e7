package protocol

import "net/http"

// NewClientOver is NewClientWith for a caller that brings its own HTTP client: hc
// carries every call (its Transport decides TLS and dialling), so a tool can reach peers
// it serves in memory, as `league conform`'s tests on fake time do. insecure is
// ClientOptions.Insecure.
func NewClientOver(hc *http.Client, v *Validator, rec Recorder, insecure bool) *Client {
	return &Client{http: hc, validator: v, recorder: rec, insecure: insecure}
}
