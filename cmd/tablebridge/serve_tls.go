package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// tlsFlags configure HTTPS for the local server. HTTP stays the default;
// HTTPS is what the Azure SDKs require before they send a bearer token.
type tlsFlags struct {
	cert, key  string
	selfSigned bool
}

func (f *tlsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain) file; needs -tls-key")
	fs.StringVar(&f.key, "tls-key", "", "PEM private key of -tls-cert")
	fs.BoolVar(&f.selfSigned, "tls-self-signed", false, "serve HTTPS with a self-signed certificate for 127.0.0.1, ::1 and localhost, made once under <data>/tls and printed at start so it can be trusted")
}

func (f *tlsFlags) enabled() bool { return f.cert != "" || f.key != "" || f.selfSigned }

// config loads (or, for -tls-self-signed, makes) the certificate.
func (f *tlsFlags) config(dataDir string, out io.Writer) (*tls.Config, error) {
	switch {
	case f.selfSigned && (f.cert != "" || f.key != ""):
		return nil, errors.New("serve: -tls-self-signed and -tls-cert/-tls-key exclude each other")
	case f.selfSigned:
		dir := filepath.Join(dataDir, "tls")
		cert, key, err := ensureSelfSigned(dir, time.Now())
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "self-signed certificate (trust it in your client): %s\n", cert)
		f.cert, f.key = cert, key
	case f.cert == "" || f.key == "":
		return nil, errors.New("serve: -tls-cert and -tls-key go together")
	}
	pair, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, fmt.Errorf("serve: TLS certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// selfSignedValidity is how long a made certificate lasts; it is remade
// when it has less than selfSignedRenewal left.
const (
	selfSignedValidity = 365 * 24 * time.Hour
	selfSignedRenewal  = 7 * 24 * time.Hour
)

// ensureSelfSigned returns the paths of a self-signed certificate and key
// in dir, reusing the ones already there while they are valid, so a client
// that trusted the certificate keeps trusting it across restarts. The
// certificate is its own CA (basicConstraints CA:TRUE), which is what trust
// stores (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, a Java keystore, the OS
// store) expect of a certificate added to them.
func ensureSelfSigned(dir string, now time.Time) (certPath, keyPath string, err error) {
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if pair, err := tls.LoadX509KeyPair(certPath, keyPath); err == nil && len(pair.Certificate) > 0 {
		if leaf, err := x509.ParseCertificate(pair.Certificate[0]); err == nil && now.Add(selfSignedRenewal).Before(leaf.NotAfter) {
			return certPath, keyPath, nil
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "tablebridge local (self-signed)"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(selfSignedValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return "", "", err
	}
	return certPath, keyPath, nil
}
