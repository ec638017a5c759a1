package ipfs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ipfs/go-cid"
)

// Sentinel errors; every error of a Client wraps one of them through an *Error.
var (
	// ErrUnavailable: the node could not be reached, did not answer in
	// time, or a proxy in front of it answered 502, 503 or 504.
	ErrUnavailable = errors.New("ipfs: node unavailable")
	// ErrBadResponse: the answer is not what Kubo sends (a body too large,
	// not JSON, a missing field, an unexpected status without a Kubo error).
	ErrBadResponse = errors.New("ipfs: malformed response from the node")
	// ErrAPI: the node answered with an error of its own (Kubo's
	// {"Message": ..., "Type": "error"} body, or an X-Stream-Error trailer).
	ErrAPI = errors.New("ipfs: the node reported an error")
	// ErrNotPinned: Unpin of a CID that is not pinned (recursively).
	ErrNotPinned = errors.New("ipfs: not pinned")
	// ErrCIDMismatch: the node computes another CID for the bytes, or
	// serves other bytes under the CID.
	ErrCIDMismatch = errors.New("ipfs: CID does not match the data")
	// ErrUnsupportedCID: no `ipfs add` option set produces this CID (an
	// identity or truncated multihash, an unknown hash function, a codec
	// other than raw and dag-pb).
	ErrUnsupportedCID = errors.New("ipfs: CID cannot be reproduced by ipfs add")
)

// Error is an error of one RPC command. Message is the node's own text
// (printable, at most 200 characters) when it sent one.
type Error struct {
	Op      string // the RPC command: "add", "cat", "pin/add", "pin/rm", "version"
	Kind    error  // one of the sentinels
	Status  int    // HTTP status, 0 when none was received
	Message string // the node's error text, or a description of what was wrong
	Err     error  // the underlying cause, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("ipfs: ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	b.WriteString(strings.TrimPrefix(e.Kind.Error(), "ipfs: "))
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the sentinel and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Limits on what a Client reads and waits for.
const (
	// MaxJSONResponse bounds a JSON answer (add, pin, version): one file's
	// add events and a version fit in a few hundred bytes.
	MaxJSONResponse = 64 << 10
	// maxErrorBody bounds the body of an error answer.
	maxErrorBody = 4 << 10
	// maxMessage bounds the node's error text kept in an *Error.
	maxMessage = 200
	// DefaultTimeout bounds one RPC call, connection to last byte.
	DefaultTimeout = 10 * time.Second
)

// Client is a Kubo RPC client. Use New; it is safe for concurrent use.
type Client struct {
	base     *url.URL // scheme://host, path ending in /api/v0/
	user     *url.Userinfo
	hc       *http.Client
	timeout  time.Duration
	endpoint string // base without credentials, for logs
}

// Option configures a Client.
type Option func(*Client) error

// WithHTTPClient makes the client send its requests through hc.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("ipfs: nil http.Client")
		}
		c.hc = hc
		return nil
	}
}

// WithTimeout bounds each RPC call (DefaultTimeout without it).
func WithTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return errors.New("ipfs: timeout must be positive")
		}
		c.timeout = d
		return nil
	}
}

// New returns a client of the Kubo RPC API at endpoint: a URL
// ("http://127.0.0.1:5001", credentials in the URL are sent as basic auth)
// or the multiaddr Kubo writes to $IPFS_PATH/api ("/ip4/127.0.0.1/tcp/5001").
func New(endpoint string, opts ...Option) (*Client, error) {
	u, err := parseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	c := &Client{user: u.User, timeout: DefaultTimeout}
	u.User = nil
	c.endpoint = u.String()
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v0") + "/api/v0/"
	c.base = u
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if c.hc == nil {
		c.hc = &http.Client{
			Transport: &http.Transport{
				Proxy:                 nil, // the node is reached directly
				DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
				TLSHandshakeTimeout:   5 * time.Second,
				ResponseHeaderTimeout: c.timeout,
				MaxIdleConnsPerHost:   4,
				IdleConnTimeout:       90 * time.Second,
			},
		}
	}
	if c.hc.CheckRedirect == nil {
		hc := *c.hc
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		c.hc = &hc
	}
	return c, nil
}

// Endpoint returns the node's address without credentials.
func (c *Client) Endpoint() string { return c.endpoint }

func parseEndpoint(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("ipfs: empty endpoint")
	}
	if strings.HasPrefix(s, "/") {
		return parseMultiaddr(s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, errors.New("ipfs: endpoint is neither a URL nor a multiaddr")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("ipfs: endpoint must be an http:// or https:// URL of the RPC API (e.g. http://127.0.0.1:5001)")
	}
	return u, nil
}

// parseMultiaddr reads /ip4|ip6|dns|dns4|dns6/<host>/tcp/<port>[/http|/https].
func parseMultiaddr(s string) (*url.URL, error) {
	bad := errors.New("ipfs: endpoint multiaddr must look like /ip4/127.0.0.1/tcp/5001")
	parts := strings.Split(strings.TrimPrefix(s, "/"), "/")
	if len(parts) < 4 || len(parts) > 5 || parts[2] != "tcp" {
		return nil, bad
	}
	host := parts[1]
	switch parts[0] {
	case "ip4":
		if ip := net.ParseIP(host); ip == nil || ip.To4() == nil {
			return nil, bad
		}
	case "ip6":
		if ip := net.ParseIP(host); ip == nil || ip.To4() != nil {
			return nil, bad
		}
	case "dns", "dns4", "dns6":
		if host == "" {
			return nil, bad
		}
	default:
		return nil, bad
	}
	port, err := strconv.ParseUint(parts[3], 10, 16)
	if err != nil || port == 0 {
		return nil, bad
	}
	scheme := "http"
	if len(parts) == 5 {
		switch parts[4] {
		case "http":
		case "https", "tls":
			scheme = "https"
		default:
			return nil, bad
		}
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.FormatUint(port, 10))}, nil
}

// call POSTs to the command with the query and body, and returns the
// response of a 200 answer (the caller closes it) or an *Error.
func (c *Client) call(ctx context.Context, op string, q url.Values, body io.Reader, contentType string) (*http.Response, error) {
	u := *c.base
	u.Path += op
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), body)
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrBadResponse, Message: "cannot build the request", Err: err}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.user != nil {
		pw, _ := c.user.Password()
		req.SetBasicAuth(c.user.Username(), pw)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrUnavailable, Err: transportCause(err)}
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer drainClose(resp.Body)
	e := &Error{Op: op, Status: resp.StatusCode}
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		e.Kind = ErrUnavailable
		return nil, e
	case http.StatusUnauthorized, http.StatusForbidden:
		// Kubo's API.Authorizations answers in plain text.
		e.Kind, e.Message = ErrAPI, "the node refused the request's credentials (set them in IPFS_ENDPOINT's URL)"
		return nil, e
	}
	raw, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
	var ke struct {
		Message *string
		Type    string
	}
	switch {
	case rerr != nil:
		e.Kind, e.Err = ErrUnavailable, transportCause(rerr)
	case len(raw) > maxErrorBody:
		e.Kind, e.Message = ErrBadResponse, "error body larger than 4 KiB"
	case json.Unmarshal(raw, &ke) != nil || ke.Message == nil || ke.Type != "error":
		e.Kind, e.Message = ErrBadResponse, "not a Kubo RPC error body"
	default:
		e.Kind, e.Message = ErrAPI, clean(*ke.Message)
	}
	return nil, e
}

// transportCause keeps a context error recognisable and drops the URL from
// a *url.Error (it may name the endpoint's credentials-free path only, but
// the op already says which call failed).
func transportCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// drainClose reads a little of what is left so the connection can be
// reused, then closes.
func drainClose(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxErrorBody))
	_ = body.Close()
}

// clean keeps the node's text printable and short.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, s)
	if r := []rune(s); len(r) > maxMessage {
		s = string(r[:maxMessage]) + "…"
	}
	return strings.TrimSpace(s)
}

// readJSON reads a bounded 200 body, checks the stream-error trailer and
// decodes it into one value per JSON object in the body (Kubo streams
// newline-separated objects), calling each.
func readJSON(op string, resp *http.Response, each func(dec *json.Decoder) error) error {
	defer drainClose(resp.Body)
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxJSONResponse+1))
	if err != nil {
		return &Error{Op: op, Kind: ErrUnavailable, Status: resp.StatusCode, Err: transportCause(err)}
	}
	if len(raw) > MaxJSONResponse {
		return &Error{Op: op, Kind: ErrBadResponse, Status: resp.StatusCode, Message: "response larger than 64 KiB"}
	}
	if msg := resp.Trailer.Get("X-Stream-Error"); msg != "" {
		return &Error{Op: op, Kind: ErrAPI, Status: resp.StatusCode, Message: clean(msg)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	n := 0
	for {
		err := each(dec)
		if errors.Is(err, io.EOF) && n > 0 {
			return nil
		}
		if err != nil {
			return &Error{Op: op, Kind: ErrBadResponse, Status: resp.StatusCode, Message: "not the JSON Kubo sends", Err: err}
		}
		n++
	}
}

// AddOptions are the `ipfs add` options that decide the CID.
type AddOptions struct {
	CIDVersion int    // 0 or 1
	Hash       string // multihash function name, e.g. "sha2-256"
	RawLeaves  bool   // leaves as raw blocks (else UnixFS dag-pb nodes)
	Chunker    string // e.g. "size-262144"
	Pin        bool   // pin the result recursively
	OnlyHash   bool   // compute the CID only, write nothing
}

func (o AddOptions) query() url.Values {
	q := url.Values{}
	q.Set("cid-version", strconv.Itoa(o.CIDVersion))
	q.Set("hash", o.Hash)
	q.Set("raw-leaves", strconv.FormatBool(o.RawLeaves))
	q.Set("chunker", o.Chunker)
	q.Set("pin", strconv.FormatBool(o.Pin))
	q.Set("only-hash", strconv.FormatBool(o.OnlyHash))
	// The rest of what shapes the DAG is fixed to kubo's defaults, whatever
	// the node's Import.* configuration says.
	q.Set("trickle", "false")
	q.Set("max-file-links", strconv.Itoa(MaxFileLinks))
	q.Set("inline", "false")
	q.Set("wrap-with-directory", "false")
	q.Set("progress", "false")
	return q
}

// Add sends data to the node as one file and returns the CID the node
// computed for it.
func (c *Client) Add(ctx context.Context, data []byte, o AddOptions) (cid.Cid, error) {
	const op = "add"
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("file", "ciphertext")
	if err == nil {
		_, err = part.Write(data)
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		return cid.Undef, &Error{Op: op, Kind: ErrBadResponse, Message: "cannot build the request", Err: err}
	}
	resp, err := c.call(ctx, op, o.query(), &body, mw.FormDataContentType())
	if err != nil {
		return cid.Undef, err
	}
	var root string
	events := 0
	err = readJSON(op, resp, func(dec *json.Decoder) error {
		var ev struct {
			Hash string
		}
		if err := dec.Decode(&ev); err != nil {
			return err
		}
		if events++; events > 16 {
			return errors.New("more add events than one file gives")
		}
		if ev.Hash != "" {
			root = ev.Hash
		}
		return nil
	})
	if err != nil {
		return cid.Undef, err
	}
	if root == "" {
		return cid.Undef, &Error{Op: op, Kind: ErrBadResponse, Status: resp.StatusCode, Message: "no Hash in the answer"}
	}
	got, err := cid.Decode(root)
	if err != nil {
		return cid.Undef, &Error{Op: op, Kind: ErrBadResponse, Status: resp.StatusCode, Message: "Hash is not a CID", Err: err}
	}
	return got, nil
}

// Cat returns the bytes of the file under id, which must be at most max
// bytes long (a longer file is ErrCIDMismatch: it is not what was expected).
func (c *Client) Cat(ctx context.Context, id cid.Cid, max int) ([]byte, error) {
	const op = "cat"
	if max < 0 {
		max = 0
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	q := url.Values{"arg": {id.String()}, "length": {strconv.Itoa(max + 1)}, "progress": {"false"}}
	resp, err := c.call(ctx, op, q, nil, "")
	if err != nil {
		return nil, err
	}
	defer drainClose(resp.Body)
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrUnavailable, Status: resp.StatusCode, Err: transportCause(err)}
	}
	if len(data) > max {
		return nil, &Error{Op: op, Kind: ErrCIDMismatch, Status: resp.StatusCode, Message: fmt.Sprintf("the node holds more than %d bytes under the CID", max)}
	}
	// The trailer is only known once the body has been read to its end.
	if _, err := resp.Body.Read(make([]byte, 1)); errors.Is(err, io.EOF) {
		if msg := resp.Trailer.Get("X-Stream-Error"); msg != "" {
			return nil, &Error{Op: op, Kind: ErrAPI, Status: resp.StatusCode, Message: clean(msg)}
		}
	}
	return data, nil
}

// Pin pins id recursively (it and every block below it).
func (c *Client) Pin(ctx context.Context, id cid.Cid) error {
	return c.pinCall(ctx, "pin/add", id)
}

// Unpin removes the recursive pin of id; ErrNotPinned when there is none.
func (c *Client) Unpin(ctx context.Context, id cid.Cid) error {
	err := c.pinCall(ctx, "pin/rm", id)
	var e *Error
	if errors.As(err, &e) && e.Kind == ErrAPI && strings.Contains(e.Message, "not pinned") {
		e.Kind = ErrNotPinned
	}
	return err
}

func (c *Client) pinCall(ctx context.Context, op string, id cid.Cid) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.call(ctx, op, url.Values{"arg": {id.String()}, "recursive": {"true"}}, nil, "")
	if err != nil {
		return err
	}
	found := false
	err = readJSON(op, resp, func(dec *json.Decoder) error {
		var out struct {
			Pins []string
		}
		if err := dec.Decode(&out); err != nil {
			return err
		}
		for _, p := range out.Pins {
			if pc, err := cid.Decode(p); err == nil && pc.Hash().String() == id.Hash().String() {
				found = true
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return &Error{Op: op, Kind: ErrBadResponse, Status: resp.StatusCode, Message: "the answer does not list the CID"}
	}
	return nil
}

// Version returns the node's version ("0.38.0").
func (c *Client) Version(ctx context.Context) (string, error) {
	const op = "version"
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.call(ctx, op, nil, nil, "")
	if err != nil {
		return "", err
	}
	var v string
	err = readJSON(op, resp, func(dec *json.Decoder) error {
		var out struct {
			Version string
		}
		if err := dec.Decode(&out); err != nil {
			return err
		}
		v = out.Version
		return nil
	})
	if err != nil {
		return "", err
	}
	if v == "" {
		return "", &Error{Op: op, Kind: ErrBadResponse, Status: resp.StatusCode, Message: "no Version in the answer"}
	}
	return clean(v), nil
}

// Ping checks that the node answers its version call: a health check.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.Version(ctx)
	return err
}
