package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
)

// testCA is a throwaway certificate authority and a server certificate it
// signed for 127.0.0.1, written as PEM files.
type testCA struct {
	pool              *x509.CertPool
	certFile, keyFile string
}

func newTestCA(t *testing.T) testCA {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "healthagents test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)

	ca := testCA{pool: x509.NewCertPool(), certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem")}
	ca.pool.AddCert(caCert)
	require.NoError(t, os.WriteFile(ca.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), 0o600))
	require.NoError(t, os.WriteFile(ca.keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	return ca
}

// TestServeTLS runs the binary's serve path with TLS_CERT_FILE/TLS_KEY_FILE
// and talks to it as a client that trusts only the generated CA.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	cfg, err := app.ConfigFromEnv(env(map[string]string{
		"DATA_DIR": zkkeys.DataDir(t), "HOST": "127.0.0.1", "PORT": "0",
		"TLS_CERT_FILE": ca.certFile, "TLS_KEY_FILE": ca.keyFile,
	}))
	require.NoError(t, err)
	cfg.ProofTimeout = testProofTimeout
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var logs bytes.Buffer
	go func() { done <- serve(ctx, cfg, newLogger(&logs, cfg.LogLevel), ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("server did not start")
	}
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	clientFor := func(tc *tls.Config) *http.Client {
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	}

	t.Run("ok/health over TLS, verified against the CA", func(t *testing.T) {
		c := clientFor(&tls.Config{RootCAs: ca.pool})
		resp, err := c.Get("https://" + addr + "/health")
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "healthy", body["status"])
		require.NotNil(t, resp.TLS)
		assert.GreaterOrEqual(t, resp.TLS.Version, uint16(tls.VersionTLS12))
		assert.True(t, resp.TLS.HandshakeComplete)
		assert.Equal(t, "max-age=31536000", resp.Header.Get("Strict-Transport-Security"), "HSTS over TLS")
	})
	t.Run("fail/certificate not trusted without the CA", func(t *testing.T) {
		c := clientFor(&tls.Config{RootCAs: x509.NewCertPool()})
		_, err := c.Get("https://" + addr + "/health")
		var unknown x509.UnknownAuthorityError
		require.ErrorAs(t, err, &unknown)
	})
	t.Run("fail/TLS 1.1 and older refused", func(t *testing.T) {
		for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
			c := clientFor(&tls.Config{RootCAs: ca.pool, MinVersion: v, MaxVersion: v})
			resp, err := c.Get("https://" + addr + "/health")
			if err == nil {
				resp.Body.Close()
			}
			assert.Error(t, err, "TLS version %x", v)
		}
	})
	t.Run("ok/TLS 1.2 accepted", func(t *testing.T) {
		c := clientFor(&tls.Config{RootCAs: ca.pool, MaxVersion: tls.VersionTLS12})
		resp, err := c.Get("https://" + addr + "/health")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, uint16(tls.VersionTLS12), resp.TLS.Version)
	})
	t.Run("fail/plain HTTP to the TLS port never reaches the API", func(t *testing.T) {
		resp, err := clientFor(nil).Get("http://" + addr + "/health")
		if err != nil {
			return // the connection was refused outright: also a failure
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "Go's TLS server answers a plain request with 400")
		assert.NotContains(t, string(b), "healthy")
	})
	assert.Contains(t, logs.String(), "https://"+addr)
}
